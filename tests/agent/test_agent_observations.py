"""Out-of-band observations: one per attempted model call, and per inbox message."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

import agentrig
from agentrig.builtins.scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.kernel.payloads import Observation
from agentrig.llm import error_from_status
from agentrig.tools import tool


@tool(risk="inspect")
def clock() -> str:
    """Tell the time."""
    return "noon"


class Recorder:
    def __init__(self) -> None:
        self.seen: list[Observation] = []

    @agentrig.hookimpl
    def observe(self, payload: Observation) -> None:
        self.seen.append(payload)


async def _run(script: list[Any], recorder: Recorder) -> None:
    memory = agentrig.MemorySource()
    memory.add("tools", "clock", clock)
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m", "tools": ["clock"]}},
        "permissions": {"mode": "bypass"},
    }
    async with agentrig.open_runtime(
        config,
        memory=memory,
        overrides=[("providers", "local", ScriptedProvider(script))],
        environ={},
        plugins=[("recorder", recorder)],
    ) as rt:
        agent = rt.agent("a")
        with contextlib.suppress(agentrig.AgentrigError):
            await agent.run("what time is it?")
        agent.inject("context for later")
        agent.inbox.clear()


@pytest.mark.anyio
async def test_each_model_call_is_observed_once_without_content() -> None:
    recorder = Recorder()
    await _run([Reply(tool_calls=(ScriptedCall("clock"),)), Reply(text="It is noon.")], recorder)
    calls = [o for o in recorder.seen if o.kind == "model_call"]
    assert [(c.data["round"], c.data["outcome"]) for c in calls] == [(1, "success"), (2, "success")]
    for call in calls:
        assert call.data["ended_at"] >= call.data["started_at"]
        assert "It is noon." not in str(call.data)  # content-free


@pytest.mark.anyio
async def test_a_failed_call_is_observed_as_a_failure() -> None:
    recorder = Recorder()
    failure = error_from_status(500, {"error": {"message": "boom"}}, {}, provider="scripted")
    await _run([Reply(error=failure)], recorder)
    calls = [o for o in recorder.seen if o.kind == "model_call"]
    assert [c.data["outcome"] for c in calls] == ["failure"]


@pytest.mark.anyio
async def test_inbox_messages_are_observed_inserted_claimed_and_discarded() -> None:
    recorder = Recorder()
    await _run([Reply(text="It is noon.")], recorder)
    kinds = [o.kind for o in recorder.seen if o.kind.startswith("inbox.")]
    assert kinds == ["inbox.inserted", "inbox.discarded"]
