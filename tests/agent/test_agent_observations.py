"""Out-of-band observations: one per attempted model call, and per inbox message."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.ids import AgentId
from agentrig.lifecycle import Observation, SessionStart
from agentrig.llm import Usage, error_from_status
from agentrig.tools import tool


@tool(risk="inspect")
def clock() -> str:
    """Tell the time."""
    return "noon"


@tool(risk="inspect")
def explode() -> str:
    """Always fails."""
    raise RuntimeError("kaboom")


class Recorder:
    def __init__(self) -> None:
        self.seen: list[Observation] = []

    @agentrig.hookimpl
    def observe(self, payload: Observation) -> None:
        self.seen.append(payload)


@contextlib.asynccontextmanager
async def _runtime(
    script: list[Any], recorder: Recorder, tools: tuple[str, ...] = ("clock",)
) -> AsyncIterator[agentrig.Runtime]:
    memory = agentrig.MemorySource()
    memory.add("tools", "clock", clock)
    memory.add("tools", "explode", explode)
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m", "tools": list(tools)}},
        "permissions": {"mode": "bypass"},
    }
    async with agentrig.open_runtime(
        config,
        memory=memory,
        overrides=[("providers", "local", ScriptedProvider(script))],
        environ={},
        plugins=[("recorder", recorder)],
    ) as rt:
        yield rt


async def _run(script: list[Any], recorder: Recorder) -> None:
    async with _runtime(script, recorder) as rt:
        agent = rt.agent(AgentId("a"))
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


# ---- what a metering, audit or tracing plugin needs ------------------------------------------


async def _observed(
    script: list[Any], prompt: str = "what time is it?", tools: tuple[str, ...] = ("clock",)
) -> tuple[Recorder, Any]:
    """Run one prompt with a recorder attached; returns it and the run's result (or error)."""
    recorder = Recorder()
    async with _runtime(script, recorder, tools) as rt:
        try:
            outcome: Any = await rt.agent(AgentId("a")).run(prompt)
        except agentrig.AgentrigError as exc:
            outcome = exc
    return recorder, outcome


def _of(recorder: Recorder, kind: str) -> list[dict[str, Any]]:
    return [dict(o.data) for o in recorder.seen if o.kind == kind]


USAGE_1 = Usage.of(prompt=100, completion=10)
USAGE_2 = Usage.of(prompt=150, completion=20)


@pytest.mark.anyio
async def test_a_model_call_carries_ids_model_provider_usage_and_timings() -> None:
    recorder, result = await _observed(
        [
            Reply(tool_calls=(ScriptedCall("clock"),), usage=USAGE_1),
            Reply(text="It is noon.", usage=USAGE_2),
        ]
    )
    first, second = _of(recorder, "model_call")
    ids = {
        "session_id": result.invocation.session_id,
        "run_id": result.invocation.run_id,
        "turn": result.invocation.turn,
    }
    for call in (first, second):
        assert {k: call[k] for k in ids} == ids
        assert (call["provider"], call["provider_kind"], call["model"]) == (
            "local",
            "scripted",
            "m",
        )
        assert call["outcome"] == "success"
        assert call["attempt"] == 1
        assert call["duration_ms"] >= call["time_to_first_chunk_ms"] >= 0
        assert call["ended_at"] >= call["started_at"]
        assert call["error_type"] is None
    assert (first["step"], second["step"]) == (1, 2)
    assert (first["usage"], second["usage"]) == (USAGE_1, USAGE_2)
    assert (first["stop_reason"], second["stop_reason"]) == ("tool_calls", "end")


@pytest.mark.anyio
async def test_a_failed_model_call_names_its_error_type_and_code() -> None:
    failure = error_from_status(429, {"error": {"message": "slow down"}}, {}, provider="scripted")
    recorder, error = await _observed([Reply(error=failure)])
    (call,) = _of(recorder, "model_call")
    assert call["outcome"] == "failure"
    assert call["error_type"] == type(failure).__name__
    assert call["error_code"] == error.code
    assert call["usage"] is None  # nothing reported, nothing fabricated


