"""Failures are facts of the log and the result, not words of the model.

A failed model call is a ``model/error`` event (persisted, shown, seen by listeners) that the
projection to messages skips; tool calls that did not run are listed on ``RunResult.refused``.
"""

from __future__ import annotations

from typing import Any

import pytest
from agentloop_support import EnvFactory, check_invariant, clock, echo, events, request_texts

import agentrig
from agentrig.agent import FORCED_SUMMARY_FALLBACK, RefusedCall
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.ids import CallId
from agentrig.lifecycle import Observation
from agentrig.llm import ServerError
from agentrig.session import ModelError, SessionEvent, dump_event, parse_event

pytestmark = pytest.mark.anyio


class Watch:
    """Records the loop's ``model_call`` observations."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    @agentrig.hookimpl
    def observe(self, payload: Observation) -> None:
        if payload.kind == "model_call":
            self.calls.append(dict(payload.data))


async def test_a_failed_call_is_an_event_the_next_request_does_not_carry(
    env: EnvFactory,
) -> None:
    watch = Watch()
    script: list[Reply | str] = [Reply(error=ServerError("upstream down")), "fine now"]
    async with env(script, plugins={"watch": watch}) as e:
        seen: list[SessionEvent] = []
        e.agent.session.subscribe(seen.append)
        with pytest.raises(ServerError):
            await e.agent.run("first")
        assert (await e.agent.run("second")).value == "fine now"
        # the second request holds both prompts and no word about the failure
        assert request_texts(e.provider.requests[1]) == ["user:first", "user:second"]
        (failed,) = events(e.agent, "model/error")
        assert isinstance(failed, ModelError)
        assert failed.code == ServerError("x").code
        assert failed.category == "provider"
        assert "upstream down" in failed.message
        # listeners: a session subscriber gets the event, observers the failed model call
        assert [s.data for s in seen if s.type == "model/error"] == [failed]
        assert [(c["outcome"], c["error_code"]) for c in watch.calls[:1]] == [
            ("failure", failed.code)
        ]
        check_invariant(e.agent)


async def test_a_retried_attempt_logs_no_error_and_the_final_one_counts_attempts(
    env: EnvFactory,
) -> None:
    class RetryOnce:
        @agentrig.hookimpl
        async def request_error(self, payload: Any, next: Any) -> Any:
            return agentrig.Retry() if payload.attempt == 1 else await next(payload)

    script: list[Reply | str] = [Reply(error=ServerError("a")), Reply(error=ServerError("b"))]
    async with env(script, plugins={"retry": RetryOnce()}) as e:
        with pytest.raises(ServerError):
            await e.agent.run("hi")
        (failed,) = events(e.agent, "model/error")
        assert failed.attempt == 2
        assert "b" in failed.message


def test_the_event_round_trips_through_the_stored_form() -> None:
    event = SessionEvent(
        seq=3,
        time=1.0,
        data=ModelError(
            provider="p",
            model="m",
            attempt=2,
            code="provider.server",
            category="provider",
            message="boom",
        ),
    )
    assert parse_event(dump_event(event)) == event


# ---- refused calls on the result -----------------------------------------------------------


async def test_unknown_and_denied_and_invalid_calls_are_on_the_result(env: EnvFactory) -> None:
    script: list[Reply | str] = [
        Reply(
            tool_calls=(
                ScriptedCall("nosuch", id="c1"),
                ScriptedCall("echo", {"text": "hi"}, id="c2"),
                ScriptedCall("clock", {"bogus": 1}, id="c3"),
                ScriptedCall("clock", id="c4"),
            )
        ),
        "done",
    ]
    config = {"permissions": {"mode": "default", "deny": ["echo"], "allow": ["clock"]}}
    async with env(script, tools=[echo, clock], config=config) as e:
        result = await e.agent.run("go")
        assert result.value == "done"
        codes = [(r.call_id, r.tool, r.code) for r in result.refused]
        assert codes == [
            ("c1", "nosuch", "unknown_tool"),
            ("c2", "echo", "denied"),
            ("c3", "clock", "invalid_input"),
        ]
        # the reason is what the model was told for the call
        told = {m.call_id: m.text for m in e.provider.requests[1].messages if m.role == "tool"}
        assert all(r.reason == told[r.call_id] for r in result.refused)
        check_invariant(e.agent)


async def test_calls_settled_without_running_are_on_the_result(env: EnvFactory) -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("clock", id="c1"),)),
        Reply(tool_calls=(ScriptedCall("clock", id="c2"),)),
    ]
    async with env(script, tools=[clock], max_rounds=1) as e:
        result = await e.agent.run("go")
        assert result.value == FORCED_SUMMARY_FALLBACK
        # the forced summary's own call never runs
        assert result.refused == (
            RefusedCall(
                CallId("c2"),
                "clock",
                "not_executed",
                "not executed: the final answer was requested without tools",
            ),
        )


async def test_a_clean_run_refuses_nothing(env: EnvFactory) -> None:
    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("clock"),)), "done"]
    async with env(script, tools=[clock]) as e:
        assert (await e.agent.run("go")).refused == ()
