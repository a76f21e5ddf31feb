"""The loop's cancel scope around each provider call (issue 20 point 6).

A turn makes the scopes of its later provider calls from the class of its first (without
anyio looking the event loop's library up each time): the run's signal must interrupt a
provider that ignores it on any call of the turn, on both backends, as on the first.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from agentloop_support import EnvFactory, WatchedProvider, check_invariant, echo, events

from agentrig import CancelSignal
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.llm import ModelRequest, StreamChunk

pytestmark = pytest.mark.anyio


class DeafOnRequest(WatchedProvider):
    """Answers from its script, but request number ``deaf`` never ends and ignores the
    signal: only the loop's own scope can interrupt it."""

    def __init__(self, script: list[Reply | str], deaf: int) -> None:
        super().__init__(script)
        self.deaf = deaf

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamChunk]:
        if len(self.requests) + 1 == self.deaf:
            self._take(request)
            await anyio.sleep_forever()
        async for chunk in super().stream(request, signal=signal):
            yield chunk


@pytest.mark.parametrize("deaf", [1, 2, 3])
async def test_the_signal_interrupts_a_deaf_provider_on_any_call_of_the_turn(
    env: EnvFactory, deaf: int
) -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("echo", {"text": "a"}),)),
        Reply(tool_calls=(ScriptedCall("echo", {"text": "b"}),)),
        "done",
    ]
    provider = DeafOnRequest(script, deaf)
    async with env(tools=[echo], provider=provider) as e:
        signal = CancelSignal()
        results: list[Any] = []

        async def run() -> None:
            results.append(await e.agent.run("go", signal=signal))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await provider.received(deaf)
            signal.cancel("stop")
        (result,) = results
        assert result.interrupted
        assert len(events(e.agent, "tool/result")) == deaf - 1
        assert events(e.agent, "assistant/message")[-1].message.interrupted is True
        assert events(e.agent, "turn/end")[-1].reason == "interrupted"
        assert e.agent.status == "idle"
        check_invariant(e.agent)


async def test_a_given_scope_is_the_one_entered_and_cancelled() -> None:
    signal = CancelSignal()
    given = type(anyio.CancelScope())()  # made from the class, as the turn makes them
    with signal.scope(given) as entered:
        assert entered is given
        signal.cancel("now")
        await anyio.sleep_forever()
    assert given.cancelled_caught
    with pytest.raises(Exception, match="now"):
        signal.raise_if_cancelled()


async def test_a_scope_stops_listening_to_the_signal_when_it_exits() -> None:
    signal = CancelSignal()
    heard: list[object] = []
    signal.on_cancel(heard.append)
    scopes = []
    for _ in range(3):
        with signal.scope() as scope:
            scopes.append(scope)
    signal.cancel("after")  # reaches the caller's listener, none of the exited scopes
    assert heard == ["after"]
    assert not any(scope.cancel_called for scope in scopes)
