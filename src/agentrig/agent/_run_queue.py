"""Run queue: the one seam a plugin fills to run an agent's prompts elsewhere, later.

``rt.agent(NAME).submit(prompt)`` hands the run to the :data:`RUN_QUEUE` service and returns
the run's id at once; a worker (another process, maybe another machine) executes it.  The
core ships no queue: a plugin that has one (``agentrig-dbos``: durable runs on DBOS)
provides the service from a compose step.  Without it, ``submit`` is refused with
``agent.no_run_queue`` -- never silently run in this process instead.
"""

from __future__ import annotations

from typing import Protocol

from agentrig.ids import AgentId
from agentrig.kernel import ServiceKey

__all__ = ["RUN_QUEUE", "RunQueue"]


class RunQueue(Protocol):
    """What a queueing plugin provides as :data:`RUN_QUEUE`."""

    async def submit(
        self,
        agent: AgentId,
        prompt: str,
        *,
        queue: str | None = None,
        run_id: str | None = None,
    ) -> str:
        """Queue a run of the declared agent ``agent`` on ``prompt`` and return its id.

        ``queue`` names one of the plugin's queues (None: its default); a ``run_id`` that
        was already submitted names that run again, it is not queued twice.
        """
        ...


RUN_QUEUE: ServiceKey[RunQueue] = ServiceKey("agentrig.run_queue")
