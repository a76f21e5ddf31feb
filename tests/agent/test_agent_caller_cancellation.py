"""The caller's own cancellation is never swallowed.

A run cancelled from outside -- an enclosing anyio scope (``move_on_after`` /
``fail_after``), ``asyncio.timeout`` / ``asyncio.wait_for``, ``task.cancel()`` or a trio
deadline -- is recorded ``interrupted`` with every guarantee of an aborted run (the partial
text committed, every tool call exactly one result), and then the cancellation propagates:
the scope reports it caught it, ``fail_after`` raises ``TimeoutError``, a cancelled task is
cancelled.  ``run()`` and ``stream()`` behave the same.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import pytest
import trio
from agentloop_support import EnvFactory, WatchedProvider, check_invariant, clock, events

import agentrig
from agentrig import CancelSignal
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.lifecycle import Observation
from agentrig.llm import ModelRequest, StreamChunk, TextDelta
from agentrig.tools import ToolContext, tool

pytestmark = pytest.mark.anyio

PARTIAL = "The first half of an answer"


class HangsAfterText(WatchedProvider):
    """Its first answer streams :data:`PARTIAL`, then waits forever (as a stalled network
    stream would); later requests are answered from ``then``."""

    def __init__(self, then: tuple[str, ...] = ()) -> None:
        super().__init__(then)
        self.sent = anyio.Event()

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamChunk]:
        if self.sent.is_set():
            async for chunk in super().stream(request, signal=signal):
                yield chunk
            return
        yield TextDelta.of(PARTIAL)
        self.sent.set()
        with signal.scope():
            await anyio.sleep_forever()
        signal.raise_if_cancelled()


def assert_recorded_interrupted(agent: Any, *, partial: str | None = PARTIAL) -> None:
    assert events(agent, "turn/end")[-1].reason == "interrupted"
    if partial is not None:
        committed = events(agent, "assistant/message")[-1].message
        assert committed.interrupted is True
        assert committed.text == partial
    types = [e.type for e in agent.session.events]
    assert types.count("step/start") == types.count("step/end")
    check_invariant(agent)
    assert agent.status == "idle"


async def cancelled_when(
    ready: anyio.Event, cancel: Callable[[], object], run: Callable[[], Awaitable[Any]]
) -> None:
    """Run ``run()``; once ``ready`` is set, call ``cancel`` (the caller cancels)."""
    async with anyio.create_task_group() as tg:

        async def expire() -> None:
            await ready.wait()
            cancel()

        tg.start_soon(expire)
        await run()
        pytest.fail("the run returned although its caller cancelled it")


async def consume(stream: AsyncIterable[StreamChunk], into: list[str]) -> None:
    async for chunk in stream:
        assert isinstance(chunk, TextDelta)
        into.append(chunk.text)


# ---- anyio scopes, on both backends ----------------------------------------------------------


async def test_move_on_after_scope_catches_and_the_partial_text_is_kept(env: EnvFactory) -> None:
    provider = HangsAfterText()
    async with env(provider=provider) as e:
        with anyio.move_on_after(3600) as scope:
            await cancelled_when(provider.sent, scope.cancel, lambda: e.agent.run("hi"))
        assert scope.cancelled_caught
        assert_recorded_interrupted(e.agent)


async def _until_fail_after(provider: HangsAfterText, agent: Any) -> None:
    with anyio.fail_after(3600) as scope:

        def deadline_passes() -> None:
            scope.deadline = -math.inf

        await cancelled_when(provider.sent, deadline_passes, lambda: agent.run("hi"))


async def test_fail_after_raises_timeout_error(env: EnvFactory) -> None:
    provider = HangsAfterText()
    async with env(provider=provider) as e:
        with pytest.raises(TimeoutError):
            await _until_fail_after(provider, e.agent)
        assert_recorded_interrupted(e.agent)


async def test_a_stream_inside_a_cancelled_scope_propagates_too(env: EnvFactory) -> None:
    provider = HangsAfterText()
    async with env(provider=provider) as e:
        received: list[str] = []
        with anyio.CancelScope() as scope:
            stream = e.agent.stream("hi")
            await cancelled_when(provider.sent, scope.cancel, lambda: consume(stream, received))
        assert scope.cancelled_caught
        assert received == [PARTIAL]
        assert_recorded_interrupted(e.agent)


async def test_cancelled_while_a_tool_runs_every_call_gets_one_result(env: EnvFactory) -> None:
    entered = anyio.Event()

    @tool
    async def stall(ctx: ToolContext) -> str:
        """Stall until cancelled from outside."""
        entered.set()
        await anyio.sleep_forever()
        return "unreachable"

    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("stall"), ScriptedCall("clock"))),
        "unused",
    ]
    async with env(script, tools=[stall, clock]) as e:
        with anyio.CancelScope() as scope:
            await cancelled_when(entered, scope.cancel, lambda: e.agent.run("go"))
        assert scope.cancelled_caught
        results = {ev.message.name: ev.message for ev in events(e.agent, "tool/result")}
        assert results["stall"].status == "error"
        assert results["stall"].text.startswith("interrupted while running")
        assert results["clock"].status == "not_executed"
        assert len(e.provider.requests) == 1  # no further step after the cancellation
        assert_recorded_interrupted(e.agent, partial=None)


async def test_the_agent_runs_again_after_its_callers_cancellation(env: EnvFactory) -> None:
    provider = HangsAfterText(then=("back again",))
    async with env(provider=provider) as e:
        with anyio.CancelScope() as scope:
            await cancelled_when(provider.sent, scope.cancel, lambda: e.agent.run("hi"))
        assert (await e.agent.run("again")).value == "back again"


# ---- asyncio's own cancellation ----------------------------------------------------------------


async def _cancelled_asyncio(
    env: EnvFactory, drive: Callable[[HangsAfterText, Awaitable[Any]], Awaitable[None]]
) -> Any:
    provider = HangsAfterText()
    async with env(provider=provider) as e:
        await drive(provider, e.agent.run("hi"))
        assert_recorded_interrupted(e.agent)
        return e.agent


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_asyncio_timeout_raises_timeout_error(env: EnvFactory) -> None:
    async def until_timeout(provider: HangsAfterText, run: Awaitable[Any]) -> None:
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(None) as deadline:
            expiry = asyncio.ensure_future(provider.sent.wait())
            expiry.add_done_callback(lambda _: deadline.reschedule(loop.time()))
            await run

    async def drive(provider: HangsAfterText, run: Awaitable[Any]) -> None:
        with pytest.raises(TimeoutError):
            await until_timeout(provider, run)

    await _cancelled_asyncio(env, drive)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_asyncio_wait_for_raises_timeout_error(env: EnvFactory) -> None:
    async def drive(provider: HangsAfterText, run: Awaitable[Any]) -> None:
        with pytest.raises(TimeoutError):
            # the provider never finishes, so the timeout is certain to expire
            await asyncio.wait_for(run, timeout=0.05)

    await _cancelled_asyncio(env, drive)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_cancelled_asyncio_task_is_cancelled(env: EnvFactory) -> None:
    async def drive(provider: HangsAfterText, run: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(run)
        await provider.sent.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert task.cancelled()

    await _cancelled_asyncio(env, drive)


# ---- trio's deadlines --------------------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_a_trio_deadline_is_caught_by_its_scope(env: EnvFactory) -> None:
    provider = HangsAfterText()
    async with env(provider=provider) as e:
        with trio.move_on_at(math.inf) as scope:

            def deadline_passes() -> None:
                scope.deadline = trio.current_time()

            await cancelled_when(provider.sent, deadline_passes, lambda: e.agent.run("hi"))
        assert scope.cancelled_caught
        assert_recorded_interrupted(e.agent)


async def test_the_cancelled_call_and_turn_are_observed(env: EnvFactory) -> None:
    seen: list[Observation] = []

    class Recorder:
        @agentrig.hookimpl
        def observe(self, payload: Observation) -> None:
            seen.append(payload)

    provider = HangsAfterText()
    async with env(provider=provider, plugins={"recorder": Recorder()}) as e:
        with anyio.CancelScope() as scope:
            await cancelled_when(provider.sent, scope.cancel, lambda: e.agent.run("hi"))
    outcomes = {o.kind: (o.data.get("outcome"), o.data.get("reason")) for o in seen}
    assert outcomes["model_call"] == ("cancelled", None)
    assert outcomes["turn"] == (None, "interrupted")
