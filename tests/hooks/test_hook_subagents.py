"""``SubagentStart`` / ``SubagentStop`` fire for delegated agents with Claude Code's input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest
from lifecycle_support import hook, records

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.kernel import load_config

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


async def _delegate(tmp_path: Path, hooks: dict[str, Any], child: list[Reply | str]) -> Any:
    lead = ScriptedProvider(
        [Reply(tool_calls=(ScriptedCall("delegate_reviewer", {"prompt": "check"}, "d1"),)), "ok"]
    )
    config = {
        "providers": {"lead_llm": {"kind": "scripted"}, "child_llm": {"kind": "scripted"}},
        "agents": {
            "lead": {"provider": "lead_llm", "model": "m", "subagents": ["reviewer"]},
            "reviewer": {"provider": "child_llm", "model": "m", "description": "Reviews."},
        },
        "permissions": {"workspace": str(tmp_path), "mode": "bypass"},
        "hooks": hooks,
    }
    overrides = [
        ("providers", "lead_llm", lead),
        ("providers", "child_llm", ScriptedProvider(child)),
    ]
    loaded = attrs.evolve(load_config(config), base_dir=tmp_path)
    async with agentrig.open_runtime(loaded, overrides=overrides, environ={}) as rt:
        parent = rt.agent("lead")
        result = await parent.run("go")
        return parent.session_id, result


async def test_the_events_fire_around_the_child_with_its_id_and_type(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    hooks = {
        name: [hook(log)] for name in ("SessionStart", "SubagentStart", "Stop", "SubagentStop")
    }
    parent_session, result = await _delegate(tmp_path, hooks, ["fine"])
    assert result.value == "ok"
    seen = [r["input"] for r in records(log)]
    names = [e["hook_event_name"] for e in seen]
    assert names == ["SessionStart", "SubagentStart", "SubagentStop", "Stop"]
    start, stop = seen[1], seen[2]
    for event in (start, stop):
        assert event["session_id"] == parent_session  # Claude Code: the main session
        assert event["agent_type"] == "reviewer"
        assert event["agent_id"].startswith("reviewer-")
    assert stop["stop_hook_active"] is False
    assert stop["last_assistant_message"] == "fine"
    assert Path(stop["agent_transcript_path"]).name.endswith(".jsonl")
    assert Path(stop["agent_transcript_path"]) != Path(stop["transcript_path"])


async def test_a_subagent_stop_block_keeps_the_child_going(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    block = {"decision": "block", "reason": "also check the tests"}
    hooks = {"SubagentStop": [hook(log, answer=block, once=True, matcher="^reviewer$")]}
    _, result = await _delegate(tmp_path, hooks, ["fine", "tests fine too"])
    assert result.value == "ok"
    stops = [r["input"] for r in records(log)]
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    assert stops[-1]["last_assistant_message"] == "tests fine too"
