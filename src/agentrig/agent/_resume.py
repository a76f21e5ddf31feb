"""Continuing an interrupted turn: the public seam an execution journal resumes runs through.

:meth:`Agent.continue_run` holds the agent's FIFO run slot (so no other run interleaves) and
gives a :class:`Continuation`: ``record`` appends the facts the journal proves (restored
results, "not executed" settlements) to the session, exactly as the loop would have, and
``continue_turn`` runs the rest of the turn through the loop from the session as it now is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, final

from agentrig.agent._turn import run_turn
from agentrig.agent._turn_state import Emit, TurnOutcome
from agentrig.cancel import CancelSignal
from agentrig.session import SessionEvent

if TYPE_CHECKING:
    from agentrig.agent._driver import RunOptions
    from agentrig.agent._port import AgentPort

__all__ = ["Continuation"]


@final
class Continuation:
    """An agent's run slot, held to continue one of its turns (see :meth:`Agent.continue_run`)."""

    __slots__ = ("_port", "signal")

    def __init__(self, port: AgentPort, signal: CancelSignal) -> None:
        self._port = port
        self.signal = signal

    async def record(self, data: Any) -> SessionEvent:
        """Append one session event (a message, a tool call or result) and persist it."""
        return await self._port.log(data)

    async def continue_turn(self, options: RunOptions, emit: Emit | None = None) -> TurnOutcome:
        """Run the rest of the turn through the loop, from the session as recorded so far
        (``emit``: where a streamed run's chunks go)."""
        return await run_turn(self._port, (), "resume", options, self.signal, emit)
