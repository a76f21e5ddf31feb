"""``agent.complete_aside``: a plugin's model call for an agent, under the agent's rules.

It goes to the provider and model the ``request_config`` waterfall chooses (without becoming
the next round's start), is capped by the agent's output limit, stops with the run's signal
(a listener that cancels the run in the waterfall -- a spent budget -- stops it before
anything is sent), and its usage is logged (``model/side-call``) and counted in the run's
record; its messages never enter the history.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import pytest
from agentloop_support import EnvFactory, events

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.cancel import CancelSignal, is_abort
from agentrig.errors import AbortError
from agentrig.lifecycle import RequestConfig
from agentrig.llm import TextBlock, Usage, UserMessage
from agentrig.plugin import SideCall
from agentrig.session import event_usage
from agentrig.tools import ToolContext, tool

pytestmark = pytest.mark.anyio


def ask(text: str, **more: Any) -> SideCall:
    return SideCall(messages=(UserMessage.of(text),), source="test:aside", **more)


@tool(id="aside", description="asks the agent's model something on the side", risk="inspect")
async def aside(question: str, ctx: ToolContext) -> str:
    response = await ctx.agent.complete_aside(
        ask(question, system="Be brief.", max_tokens=500), signal=ctx.signal
    )
    return f"the model said: {response.message.text}"


def reply(text: str, prompt: int, completion: int) -> Reply:
    return Reply(text=text, usage=Usage.of(prompt, completion))


class Budget:
    """Stops a run in ``request_config`` once ``allowed`` requests went out."""

    def __init__(self, allowed: int) -> None:
        self.allowed = allowed
        self.seen: list[str] = []
        self.signal: CancelSignal | None = None

    @agentrig.hookimpl
    async def request_config(
        self, payload: RequestConfig, next: Callable[[RequestConfig], Awaitable[RequestConfig]]
    ) -> RequestConfig:
        self.seen.append(payload.model)
        if len(self.seen) > self.allowed and self.signal is not None:
            self.signal.cancel("the run used its budget")
        return attrs.evolve(await next(payload), model="chosen", max_tokens=200)


async def test_a_side_call_in_a_tool_counts_in_the_run_and_stays_out_of_the_history(
    env: EnvFactory,
) -> None:
    script = [
        Reply(tool_calls=(ScriptedCall("aside", {"question": "capital of France?"}),)),
        reply("Paris.", 30, 2),
        reply("It is Paris.", 50, 5),
    ]
    budget = Budget(allowed=10)
    async with env(script, tools=[aside], plugins={"budget": budget}) as e:
        result = await e.agent.run("ask on the side")
        requests = e.provider.requests
        side = requests[1]
        (logged,) = events(e.agent, "model/side-call")
        history = [m.text for m in e.agent.session.derive_messages()]
    assert side.system == "Be brief."
    assert [m.text for m in side.messages[1:]] == ["capital of France?"]
    assert side.model == "chosen"  # the waterfall chose it, as for a round
    assert side.max_tokens == 200  # the agent's limit caps the 500 asked for
    assert side.tools == ()
    assert requests[2].model == "chosen"
    assert (logged.source, logged.provider, logged.model) == ("test:aside", "local", "chosen")
    assert logged.usage == Usage.of(30, 2)
    assert event_usage(logged) == Usage.of(30, 2)
    record = result.invocation
    assert record.side_usage == Usage.of(30, 2)
    assert record.usage == Usage.of(80, 7)  # the rounds' and the side call's
    assert "capital of France?" not in history  # the side call's prompt is no message
    assert result.value == "It is Paris."


async def test_a_run_stopped_in_the_waterfall_sends_no_side_call(env: EnvFactory) -> None:
    script = [
        Reply(tool_calls=(ScriptedCall("aside", {"question": "more?"}),)),
        reply("never", 1, 1),
    ]
    budget = Budget(allowed=1)  # the round's request passes; the side call's stops the run
    signal = CancelSignal()
    budget.signal = signal
    async with env(script, tools=[aside], plugins={"budget": budget}) as e:
        result = await e.agent.run("go", signal=signal)
        assert len(e.provider.requests) == 1
        assert events(e.agent, "model/side-call") == []
    assert result.interrupted


async def test_outside_a_run_the_call_is_logged_but_no_runs(env: EnvFactory) -> None:
    async with env([reply("aside answer", 4, 1), reply("run answer", 3, 1)]) as e:
        response = await e.agent.complete_aside(ask("direct"))
        assert response.message.text == "aside answer"
        result = await e.agent.run("then a run")
        (logged,) = events(e.agent, "model/side-call")
    assert logged.usage == Usage.of(4, 1)
    assert result.invocation.side_usage is None  # made before the run: not its usage
    assert result.invocation.usage == Usage.of(3, 1)


async def test_a_cancelled_signal_sends_nothing(env: EnvFactory) -> None:
    async with env([reply("x", 1, 1)]) as e:
        signal = CancelSignal()
        signal.cancel("stop")
        with pytest.raises(AbortError) as caught:
            await e.agent.complete_aside(ask("q"), signal=signal)
        assert is_abort(caught.value, signal)
        assert e.provider.requests == []


def test_a_side_call_needs_a_message() -> None:
    with pytest.raises(ValueError, match="at least one message"):
        SideCall(messages=(), source="x")
    block = TextBlock(text="t")
    assert ask("t").messages[0].content == (block,)
