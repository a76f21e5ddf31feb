"""``rt.agent(NAME).submit(prompt)``: handed to the run queue a plugin provides
(:data:`agentrig.plugin.RUN_QUEUE`), refused with a code when none is.  The real queue
(agentrig-dbos, a worker process) is shown in ``tests/plugins/test_dbos_durable.py``."""

from __future__ import annotations

from typing import Any

import pytest

from agentrig.errors import AgentrigError, RuntimeClosedError
from agentrig.ids import AgentId
from agentrig.kernel import MemorySource, builtin_source, open_runtime
from agentrig.plugin import RUN_QUEUE, Composition, RunQueue, compose_step

pytestmark = pytest.mark.anyio

CONFIG: dict[str, Any] = {
    "providers": {"main": {"kind": "scripted", "options": {"script": [{"text": "hi"}]}}},
    "agents": {"assistant": {"provider": "main", "model": "m"}},
}


class ListQueue:
    """A run queue that only remembers what it was handed (no worker)."""

    def __init__(self) -> None:
        self.queued: list[tuple[str, str, str | None, str | None]] = []

    async def submit(
        self, agent: AgentId, prompt: str, *, queue: str | None = None, run_id: str | None = None
    ) -> str:
        self.queued.append((agent, prompt, queue, run_id))
        return run_id or f"run-{len(self.queued)}"


class QueuePlugin:
    def __init__(self) -> None:
        self.queue = ListQueue()

    @compose_step("agents")
    def provide(self, payload: Composition) -> None:
        runs: RunQueue = self.queue
        payload.runtime.services.provide(RUN_QUEUE, runs, source="test")


async def test_without_a_run_queue_submit_is_refused_naming_what_to_install() -> None:
    async with open_runtime(CONFIG, sources=[builtin_source()], environ={}) as rt:
        agent = rt.agent(AgentId("assistant"))
        with pytest.raises(AgentrigError) as caught:
            await agent.submit("hello")
        assert caught.value.code == "agent.no_run_queue"
        assert caught.value.category == "user"
        assert "install agentrig-dbos" in str(caught.value)
        assert "[dbos]" in str(caught.value)
        assert len(agent.session.events) == 0  # not run here instead


async def test_submit_hands_the_run_to_the_provided_queue_and_returns_its_id() -> None:
    plugin = QueuePlugin()
    entries = MemorySource()
    entries.add("plugins", "queue", plugin)
    async with open_runtime(CONFIG, sources=[builtin_source()], memory=entries, environ={}) as rt:
        agent = rt.agent(AgentId("assistant"))
        assert await agent.submit("first") == "run-1"
        assert await agent.submit("second", queue="slow", run_id="r-2") == "r-2"
        assert len(agent.session.events) == 0
        await rt.agents.dispose(AgentId("assistant"))
        with pytest.raises(RuntimeClosedError):
            await agent.submit("third")
    assert plugin.queue.queued == [
        ("assistant", "first", None, None),
        ("assistant", "second", "slow", "r-2"),
    ]
