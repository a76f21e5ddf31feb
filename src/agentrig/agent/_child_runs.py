"""Child runs: the one seam a plugin fills to run delegated children its own way.

A delegation normally creates its child in this process, runs it and disposes it.  A plugin
that makes runs durable (``agentrig-dbos``) provides :data:`CHILD_RUNS`: the delegation asks
it first, and it runs the child so that a crash in the middle neither repeats a finished
child nor loses an unfinished one.  It answers None for a delegation that is not its own
(a parent outside its durable runs), which then runs here as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, final

import attrs

from agentrig.cancel import CancelSignal
from agentrig.kernel import ServiceKey

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent
    from agentrig.agent._delegation import Lineage
    from agentrig.agent._results import RunResult

__all__ = ["CHILD_RUNS", "ChildRun", "ChildRuns"]


@final
@attrs.frozen(slots=True)
class ChildRun:
    """One admitted delegation: the parent, the child's lineage, the task and its signal."""

    parent: Agent
    lineage: Lineage
    prompt: str
    #: cancelled when the parent's run is (the child's run must end then)
    signal: CancelSignal
    #: the model's delegation call (its id keys the child); None for ``agent.delegate()``
    call_id: str | None = None


class ChildRuns(Protocol):
    """What a plugin provides as :data:`CHILD_RUNS`."""

    async def run_child(self, request: ChildRun) -> RunResult[Any] | None:
        """Run the child to its end and return its result, or None to leave the delegation
        to the runtime (it runs the child in this process)."""
        ...

    # Optional, looked up with getattr (a provider without it keeps minted names):
    # ``handoff_identity(parent, target, call_id) -> (agent_id, session_id) | None`` names
    # the agent a ``transfer_to_<target>`` call hands the conversation to, so a durable
    # host finds it again after a crash.


CHILD_RUNS: ServiceKey[ChildRuns] = ServiceKey("agentrig.child_runs")
