"""The journal's errors: every one is an execution-control outcome that ends a run as is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import attrs

from agentrig.errors import Issue
from agentrig.ids import RunId
from agentrig.lifecycle import ExecutionControlError

__all__ = [
    "JournalError",
    "JournalWriteError",
    "ReconciliationRequired",
    "UnknownExecutionError",
    "Unproven",
    "UnprovenKind",
]

UnprovenKind = Literal["model_call", "tool_effect", "runtime_state", "history"]


class JournalError(ExecutionControlError):
    """Base of execution-journal failures (a misuse of the journal, or one of the below)."""

    code = "journal.error"


class JournalWriteError(JournalError):
    """A journal record could not be made durable.

    It fails the run: a retried effect could run twice, so it never becomes a tool result
    the model could retry.  ``cause`` (also ``__cause__``) is the backend's own error.
    """

    code = "journal.write_failed"

    def __init__(self, message: str, *, record: str, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.record = record
        self.cause = cause
        if cause is not None:
            self.__cause__ = cause


class UnknownExecutionError(JournalError):
    """The journal holds no execution for what was asked."""

    code = "journal.unknown_execution"
    category = "user"


@attrs.frozen(slots=True)
class Unproven:
    """One thing the journal cannot prove: what kind, which id, and why."""

    kind: UnprovenKind
    id: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind} {self.id}: {self.detail}"


class ReconciliationRequired(JournalError):
    """Continuation refused: the journal cannot prove everything it would have to reuse.

    ``items`` names each unproven call, effect, state difference or history conflict.  Nothing
    was run and the live history was not changed; the host reconciles (for instance by
    checking the effect and recording its outcome with
    :func:`~agentrig.journal.reconcile_tool`) and continues again.
    """

    code = "journal.reconciliation_required"
    category = "user"

    def __init__(self, items: Sequence[Unproven], *, run_id: RunId) -> None:
        self.items = tuple(items)
        self.run_id = run_id
        lines = "\n  ".join(str(item) for item in self.items)
        super().__init__(
            f"execution {run_id} cannot be continued; the journal cannot prove:\n  {lines}",
            issues=[Issue(f"journal.unproven.{i.kind}", str(i), (i.id,)) for i in self.items],
        )

    def ids(self, kind: UnprovenKind | None = None) -> tuple[str, ...]:
        """The ids of the unproven items (of one ``kind``, or all)."""
        return tuple(i.id for i in self.items if kind is None or i.kind == kind)
