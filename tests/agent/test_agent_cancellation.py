"""Cancellation: one signal per run reaches provider calls and tools; an aborted run ends
``interrupted`` with its partial text committed; a pre-cancelled run fails at once; an
abandoned stream cancels its turn; and the one abort classifier."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest
import trio
from agentloop_support import (
    EnvFactory,
    Gate,
    WatchedProvider,
    check_invariant,
    event_types,
    events,
    texts,
)

import agentrig
from agentrig import AbortError, CancelSignal, is_abort
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.llm import AssistantMessage, TextDelta
from agentrig.session import INTERRUPTED_NOTE
from agentrig.tools import ToolContext, tool

pytestmark = pytest.mark.anyio


async def test_signal_reaches_the_provider_call(env: EnvFactory) -> None:
    async with env([Reply(text="never arrives", delay=3600)]) as e:
        signal = CancelSignal()
        results: list[Any] = []

        async def run() -> None:
            results.append(await e.agent.run("hi", signal=signal))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await e.provider.received(1)
            signal.cancel("user pressed stop")
        result = results[0]
        assert result.interrupted
        assert result.value == ""
        # always committed, even with empty content
        message = events(e.agent, "assistant/message")[-1].message
        assert message.interrupted is True
        assert events(e.agent, "turn/end")[-1].reason == "interrupted"
        assert e.agent.status == "idle"
        check_invariant(e.agent)


async def test_cancel_through_the_agent_reaches_the_provider_call(env: EnvFactory) -> None:
    async with env([Reply(text="never arrives", delay=3600)]) as e:
        results: list[Any] = []

        async def run() -> None:
            results.append(await e.agent.run("hi"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await e.provider.received(1)
            assert e.agent.cancel("stop") is True
        assert results[0].interrupted


async def test_aborted_stream_commits_the_partial_text(env: EnvFactory) -> None:
    reply = Reply(text="Hello there, general Kenobi", chunk_size=6)
    async with env([reply]) as e:
        stream = e.agent.stream("hi")
        received: list[str] = []
        async for chunk in stream:
            if isinstance(chunk, TextDelta):
                received.append(chunk.text)
                stream.signal.cancel("enough")
        result = stream.result
        assert result.interrupted
        assert received[0] == "Hello "
        assert result.value.startswith("Hello ")
        assert result.value != reply.text
        committed = events(e.agent, "assistant/message")[-1].message
        assert committed.interrupted is True
        assert committed.text == result.value
        # the projection annotates the interruption for the model
        last = e.agent.session.derive_messages()[-1]
        assert isinstance(last, AssistantMessage)
        assert last.text == result.value + INTERRUPTED_NOTE
        assert events(e.agent, "turn/end")[-1].reason == "interrupted"
        check_invariant(e.agent)


async def test_interrupted_history_is_annotated_in_the_next_request(env: EnvFactory) -> None:
    async with env([Reply(text="cut short", chunk_size=4), "next"]) as e:
        stream = e.agent.stream("one")
        async for _chunk in stream:
            stream.signal.cancel()
        await e.agent.run("two")
        previous = next(m for m in e.provider.requests[1].messages if m.role == "assistant")
        assert previous.text.endswith(INTERRUPTED_NOTE)


async def test_running_tool_records_its_result_and_queued_calls_are_not_executed(
    env: EnvFactory,
) -> None:
    gate = Gate()
    ran: list[str] = []

    @tool
    async def sleeper(ctx: ToolContext) -> str:
        """Sleep until cancelled."""
        with ctx.signal.scope():
            await anyio.sleep(3600)
        ran.append("sleeper")
        return f"woke: {ctx.signal.reason}"

    @tool
    def later() -> str:
        """Never reached."""
        ran.append("later")
        return "ran"

    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("gate"), ScriptedCall("sleeper"), ScriptedCall("later"))),
        "unused",
    ]
    async with env(script, tools=[gate.tool, sleeper, later]) as e:
        results: list[Any] = []

        async def run() -> None:
            results.append(await e.agent.run("go"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await gate.entered.wait()
            e.agent.cancel("stop now")
        assert results[0].interrupted
        outcome = {ev.message.name: ev.message for ev in events(e.agent, "tool/result")}
        # the running call observed the signal and recorded its own result
        assert outcome["gate"].status == "ok"
        assert outcome["gate"].text == "stopped: stop now"
        # the calls queued behind it were never started
        for name in ("sleeper", "later"):
            assert outcome[name].status == "not_executed"
            assert "interrupted" in outcome[name].text
        assert ran == []
        assert [c.call.name for c in events(e.agent, "tool/call")] == ["gate"]
        # no further step was opened after the abort
        assert len(e.provider.requests) == 1
        assert len(events(e.agent, "request/header")) == 1
        assert events(e.agent, "turn/end")[-1].reason == "interrupted"
        check_invariant(e.agent)


async def test_signal_reaches_a_tool_sleeping_in_its_scope(env: EnvFactory) -> None:
    entered = anyio.Event()

    @tool
    async def sleeper(ctx: ToolContext) -> str:
        """Sleep until cancelled."""
        entered.set()
        with ctx.signal.scope():
            await anyio.sleep(3600)
        return f"woke: {ctx.signal.reason}"

    async with env([Reply(tool_calls=(ScriptedCall("sleeper"),))], tools=[sleeper]) as e:
        signal = CancelSignal()
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: e.agent.run("go", signal=signal))
            await entered.wait()
            signal.cancel("deadline")
        result = events(e.agent, "tool/result")[0].message
        assert (result.status, result.text) == ("ok", "woke: deadline")
        check_invariant(e.agent)


async def test_a_tool_raising_abort_is_recorded_as_interrupted(env: EnvFactory) -> None:
    entered = anyio.Event()

    @tool
    async def strict(ctx: ToolContext) -> str:
        """Abort when cancelled."""
        entered.set()
        await ctx.signal.wait()
        ctx.signal.raise_if_cancelled()
        return "unreachable"

    async with env([Reply(tool_calls=(ScriptedCall("strict"),))], tools=[strict]) as e:
        async with anyio.create_task_group() as tg:
            tg.start_soon(e.agent.run, "go")
            await entered.wait()
            e.agent.cancel("stop")
        result = events(e.agent, "tool/result")[0].message
        assert result.status == "error"
        assert result.text.startswith("interrupted while running")
        check_invariant(e.agent)


@pytest.mark.parametrize(
    "reason",
    [
        pytest.param("plain reason", id="text"),
        pytest.param(AbortError("mine"), id="abort-error"),
        pytest.param(TimeoutError("deadline"), id="exception"),
    ],
)
async def test_a_pre_cancelled_run_fails_at_once(env: EnvFactory, reason: object) -> None:
    async with env(["never"]) as e:
        before = len(e.agent.session.events)
        signal = CancelSignal()
        signal.cancel(reason)
        with pytest.raises(AbortError) as caught:
            await e.agent.run("hi", signal=signal)
        error = caught.value
        assert is_abort(error)
        assert error.name == "AbortError"
        if isinstance(reason, AbortError):
            assert error is reason
        else:
            assert error.reason is reason
            if isinstance(reason, BaseException):
                assert error.__cause__ is reason
        assert e.provider.requests == []
        assert len(e.agent.session.events) == before
        assert e.agent.status == "idle"


async def test_a_queued_run_cancelled_before_its_turn_fails_without_touching_anything(
    env: EnvFactory,
) -> None:
    gate = Gate()
    async with env([Reply(tool_calls=(ScriptedCall("gate"),)), "A done"], tools=[gate.tool]) as e:
        signal = CancelSignal()
        failures: list[BaseException] = []

        async def queued() -> None:
            try:
                await e.agent.run("B", signal=signal)
            except AbortError as exc:
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(e.agent.run, "A")
            await gate.entered.wait()
            tg.start_soon(queued)
            await anyio.wait_all_tasks_blocked()
            signal.cancel("changed my mind")
            gate.release.set()
        assert len(failures) == 1
        assert is_abort(failures[0])
        assert len(e.provider.requests) == 2  # A's two rounds only
        assert "user:B" not in texts(e.agent.session.derive_messages())
        assert e.agent.status == "idle"


async def test_a_pre_cancelled_stream_fails_at_once(env: EnvFactory) -> None:
    async with env(["never"]) as e:
        signal = CancelSignal()
        signal.cancel("no")
        with pytest.raises(AbortError):
            async for _chunk in e.agent.stream("hi", signal=signal):
                pass
        assert e.provider.requests == []
        assert e.agent.session.events == ()


async def test_abandoning_a_stream_cancels_its_turn_and_releases_the_slot(
    env: EnvFactory,
) -> None:
    long = Reply(text="a long answer that the consumer will not wait for", chunk_size=5)
    async with env([long, "second run"]) as e:
        stream = e.agent.stream("first")
        async for chunk in stream:
            assert isinstance(chunk, TextDelta)
            break
        # the slot is released and the next run works
        result = await e.agent.run("again")
        assert result.value == "second run"
        first_end = events(e.agent, "turn/end")[0]
        assert first_end.reason == "interrupted"
        first_answer = events(e.agent, "assistant/message")[0].message
        assert first_answer.interrupted is True
        assert first_answer.text != long.text
        assert isinstance(stream.signal.reason, AbortError)
        check_invariant(e.agent)


async def test_a_stream_never_iterated_never_takes_the_slot(env: EnvFactory) -> None:
    async with env(["only run"]) as e:
        stream = e.agent.stream("never started")
        assert (await e.agent.run("hi")).value == "only run"
        assert e.agent.status == "idle"
        del stream


async def test_a_run_cancelled_by_its_callers_scope_leaves_the_agent_idle(
    env: EnvFactory,
) -> None:
    provider = WatchedProvider(["later"])
    async with env(provider=provider) as e:
        with anyio.CancelScope() as scope:
            scope.cancel()
            await e.agent.run("hi")
        assert e.agent.status == "idle"
        await e.agent.when_idle()
        assert (await e.agent.run("again")).value == "later"


async def test_no_step_opens_after_cancel_during_turn_stopping(env: EnvFactory) -> None:
    class CancelOnStop:
        @agentrig.hookimpl
        def turn_stopping(self, payload: Any) -> None:
            payload.agent.steer("would run another step")
            payload.signal.cancel("stop")

    async with env(["answer", "unused"], plugins={"c": CancelOnStop()}) as e:
        result = await e.agent.run("go")
        assert result.interrupted
        assert result.value == "answer"
        assert len(e.provider.requests) == 1
        # the steer stays pending for a later turn instead of entering the aborted one
        assert [m.text for m in e.agent.inbox.pending("next-step")] == ["would run another step"]
        assert "steering/message" not in event_types(e.agent)


# ---- is_abort --------------------------------------------------------------------------------


def _signal_with(reason: BaseException) -> CancelSignal:
    signal = CancelSignal()
    signal.cancel(reason)
    return signal


REASON = ValueError("abort")


@pytest.mark.parametrize(
    ("error", "signal", "expected"),
    [
        (AbortError(), None, True),
        (asyncio.CancelledError(), None, True),
        (ValueError("abort"), None, False),
        (RuntimeError("the request was aborted by the server"), None, False),
        (REASON, _signal_with(REASON), True),
        (ValueError("abort"), _signal_with(REASON), False),  # not the signal's reason
        (REASON, CancelSignal(), False),  # the signal never fired
    ],
    ids=[
        "AbortError",
        "asyncio.CancelledError",
        "ValueError-abort-text",
        "abort-in-message",
        "signal-reason",
        "other-error-while-cancelled",
        "live-signal",
    ],
)
def test_is_abort(error: BaseException, signal: CancelSignal | None, expected: bool) -> None:
    assert is_abort(error, signal) is expected


def test_is_abort_recognises_trio_cancelled() -> None:
    caught: list[BaseException] = []

    async def main() -> None:
        with trio.CancelScope() as scope:
            scope.cancel()
            try:
                await trio.lowlevel.checkpoint()
            except trio.Cancelled as exc:
                caught.append(exc)
                raise

    trio.run(main)
    assert is_abort(caught[0])


def test_is_abort_recognises_an_error_named_abort_error() -> None:
    class Foreign(Exception):
        name = "AbortError"

    assert is_abort(Foreign())
    assert agentrig.is_abort(AbortError("x", reason="y"))