@pytest.mark.anyio
async def test_each_tool_call_is_observed_when_it_finished() -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("clock"), ScriptedCall("explode"), ScriptedCall("nope"))),
        Reply(text="done"),
    ]
    recorder, result = await _observed(script, tools=("clock", "explode"))
    calls = {c["tool"]: c for c in _of(recorder, "tool_call")}
    assert set(calls) == {"clock", "explode", "nope"}
    assert (calls["clock"]["status"], calls["clock"]["executed"]) == ("ok", True)
    assert (calls["explode"]["status"], calls["explode"]["error_type"]) == ("error", "RuntimeError")
    assert (calls["nope"]["status"], calls["nope"]["executed"]) == ("skipped", False)
    for name in ("clock", "explode"):
        call = calls[name]
        assert call["run_id"] == result.invocation.run_id
        assert (call["turn"], call["step"]) == (1, 1)
        assert call["invocation_id"]
        assert call["call_id"]
        assert call["duration_ms"] >= 0
        assert call["started_at"] > 0


@pytest.mark.anyio
async def test_a_finished_turn_carries_the_turns_usage() -> None:
    recorder, result = await _observed(
        [
            Reply(tool_calls=(ScriptedCall("clock"),), usage=USAGE_1),
            Reply(text="It is noon.", usage=USAGE_2),
        ]
    )
    (turn,) = _of(recorder, "turn")
    assert turn["usage"] == USAGE_1.add(USAGE_2) == result.invocation.usage
    assert (turn["reason"], turn["trigger"], turn["rounds"], turn["tool_calls"]) == (
        "completed",
        "prompt",
        2,
        1,
    )
    assert (turn["run_id"], turn["model"]) == (result.invocation.run_id, "m")
    assert turn["duration_ms"] >= 0
    assert turn["error_type"] is None
    # the turn is observed after everything it contains
    kinds = [o.kind for o in recorder.seen if o.kind in {"model_call", "tool_call", "turn"}]
    assert kinds == ["model_call", "tool_call", "model_call", "turn"]


@pytest.mark.anyio
async def test_a_failed_turn_is_observed_with_its_error() -> None:
    failure = error_from_status(500, {"error": {"message": "boom"}}, {}, provider="scripted")
    recorder, error = await _observed([Reply(error=failure)])
    (turn,) = _of(recorder, "turn")
    assert (turn["reason"], turn["error_type"], turn["error_code"]) == (
        "failed",
        type(failure).__name__,
        error.code,
    )
    assert turn["usage"] is None


@pytest.mark.anyio
async def test_a_direct_tool_call_is_observed_too() -> None:
    recorder = Recorder()
    memory = agentrig.MemorySource()
    memory.add("tools", "clock", clock)
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m", "tools": ["clock"]}},
        "permissions": {"mode": "bypass"},
    }
    async with agentrig.open_runtime(
        config, memory=memory, environ={}, plugins=[("recorder", recorder)]
    ) as rt:
        agent = rt.agent(AgentId("a"))
        result = await agent.call_tool("clock", {})
    (call,) = _of(recorder, "tool_call")
    assert (call["tool"], call["status"], call["session_id"]) == ("clock", "ok", agent.session_id)
    assert call["invocation_id"] == result.invocation.invocation_id


@pytest.mark.anyio
async def test_session_start_carries_the_runtime_and_the_agent() -> None:
    seen: list[SessionStart] = []

    class Listener:
        @agentrig.hookimpl
        def session_start(self, payload: SessionStart) -> None:
            seen.append(payload)

    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m"}},
    }
    async with agentrig.open_runtime(config, environ={}, plugins=[("l", Listener())]) as rt:
        agent = rt.agent(AgentId("a"))
        (payload,) = seen
        assert payload.runtime is rt
        assert payload.agent is agent


