"""Tool-call dispatch vocabulary: the gate port, a settled call, and the result messages.

Per call: unknown names become an explicit skip naming what exists; known tools go through
the gate (permission evaluator and blockers, when configured), then the ``tool_execution``
waterfall whose default validates the arguments, runs ``authorize`` and ``execute`` (that
path is :class:`~agentrig.agent._invocation.ToolInvocation`).  Whatever happens -- invalid
input, refusal, an exception, cancellation -- the call gets one
:class:`~agentrig.llm.ToolMessage`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from agentrig.errors import AgentrigError
from agentrig.ids import InvocationId
from agentrig.lifecycle import Observation
from agentrig.llm import FileBlock, ImageBlock, TextBlock, ToolCallBlock, ToolMessage, ToolStatus
from agentrig.tools import (
    GateDecision,
    Tool,
    render_output,
)

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent

__all__ = [
    "NO_GATE",
    "CallOutcome",
    "Gate",
    "GateDecision",
    "canonical_input",
    "error_text",
    "is_concurrent",
    "not_executed",
    "observe_permission",
    "result_message",
    "tool_timeout",
    "unknown_tool",
]

INTERRUPTED_TEXT = "not executed: interrupted"


class Gate(Protocol):
    """Decides whether a call may run (permissions, blockers, hooks); installed by the runtime."""

    def __call__(self, tool: Tool, call: ToolCallBlock, agent: Agent) -> Awaitable[GateDecision]:
        """Allow or refuse one call."""
        ...

    def denied_tools(self, tools: Sequence[Tool]) -> set[str]:
        """Tools denied outright, so the model is never offered them."""
        ...


# the invocation id of a call that never reached dispatch
_NOT_DISPATCHED = InvocationId("")


@attrs.frozen(slots=True)
class CallOutcome:
    """A settled call: its message, whether it concludes the turn, and display-only view."""

    message: ToolMessage
    executed: bool
    concludes_turn: bool = False
    view: Any = None
    duration_ms: float = 0.0
    invocation_id: InvocationId = _NOT_DISPATCHED
    #: when the call began (seconds since the epoch; 0 for a call that never reached dispatch)
    started_at: float = 0.0
    #: the exception's class name when the call failed
    error_type: str | None = None
    #: why the call failed (invalid input, a refusal, the tool's own exception, an error
    #: output): what ``agent.call_tool()`` raises; ``None`` for a success
    failure: BaseException | None = attrs.field(default=None, eq=False, repr=False)


def observe_permission(agent: Agent, call: ToolCallBlock, decision: GateDecision) -> None:
    """Emit the ``permission`` observation of the gate's decision on one call (content-free;
    the caller asks first whether anyone listens)."""
    data = {
        "session_id": agent.session.id,
        "tool": call.name,
        "call_id": call.id,
        "allowed": decision.allowed,
        "reason": decision.reason,
    }
    agent.runtime.hooks.notify("observe", Observation("permission", agent.id, data))


def not_executed(call: ToolCallBlock, reason: str = INTERRUPTED_TEXT) -> ToolMessage:
    return ToolMessage.of(call.id, call.name, reason, status="not_executed")


def unknown_tool(call: ToolCallBlock, available: Sequence[str]) -> ToolMessage:
    names = ", ".join(sorted(available)) or "none"
    return ToolMessage.of(
        call.id,
        call.name,
        f"Tool {call.name!r} is not available, so the call was not executed. "
        f"Available tools: {names}.",
        status="skipped",
    )


def error_text(error: BaseException) -> str:
    if isinstance(error, AgentrigError):
        return f"{error.code}: {error}"
    return f"{type(error).__name__}: {error}"


NO_GATE = GateDecision(True)  # without a gate every call may run (frozen: one for all)


def is_concurrent(tool: Tool) -> bool:
    """May ``tool`` run alongside the other calls of its reply?

    Its own ``concurrent`` attribute decides when it declares one (``@tool(concurrent=...)``);
    otherwise a tool of the read-only risk class (``inspect``) may.
    """
    declared = getattr(tool, "concurrent", None)
    if declared is not None:
        return bool(declared)
    return tool.risk == "inspect"


def tool_timeout(agent: Agent, tool: Tool) -> float | None:
    """Seconds ``tool`` may run per call: ``[tools.<id>] timeout``, else the tool's own."""
    configured = agent.runtime.config.tools.get(tool.id)
    if configured is not None and configured.timeout is not None:
        return configured.timeout
    own = getattr(tool, "timeout", None)
    if own is None:  # most tools: no limit of their own (and `int | float` is built per call)
        return None
    return float(own) if isinstance(own, int | float) and not isinstance(own, bool) else None


_RESULT_BLOCKS = (TextBlock, ImageBlock, FileBlock)


def result_message(call: ToolCallBlock, value: Any, status: ToolStatus = "ok") -> ToolMessage:
    """A tool's value as its result message.

    A content block, or a non-empty sequence of text, image and file blocks, is kept as
    blocks (a multimodal result: each provider projects them, e.g. images to the model);
    anything else is rendered as text (:func:`~agentrig.tools.render_output`).
    """
    if type(value) is str:  # the common case, without isinstance on the block classes
        return ToolMessage.of(call.id, call.name, value, status)
    if isinstance(value, _RESULT_BLOCKS):
        value = (value,)
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(b, _RESULT_BLOCKS) for b in value)
    ):
        return ToolMessage(call_id=call.id, name=call.name, content=tuple(value), status=status)
    return ToolMessage.of(call.id, call.name, render_output(value), status=status)


# one shared encoder: json.dumps with keywords would build a new one per call
_ENCODE_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode


def canonical_input(call: ToolCallBlock) -> str:
    """A byte-stable rendering of a call's input for the identical-input guard."""
    return f"{call.name}\x00{_ENCODE_CANONICAL(call.arguments)}"
