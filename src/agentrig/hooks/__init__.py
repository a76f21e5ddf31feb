"""Hooks: the hook-strategy port, the outcome contract and the enforcement table.

A *hook strategy* (a ``hook_strategies`` plugin: ``command``, ``http`` ...) runs one
configured hook for one :class:`HookEvent` and returns a :data:`HookOutcome` -- :class:`Allow`,
:class:`Deny`, or :class:`HookErrorOutcome` when no verdict could be decoded.
:func:`combine` folds several outcomes into one :class:`CombinedOutcome` (deny > ask > defer >
allow); :func:`enforces` is the one predicate saying whether an error blocks an event (only
``PreToolUse`` does).  :class:`HookRunner` builds the config's ``[[hooks.<Event>]]`` entries
and runs those whose matcher matches; :func:`make_hook_gate` turns it into the agent's
tool-call gate.  See ``docs/hooks-strategies.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentrig.hooks._combine import CombinedOutcome, combine
from agentrig.hooks._config import (
    ClaudeCodeConfig,
    HookConfig,
    HooksConfig,
    claude_code_config,
    hooks_config,
)
from agentrig.hooks._enforcement import ENFORCEMENT, EventPosture, enforces, posture
from agentrig.hooks._events import (
    FIREABLE_EVENTS,
    FIRED_EVENTS,
    KNOWN_EVENTS,
    NOT_FIRED,
    PERMISSION_MODES,
    EventName,
    HookEvent,
    event_name_problem,
)
from agentrig.hooks._matcher import Matcher, compile_matcher, matcher_problem, matcher_subject
from agentrig.hooks._outcome import (
    PERMISSIONS,
    Allow,
    Decision,
    Deny,
    HookErrorOutcome,
    HookOutcome,
    Permission,
    decode_answer,
    decode_http_answer,
)
from agentrig.hooks._runner import ConfiguredHook, HookRunner
from agentrig.hooks._strategy import HOOK_STRATEGIES, HookStrategy, HookStrategyFactory

if TYPE_CHECKING:
    from agentrig.hooks._gate import (
        ApprovalRequest,
        HookApprover,
        HookGate,
        HookGateDecision,
        invalid_input,
        make_hook_gate,
    )
    from agentrig.hooks._lifecycle import HookLifecycle

__all__ = [
    "Allow",
    "ApprovalRequest",
    "ClaudeCodeConfig",
    "CombinedOutcome",
    "ConfiguredHook",
    "Decision",
    "Deny",
    "ENFORCEMENT",
    "EventName",
    "EventPosture",
    "FIREABLE_EVENTS",
    "FIRED_EVENTS",
    "HOOK_STRATEGIES",
    "HookApprover",
    "HookConfig",
    "HooksConfig",
    "HookErrorOutcome",
    "HookEvent",
    "HookGate",
    "HookGateDecision",
    "HookLifecycle",
    "HookOutcome",
    "HookRunner",
    "HookStrategy",
    "HookStrategyFactory",
    "KNOWN_EVENTS",
    "Matcher",
    "NOT_FIRED",
    "PERMISSIONS",
    "PERMISSION_MODES",
    "Permission",
    "claude_code_config",
    "combine",
    "compile_matcher",
    "decode_answer",
    "decode_http_answer",
    "enforces",
    "event_name_problem",
    "hooks_config",
    "invalid_input",
    "make_hook_gate",
    "matcher_problem",
    "matcher_subject",
    "posture",
]

# The gate meets the agent layer, which sits above this contract: load it on first use.
_GATE_NAMES = frozenset(
    {
        "ApprovalRequest",
        "HookApprover",
        "HookGate",
        "HookGateDecision",
        "invalid_input",
        "make_hook_gate",
    }
)


def __getattr__(name: str) -> Any:
    if name in _GATE_NAMES:
        from agentrig.hooks import _gate

        return getattr(_gate, name)
    if name == "HookLifecycle":
        from agentrig.hooks._lifecycle import HookLifecycle

        return HookLifecycle
    raise AttributeError(f"module 'agentrig.hooks' has no attribute {name!r}")
