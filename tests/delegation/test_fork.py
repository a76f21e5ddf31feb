"""Fork: a new session that starts as a copy of another session's log up to an event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.agent import Lineage
from agentrig.builtins._scripted import ScriptedProvider
from agentrig.errors import UnknownIdError
from agentrig.llm import UserMessage
from agentrig.session import SessionLineage
from agentrig.testing import Overrides, RuntimeFactory

pytestmark = pytest.mark.anyio


def _config(tmp_path: Path) -> dict[str, Any]:
    return {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m", "session_store": "disk"}},
        "session_stores": {"disk": {"kind": "jsonl", "options": {"directory": str(tmp_path)}}},
    }


def _users(messages: Any) -> list[str]:
    return [m.text for m in messages if isinstance(m, UserMessage)]


async def test_a_fork_sees_the_history_up_to_its_point_and_leaves_the_source_alone(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides, tmp_path: Path
) -> None:
    llm = ScriptedProvider(["one", "two", "forked answer", "resumed"])
    agentrig_overrides.set("providers", "local", llm)
    async with agentrig_runtime(_config(tmp_path)) as rt:
        source = rt.agent("a")
        await source.run("first")
        point = next(e.seq for e in source.session.events if e.type == "turn/end")
        await source.run("second")
        size = len(source.session)
        fork = await rt.agents.fork(
            source.session_id, agent_id="b", up_to=point, config=source.config
        )
        assert fork.session_id != source.session_id
        assert [e.seq for e in fork.session.events][:point] == list(range(1, point + 1))
        assert fork.lineage == Lineage(
            origin="forked", parent_session=source.session_id, fork_point=point
        )
        result = await fork.run("third")
        assert result.value == "forked answer"
        assert _users(llm.requests[-1].messages) == ["first", "third"]
        assert len(source.session) == size
        await rt.agents.dispose("b")
        stored = await rt.agents.resume(fork.session_id, agent_id="c", config=fork.config)
        assert stored.lineage == fork.lineage
        assert isinstance(stored.session.events[point].data, SessionLineage)


async def test_a_fork_point_the_source_does_not_have_is_refused(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides, tmp_path: Path
) -> None:
    agentrig_overrides.set("providers", "local", ScriptedProvider(["one"]))
    async with agentrig_runtime(_config(tmp_path)) as rt:
        source = rt.agent("a")
        await source.run("first")
        with pytest.raises(UnknownIdError, match="has no event 999"):
            await rt.agents.fork(source.session_id, agent_id="b", up_to=999, config=source.config)
        assert rt.agents.ids() == ("a",)
