"""Session events: the ``session_event`` variant family.

A session is an append-only log of :class:`SessionEvent` envelopes -- a monotonic ``seq``, a
``time`` and a tagged ``data`` payload.  Core declares the members below; a plugin adds its
own through the ``agentrig.variants`` entry points, and a member nobody installed survives a
load/save round trip as an opaque record.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentrig.kernel import register_variants
from agentrig.llm import AssistantMessage, ToolCallBlock, ToolMessage, Usage, UserMessage
from agentrig.variants import Variant, VariantRegistry

__all__ = [
    "CORE_EVENTS",
    "SESSION_EVENTS",
    "AssistantChunk",
    "AssistantMessageEvent",
    "ContextCompacted",
    "CompactionTrigger",
    "InboxSpliced",
    "ModelError",
    "ModelSideCall",
    "Notice",
    "NoticeKind",
    "RequestHeader",
    "SessionEvent",
    "SessionEventData",
    "SessionLineage",
    "SteeringMessage",
    "StepEnd",
    "StepStart",
    "SystemPrompt",
    "ToolCallEvent",
    "ToolResultEvent",
    "ToolResultStored",
    "TraceIds",
    "TurnEnd",
    "TurnEndReason",
    "TurnStart",
    "TurnTrigger",
    "UserMessageEvent",
    "event_usage",
]

TurnTrigger = Literal["prompt", "followup", "steer", "resume"]
TurnEndReason = Literal[
    "completed",
    "interrupted",
    "timeout",
    "model_response_failure",
    "failed",
    "rejected",
    "budget",
    "suspended",
]
NoticeKind = Literal["message", "stop", "blocked", "output", "error"]
CompactionTrigger = Literal["auto", "manual"]


class SessionEventData(Variant):
    """Base of the ``session_event`` family."""

    family: ClassVar[str] = "session_event"


class TurnStart(SessionEventData):
    type: Literal["turn/start"] = "turn/start"
    turn: int
    trigger: TurnTrigger = "prompt"
    run_id: str | None = None


class TurnEnd(SessionEventData):
    type: Literal["turn/end"] = "turn/end"
    turn: int
    reason: TurnEndReason
    error: dict[str, Any] | None = None
    #: why the turn was rejected or stopped, in words (a hook's ``stopReason`` ...)
    detail: str | None = None


class StepStart(SessionEventData):
    type: Literal["step/start"] = "step/start"
    turn: int
    step: int


class StepEnd(SessionEventData):
    type: Literal["step/end"] = "step/end"
    turn: int
    step: int


class UserMessageEvent(SessionEventData):
    type: Literal["user/message"] = "user/message"
    message: UserMessage


class SteeringMessage(SessionEventData):
    type: Literal["steering/message"] = "steering/message"
    message: UserMessage


class AssistantChunk(SessionEventData):
    """A streamed fragment (recorded only when the agent records chunks)."""

    type: Literal["assistant/chunk"] = "assistant/chunk"
    turn: int
    step: int
    chunk: dict[str, Any]


class AssistantMessageEvent(SessionEventData):
    type: Literal["assistant/message"] = "assistant/message"
    message: AssistantMessage


class ToolCallEvent(SessionEventData):
    type: Literal["tool/call"] = "tool/call"
    call: ToolCallBlock
    invocation_id: str


class ToolResultEvent(SessionEventData):
    type: Literal["tool/result"] = "tool/result"
    message: ToolMessage
    invocation_id: str | None = None
    duration_ms: float | None = None


class ToolResultStored(SessionEventData):
    """A tool result too big for the model was cut; the whole of it is kept at ``path``.

    Logged right after the ``tool/result`` event of the call (which holds the cut form the
    model saw); ``size_bytes`` is the whole result's length and ``shown_bytes`` the part the
    model saw, in UTF-8 bytes (stored-event version 1 called them ``size`` and ``shown``).
    """

    type: Literal["tool/result/stored"] = "tool/result/stored"
    call_id: str
    invocation_id: str
    path: str
    size_bytes: int
    shown_bytes: int


class RequestHeader(SessionEventData):
    """The call configuration of a model request, logged before the request is sent."""

    type: Literal["request/header"] = "request/header"
    provider: str
    model: str
    max_tokens: int | None = None
    temperature: float | None = None
    tools: tuple[str, ...] = ()


class ModelError(SessionEventData):
    """A model call failed: the error as the loop saw it, never a message of the model.

    Logged once per failed attempt that ends the round (a ``request_error`` listener that
    answers ``Retry`` gets another attempt without one), and for a request refused before it
    was sent (``loop.context_window``).  The projection to messages skips it, so the next
    request does not carry the failure as if the model had said it.
    """

    type: Literal["model/error"] = "model/error"
    provider: str
    model: str
    #: 1 for the round's first attempt, 2 after one retry, ...
    attempt: int = 1
    code: str
    category: str
    message: str


class ModelSideCall(SessionEventData):
    """A model call made for the agent outside its conversation (an MCP server's sampling
    request, through :meth:`agentrig.agent.Agent.complete_aside`).

    What was asked and answered stays with whoever asked (``source``); the log keeps who
    asked, which model answered and what it cost, so the call counts in the run's usage and
    in every budget read from the log.  The projection to messages skips it.
    """

    type: Literal["model/side-call"] = "model/side-call"
    #: who asked (``mcp:<server>``)
    source: str
    provider: str
    model: str
    usage: Usage | None = None
    stop_reason: str | None = None


class ContextCompacted(SessionEventData):
    """The history the model sees was shortened: ``messages`` replace the first ``replaced``
    messages derived so far (the system head is not among them).

    The events it replaces stay in the log; only the projection to messages changes, so a
    resumed or exported session shows what the model saw after it.  ``messages`` typically
    hold a summary of the older turns (a labelled, untrusted user-role data message) and the
    older messages that were kept, with old tool results cleared.  ``usage`` is the summary
    call's (None when none was made or the provider reported nothing); ``tokens_before`` and
    ``tokens_after`` are the context size around it (after: an estimate).
    """

    type: Literal["context/compaction"] = "context/compaction"
    trigger: CompactionTrigger = "auto"
    strategy: str
    replaced: int = Field(ge=0)
    messages: tuple[
        Annotated[UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")], ...
    ] = ()
    tokens_before: int | None = None
    tokens_after: int | None = None
    usage: Usage | None = None
    #: the compaction instructions a caller or a ``PreCompact`` hook gave
    instructions: str | None = None


class SystemPrompt(SessionEventData):
    """The system prompt entered the session (first injection, or a live update)."""

    type: Literal["system/prompt"] = "system/prompt"
    text: str


class InboxSpliced(SessionEventData):
    """A durable inbox mutation: ``removed`` ids left ``target``, ``inserted`` entered it."""

    type: Literal["agent/inbox/spliced"] = "agent/inbox/spliced"
    target: Literal["next-turn", "next-step"]
    index: int = 0
    removed: tuple[str, ...] = ()
    inserted: tuple[UserMessage, ...] = ()
    cause: Literal["append", "prepend", "replace", "remove", "clear", "claim"] = "append"


class Notice(SessionEventData):
    """Something shown to the user, never to the model (a hook's ``systemMessage`` ...).

    ``source`` names who said it (``hook PreToolUse[0] (command)``), ``kind`` what it is:
    ``message`` (``systemMessage``), ``stop`` (``continue: false`` with its ``stopReason``),
    ``blocked`` (a refusal the user should see), ``output`` or ``error``.
    """

    type: Literal["notice"] = "notice"
    source: str
    kind: NoticeKind = "message"
    text: str


class SessionLineage(SessionEventData):
    """Where the session comes from: ``delegated`` sessions name the parent agent and session
    that delegated to them and how deep in the chain they are; ``forked`` ones the session
    whose log they copied up to ``fork_point`` (its ``seq``); ``handoff`` ones both: the agent
    that handed the conversation over, and the copy of its log they continue."""

    type: Literal["session/lineage"] = "session/lineage"
    origin: Literal["created", "delegated", "forked", "handoff"]
    parent_agent: str | None = None
    parent_session: str | None = None
    depth: int = Field(default=0, ge=0)
    #: the configured agent the session's agent was made from
    configured_as: str | None = None
    #: a fork's last copied event (``seq`` in the parent's log and in this one)
    fork_point: int | None = Field(default=None, ge=0)


SESSION_EVENTS: VariantRegistry[SessionEventData] = VariantRegistry(
    SessionEventData, loader=register_variants
)
#: the members core declares (a plugin's own join them in the registry, not here)
CORE_EVENTS: tuple[type[SessionEventData], ...] = (
    TurnStart,
    TurnEnd,
    StepStart,
    StepEnd,
    UserMessageEvent,
    SteeringMessage,
    AssistantChunk,
    AssistantMessageEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolResultStored,
    RequestHeader,
    ModelError,
    ModelSideCall,
    ContextCompacted,
    SystemPrompt,
    InboxSpliced,
    Notice,
    SessionLineage,
)
SESSION_EVENTS.register_all(CORE_EVENTS, source="agentrig")


def event_usage(data: SessionEventData) -> Usage | None:
    """The usage a model call recorded in ``data``: an assistant reply's, a compaction's
    summary call's, a side call's (None for every other event, or when none was reported).

    Every sum of a session's spending reads events through this one function, so a new kind
    of model call cannot be left out of one budget and counted in another.
    """
    if isinstance(data, AssistantMessageEvent):
        return data.message.usage
    if isinstance(data, ContextCompacted | ModelSideCall):
        return data.usage
    return None


class TraceIds(BaseModel):
    """The W3C trace id and span id (lowercase hex) of the span that produced an event."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    trace_id: str
    span_id: str


def _absent(value: object) -> bool:
    return value is None


class SessionEvent(BaseModel):
    """One log entry: ``seq`` (1-based, monotonic), ``time`` (unix seconds) and ``data``.

    ``trace`` names the span that produced it when a tracing plugin is active (see
    ``agentrig.tracing.TraceContext``); without one it is absent, also from the stored form.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int
    time: float
    data: SESSION_EVENTS.annotation()  # type: ignore[valid-type]
    trace: TraceIds | None = Field(default=None, exclude_if=_absent)

    @property
    def type(self) -> str:
        return self.data.type  # type: ignore[no-any-return]
