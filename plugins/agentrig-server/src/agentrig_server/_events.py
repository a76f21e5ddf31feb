"""What a served run reports, independent of the wire format that carries it.

The run driver turns an agent's stream chunks into these events; each API module renders
them in its own format.  Tool calls are server-owned, so the OpenAI and Anthropic
renderings never hand them to the client as calls to execute; the Responses rendering and
the chat page show them as server-side calls with their results.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from agentrig.llm import Usage

__all__ = [
    "ApprovalRequested",
    "FinishReason",
    "Finished",
    "RunEvent",
    "TextOut",
    "ToolCallOut",
    "ToolResultOut",
    "UsageOut",
]

#: how a run ended, before each API words it: ``stop`` (answered), ``length`` (cut short by a
#: token budget, a limit or a cancel), ``timeout`` (its deadline passed: the agent's
#: ``deadline`` or the server's ``max_run_seconds``), and -- for an agent that classifies
#: replies -- ``refusal``, ``content_filter`` or ``error`` (what the model's reply reported)
FinishReason: TypeAlias = Literal["stop", "length", "timeout", "refusal", "content_filter", "error"]


@attrs.frozen(slots=True)
class TextOut:
    """More answer text."""

    text: str


@attrs.frozen(slots=True)
class ToolCallOut:
    """The agent called one of its tools (the server runs it)."""

    call_id: str
    name: str
    arguments: dict[str, Any]


@attrs.frozen(slots=True)
class ToolResultOut:
    """A server-side tool call settled."""

    call_id: str
    name: str
    status: str
    text: str


@attrs.frozen(slots=True)
class ApprovalRequested:
    """A call waits for a person's answer at ``POST /v1/approvals/{approval_id}``."""

    approval_id: str
    tool: str
    arguments: dict[str, Any]
    reason: str
    #: the tool call that waits (its ``mcp_call`` item names the approval)
    call_id: str | None = None


@attrs.frozen(slots=True)
class UsageOut:
    """The model reported its token use so far (a provider may report a call's input tokens
    before its answer, as Anthropic's does)."""

    usage: Usage


@attrs.frozen(slots=True)
class Finished:
    """The run ended, and how (see :data:`FinishReason`)."""

    text: str
    finish: FinishReason
    usage: Usage | None
    model: str


RunEvent: TypeAlias = (
    TextOut | ToolCallOut | ToolResultOut | ApprovalRequested | UsageOut | Finished
)
