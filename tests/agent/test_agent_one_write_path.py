"""Every event is written one way, with or without a session store (issue 27).

The loop used to keep its own events unbuilt and unvalidated when no store was configured,
and to validate them when one was: tests without a store ran another path than a
deployment.  Now each payload is validated when the loop builds it and appended the same
way; only the store's write follows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agentloop_support import EnvFactory, echo, texts

from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.session import SESSION_EVENTS, SessionEvent

pytestmark = pytest.mark.anyio


def written(directory: Path) -> bool:
    return any(directory.iterdir())


def shape(events: list[SessionEvent]) -> list[tuple[str, frozenset[str]]]:
    return [(e.type, frozenset(e.data.model_fields_set)) for e in events]


async def test_a_run_logs_the_same_events_with_and_without_a_store(
    env: EnvFactory, tmp_path: Path
) -> None:
    script: list[Reply | str] = [
        Reply(text="looking", tool_calls=(ScriptedCall("echo", {"text": "x"}),)),
        "done",
    ]
    disk = {"session_stores": {"disk": {"kind": "jsonl", "options": {"directory": str(tmp_path)}}}}
    logs: list[list[SessionEvent]] = []
    histories: list[list[str]] = []
    for config, settings in ((None, {}), (disk, {"session_store": "disk"})):
        given: dict[str, Any] = dict(settings)
        async with env(list(script), tools=[echo], config=config, **given) as e:
            result = await e.agent.run("go")
            assert result.value == "done"
            logs.append(list(e.agent.session.events))
            histories.append(texts(list(e.agent.session.derive_messages())))
    without, stored = logs
    assert written(tmp_path)  # the second run did write to its store
    assert shape(without) == shape(stored)
    assert histories[0] == histories[1]
    for event in without:  # what was logged without a store parses back as itself
        assert SESSION_EVENTS.parse(event.data.model_dump(mode="json")) == event.data
