"""The agent lifecycle's hooks: their specifications and typed payloads.

A contract layer just above the kernel.  The kernel owns the hook mechanism (markers, modes,
the dispatcher) and the hooks that build and run the runtime; the hooks an agent's life fires
(``agent_created``, ``pre_step``, ``tool_execution``, ``permission_approver`` ...) are declared
here, in ``_hookspecs`` (one documented function per hook), and their payloads carry only
primitives, so the hook strategies, the agent, the built-ins and plugins all import them.
Plugin authors take the payloads from :mod:`agentrig.plugin`.  A listener that must end the
run as it stands raises an :class:`ExecutionControlError` (``ExecutionSuspended``: it saved a
request for an outside answer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig._lazy import lazy_exports

__all__ = [
    "SESSION_END_REASONS",
    "AgentCreated",
    "AgentDisposed",
    "AgentHandle",
    "AgentStatus",
    "AgentStatusChanged",
    "CompactionPlan",
    "CompactionRequest",
    "ElicitationAnswer",
    "ElicitationQuestion",
    "Enter",
    "ExecutionControlError",
    "ExecutionSuspended",
    "Observation",
    "PermissionQuestion",
    "PreStep",
    "PreStepDecision",
    "Reject",
    "RequestConfig",
    "RequestError",
    "Retry",
    "SessionStart",
    "ToolExecution",
    "TurnStopping",
]

# every other name lives in the payload module; the hookspec module is read by pluggy only
_CONTROL = ("ExecutionControlError", "ExecutionSuspended")
_LAZY: dict[str, str] = {
    name: f"agentrig.lifecycle.{'_control' if name in _CONTROL else '_payloads'}"
    for name in __all__
}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)

if TYPE_CHECKING:
    from agentrig.lifecycle._control import ExecutionControlError, ExecutionSuspended
    from agentrig.lifecycle._payloads import (
        SESSION_END_REASONS,
        AgentCreated,
        AgentDisposed,
        AgentHandle,
        AgentStatus,
        AgentStatusChanged,
        CompactionPlan,
        CompactionRequest,
        ElicitationAnswer,
        ElicitationQuestion,
        Enter,
        Observation,
        PermissionQuestion,
        PreStep,
        PreStepDecision,
        Reject,
        RequestConfig,
        RequestError,
        Retry,
        SessionStart,
        ToolExecution,
        TurnStopping,
    )
