"""Errors of the DBOS plugin (all derive from :class:`agentrig.errors.AgentrigError`).

::

    AgentrigError
     └── DurableError                  dbos.error             system
          ├── DurableBackendError      dbos.asyncio_only      user    (opened on trio)
          ├── DurableDatabaseError     dbos.database          system  (system database unreachable)
          ├── DurableSetupError        dbos.setup             user    (not usable as configured)
          ├── NotFailedError           dbos.not_failed        user    (nothing to retry)
          ├── NotWaitingError          dbos.not_waiting       user    (no question to answer)
          └── UnknownRunError          dbos.unknown_run       user    (no durable run by that id)
    ExecutionControlError
     └── ExecutionSuspended
          └── RunSuspended             dbos.suspended         user    (control flow, never shown)
"""

from __future__ import annotations

from typing import Any

from agentrig.errors import AgentrigError
from agentrig.lifecycle import ExecutionSuspended

__all__ = [
    "DurableBackendError",
    "DurableDatabaseError",
    "DurableError",
    "DurableSetupError",
    "NotFailedError",
    "NotWaitingError",
    "RunSuspended",
    "UnknownRunError",
]


class DurableError(AgentrigError, code="dbos.error"):
    """A durable run could not be started, awaited or answered."""


class DurableBackendError(DurableError, code="dbos.asyncio_only", category="user"):
    """Durable runs need asyncio: DBOS runs its workflows on an asyncio event loop."""


class DurableDatabaseError(DurableError, code="dbos.database"):
    """The DBOS system database cannot be reached (names it, never its password)."""


class DurableSetupError(DurableError, code="dbos.setup", category="user"):
    """The composition cannot run durable runs as configured (names what to change)."""


class UnknownRunError(DurableError, code="dbos.unknown_run", category="user"):
    """No durable run has that id in the system database."""


class NotFailedError(DurableError, code="dbos.not_failed", category="user"):
    """A retry of a durable run that has not failed (it runs, waits or succeeded)."""


class NotWaitingError(DurableError, code="dbos.not_waiting", category="user"):
    """An answer for a durable run that waits on no question (or on another call)."""


class RunSuspended(ExecutionSuspended, code="dbos.suspended", category="user"):
    """A durable run stops at a permission question (or at effects only the host can
    settle) and frees its worker slot.

    Raised by the durable approver inside a workflow; it propagates through the permission
    gate like every execution-control outcome (the call stays pending, no result is
    written), the loop lets the calls already running beside it finish and ends the turn
    ``suspended``, and the workflow records the question and finishes "waiting".
    """

    def __init__(
        self, question: dict[str, Any] | None = None, *, unproven: dict[str, Any] | None = None
    ) -> None:
        if question is not None:
            what = f"a person's answer on call {question.get('call_id')!r} ({question.get('tool')})"
        else:
            what = f"the host to settle {', '.join((unproven or {}).get('effects', []))}"
        super().__init__(f"waiting for {what}")
        self.question = question
        self.unproven = unproven
