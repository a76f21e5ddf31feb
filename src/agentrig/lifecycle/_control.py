"""The errors a lifecycle listener (an approver, a ``tool_execution`` listener) or the layers
under the loop raise to end a run as it stands, never as a tool result the model sees."""

from __future__ import annotations

from agentrig.errors import AgentrigError

__all__ = ["ExecutionControlError", "ExecutionSuspended"]


class ExecutionControlError(AgentrigError, code="execution.control"):
    """Base of failures that must end a run as they are -- never become a model-visible tool
    result, a retried request or normal output (a persistence failure, an effect whose
    outcome is uncertain and needs reconciliation)."""


class ExecutionSuspended(ExecutionControlError, code="execution.suspended", category="user"):
    """Raised from an approver or a ``tool_execution`` listener that saved a request for an
    outside answer before the call's effect started: the run ends its turn ``suspended`` and
    raises this to the host that owns the answer (``docs/journal.md`` says what the loop
    keeps, settles and continues)."""
