"""The agent lifecycle's hooks: their specifications and typed payloads.

A contract layer just above the kernel.  The kernel owns the hook mechanism (markers, modes,
the dispatcher) and the hooks that build and run the runtime; the hooks an agent's life fires
(``agent_created``, ``pre_step``, ``tool_execution``, ``permission_approver`` ...) are declared
here, in ``_hookspecs`` (one documented function per hook), and their payloads carry only
primitives, so the hook strategies, the agent, the built-ins and plugins all import them.
Plugin authors take the payloads from :mod:`agentrig.plugin`.
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

# every name lives in the payload module; the hookspec module is read by pluggy only
_LAZY: dict[str, str] = dict.fromkeys(__all__, "agentrig.lifecycle._payloads")

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)

if TYPE_CHECKING:
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
