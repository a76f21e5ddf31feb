"""Errors of the DBOS plugin (all derive from :class:`agentrig.errors.AgentrigError`).

::

    AgentrigError
     └── DurableError                  dbos.error             system
          ├── DurableBackendError      dbos.asyncio_only      user    (opened on trio)
          ├── DurableSetupError        dbos.setup             user    (not usable as configured)
          ├── NotWaitingError          dbos.not_waiting       user    (no question to answer)
          └── UnknownRunError          dbos.unknown_run       user    (no durable run by that id)
    ExecutionControlError
     └── RunSuspended                  dbos.suspended         user    (control flow, never shown)
"""

from __future__ import annotations

from typing import Any

from agentrig.errors import AgentrigError, Category, ExecutionControlError

__all__ = [
    "DurableBackendError",
    "DurableError",
    "DurableSetupError",
    "NotWaitingError",
    "RunSuspended",
    "UnknownRunError",
]


class DurableError(AgentrigError):
    """A durable run could not be started, awaited or answered."""

    code = "dbos.error"
    category: Category = "system"


class DurableBackendError(DurableError):
    """Durable runs need asyncio: DBOS runs its workflows on an asyncio event loop."""

    code = "dbos.asyncio_only"
    category = "user"


class DurableSetupError(DurableError):
    """The composition cannot run durable runs as configured (names what to change)."""

    code = "dbos.setup"
    category = "user"


class UnknownRunError(DurableError):
    """No durable run has that id in the system database."""

    code = "dbos.unknown_run"
    category = "user"


class NotWaitingError(DurableError):
    """An answer for a durable run that waits on no question (or on another call)."""

    code = "dbos.not_waiting"
    category = "user"


class RunSuspended(ExecutionControlError):
    """A durable run stops at a permission question and frees its worker slot.

    Raised by the durable approver inside a workflow; it propagates through the permission
    gate like every execution-control outcome (the call stays pending, no result is
    written), and the workflow records the question and finishes "waiting".
    """

    code = "dbos.suspended"
    category = "user"

    def __init__(self, question: dict[str, Any]) -> None:
        super().__init__(
            f"waiting for a person's answer on call {question.get('call_id')!r} "
            f"({question.get('tool')})"
        )
        self.question = question