@pytest.mark.anyio
async def test_the_metering_plugin_of_the_hooks_docs_counts_tokens() -> None:
    docs = Path(__file__).parents[2] / "docs" / "hooks.md"
    text = docs.read_text(encoding="utf-8")
    sample = text.split("A metering plugin, whole:", 1)[1].split("```python\n", 1)[1]
    namespace: dict[str, Any] = {}
    exec(sample.split("```", 1)[0], namespace)
    meter = namespace["Meter"]()
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m"}},
    }
    provider = ScriptedProvider([Reply(text="hi", usage=USAGE_1), Reply(text="again")])
    async with agentrig.open_runtime(
        config, overrides=[("providers", "local", provider)], environ={}, plugins=[("m", meter)]
    ) as rt:
        await rt.agent(AgentId("a")).run("one")
        await rt.agent(AgentId("a")).run("two")  # no usage reported: nothing counted
    assert meter.tokens == {"a": USAGE_1.total}


@pytest.mark.anyio
async def test_loop_observations_carry_the_agents_name_else_its_id() -> None:
    recorder = Recorder()
    async with _runtime([Reply(text="one"), Reply(text="two")], recorder) as rt:
        await rt.agent(AgentId("a")).run("hi")
        named = await rt.agents.create(AgentId("a.req-2"), provider="local", model="m", name="a")
        await named.run("hi")
    loop = [o for o in recorder.seen if o.kind in ("model_call", "turn")]
    assert {(o.agent_id, o.data["agent_name"]) for o in loop} == {("a", "a"), ("a.req-2", "a")}


# ---- exactly the documented observation ------------------------------------------------------
# Each kind's keys in the documented order.

IDS = ["session_id", "agent_name", "run_id", "turn", "step"]
# docs/hooks.md, "observe": every field of each kind, in the order a listener sees them
KEYS = {
    "model_call": [
        *IDS,
        "round",
        "attempt",
        "provider",
        "provider_kind",
        "model",
        "response_model",
        "outcome",
        "stop_reason",
        "usage",
        "started_at",
        "ended_at",
        "duration_ms",
        "time_to_first_chunk_ms",
        "error_type",
        "error_code",
        "response_id",
        "max_tokens",
        "temperature",
        "reasoning",
    ],
    "tool_call": [
        *IDS,
        "call_id",
        "invocation_id",
        "tool",
        "status",
        "executed",
        "started_at",
        "duration_ms",
        "error_type",
    ],
    "turn": [
        *IDS,
        "trigger",
        "reason",
        "rounds",
        "tool_calls",
        "model",
        "usage",
        "started_at",
        "duration_ms",
        "error_type",
        "error_code",
        "origin",
        "parent_agent",
        "parent_session",
    ],
    "permission": ["session_id", "tool", "call_id", "allowed", "reason"],
}
# agent.call_tool(): outside a turn, a tool call carries the session id only
DIRECT_TOOL_CALL = ["session_id", *KEYS["tool_call"][len(IDS) :]]


async def _observe_a_turn_and_a_direct_call(recorder: Recorder) -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("clock"), ScriptedCall("nope"))),
        Reply(text="It is noon."),
    ]
    async with _runtime(script, recorder) as rt:
        agent = rt.agent(AgentId("a"))
        with contextlib.suppress(agentrig.AgentrigError):
            await agent.run("what time is it?")
        await agent.call_tool("clock", {})


@pytest.mark.anyio
async def test_a_listener_receives_each_kind_with_exactly_the_documented_keys() -> None:
    recorder = Recorder()
    await _observe_a_turn_and_a_direct_call(recorder)
    loop = [o for o in recorder.seen if not o.kind.startswith("inbox.")]
    assert [o.kind for o in loop] == [
        "model_call",
        "permission",
        "tool_call",
        "tool_call",
        "model_call",
        "turn",
        "permission",
        "tool_call",
    ]
    *in_turn, direct = loop
    for observation in in_turn:
        assert list(observation.data) == KEYS[observation.kind], observation.kind
    assert list(direct.data) == DIRECT_TOOL_CALL
    for observation in loop:
        assert type(observation) is Observation
        assert type(observation.data) is dict
        assert observation.agent_id == "a"
        rebuilt: Any = Observation(observation.kind, observation.agent_id, dict(observation.data))
        assert observation == rebuilt
