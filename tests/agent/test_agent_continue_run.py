"""``Agent.continue_run``: the public seam a journal continues an interrupted turn through."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import agentrig
from agentrig.agent import Continuation, RunOptions
from agentrig.cancel import CancelSignal
from agentrig.errors import RuntimeClosedError
from agentrig.ids import AgentId, RunId
from agentrig.kernel import builtin_source
from agentrig.llm import UserMessage
from agentrig.session import UserMessageEvent

CONFIG: dict[str, Any] = {
    "providers": {
        "local": {
            "kind": "scripted",
            "options": {"script": [{"text": "continued"}, {"text": "next run"}]},
        }
    },
    "agents": {"a": {"provider": "local", "model": "m"}},
}


def _texts(agent: agentrig.Agent) -> list[str]:
    return [
        "".join(getattr(b, "text", "") for b in m.content)
        for m in agent.session.derive_messages()
        if m.role in {"user", "assistant"}
    ]


@pytest.mark.anyio
async def test_a_continuation_records_facts_then_runs_the_rest_of_the_turn() -> None:
    async with agentrig.open_runtime(CONFIG, sources=[builtin_source()], environ={}) as rt:
        agent = rt.agent(AgentId("a"))
        signal = CancelSignal()
        async with agent.continue_run(signal) as run:
            assert isinstance(run, Continuation)
            assert agent.status == "running"
            assert agent.current_signal is signal
            await run.record(UserMessageEvent(message=UserMessage.of("interrupted question")))
            outcome = await run.continue_turn(RunOptions(run_id=RunId("run-1"), max_rounds=5))
        assert agent.current_signal is None
        assert not outcome.interrupted
        assert _texts(agent) == ["interrupted question", "continued"]


@pytest.mark.anyio
async def test_a_continuation_holds_the_run_slot() -> None:
    async with agentrig.open_runtime(CONFIG, sources=[builtin_source()], environ={}) as rt:
        agent = rt.agent(AgentId("a"))
        order: list[str] = []
        held = anyio.Event()
        release = anyio.Event()

        async def continuation() -> None:
            async with agent.continue_run(CancelSignal()) as run:
                held.set()
                await release.wait()
                await run.record(UserMessageEvent(message=UserMessage.of("first")))
                order.append("continuation")

        async def later_run() -> None:
            await held.wait()
            result = await agent.run("second")
            order.append(f"run:{result.value}")

        async with anyio.create_task_group() as tg:
            tg.start_soon(continuation)
            tg.start_soon(later_run)
            await held.wait()
            await anyio.wait_all_tasks_blocked()
            assert order == []  # the run waits for the slot the continuation holds
            release.set()
        assert order == ["continuation", "run:continued"]


@pytest.mark.anyio
async def test_a_disposed_agent_cannot_be_continued() -> None:
    async with agentrig.open_runtime(CONFIG, sources=[builtin_source()], environ={}) as rt:
        agent = rt.agent(AgentId("a"))
        await rt.agents.dispose(AgentId("a"))
        with pytest.raises(RuntimeClosedError):
            async with agent.continue_run(CancelSignal()):
                pytest.fail("must not be held")
