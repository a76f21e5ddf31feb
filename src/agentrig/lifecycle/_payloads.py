"""Typed payloads of the agent lifecycle hooks (see :mod:`agentrig.lifecycle._hookspecs`).

Payloads are frozen attrs values: a listener that wants to change what flows through a
waterfall returns a new value (``attrs.evolve(payload, ...)``), never mutates one.  They carry
primitives only (ids, the message vocabulary, the cancel signal); what lives higher up (the
agent, its tools, the runtime) is typed here as a protocol or ``Any``, so every layer from the
contracts up may import them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, final, runtime_checkable

import attrs

from agentrig.cancel import CancelSignal
from agentrig.ids import AgentId, CallId, ProviderId, SessionId

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from agentrig.messages import (
        AssistantMessage,
        ReasoningEffort,
        ToolCallBlock,
        ToolMessage,
        Usage,
        UserMessage,
    )

__all__ = [
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
    "SESSION_END_REASONS",
    "SessionStart",
    "ToolExecution",
    "TurnStopping",
]

AgentStatus = Literal["idle", "running"]


@runtime_checkable
class AgentHandle(Protocol):
    """What a listener may do with an agent: read its identity and deliver input."""

    @property
    def id(self) -> AgentId: ...

    @property
    def session_id(self) -> SessionId: ...

    @property
    def status(self) -> AgentStatus: ...

    def steer(self, text: str, *, source: str = "steer") -> str:
        """Enter the current turn at its next step; returns the message id."""
        ...

    def followup(self, text: str, *, source: str = "followup") -> str:
        """Queue a new turn; returns the message id."""
        ...

    def inject(self, text: str, *, source: str = "inject") -> str:
        """Seed context for the next request without starting a turn; returns the message id."""
        ...


# ---- notifications -----------------------------------------------------------------------


SESSION_END_REASONS: frozenset[str] = frozenset(
    {"clear", "resume", "logout", "prompt_input_exit", "bypass_permissions_disabled", "other"}
)
"""Why a session ended: the values of Claude Code's ``SessionEnd`` ``reason`` field."""


@final
@attrs.frozen(slots=True)
class AgentCreated:
    """A fully set-up agent is about to be published (a sync listener error vetoes it)."""

    agent: AgentHandle


@final
@attrs.frozen(slots=True)
class AgentDisposed:
    """An agent left the registry after its runs settled.

    ``reason`` says why its session ended, in Claude Code's ``SessionEnd`` vocabulary
    (:data:`SESSION_END_REASONS`): ``prompt_input_exit`` when a person left the prompt,
    ``clear`` when they cleared the conversation, ``other`` otherwise.
    """

    agent_id: AgentId
    session_id: SessionId
    reason: str = "other"


@final
@attrs.frozen(slots=True)
class AgentStatusChanged:
    """An agent moved between ``idle`` and ``running``."""

    agent: AgentHandle
    status: AgentStatus


@final
@attrs.frozen(slots=True)
class SessionStart:
    """The agent's session lifecycle began (once, before its first turn).

    ``runtime`` is the runtime the agent lives in (its catalogs, agents and models), so a
    listener needs no other reference to act on it.
    """

    agent: AgentHandle
    runtime: Any


@final
@attrs.frozen(slots=True)
class Observation:
    """An out-of-band observation: ``kind`` says what happened, ``data`` holds its fields.

    The loop emits ``model_call``, ``tool_call`` and ``turn`` (each when it finished) and
    ``inbox.*``; ``docs/hooks.md`` lists every field of each kind.
    """

    kind: str
    agent_id: AgentId | None
    data: Mapping[str, Any] = attrs.field(factory=dict)


# ---- pre_step ----------------------------------------------------------------------------


@final
@attrs.frozen(slots=True)
class PreStep:
    """A proposed step: the claimed input batch and the step's coordinates."""

    agent: AgentHandle
    turn: int
    step: int
    messages: tuple[UserMessage, ...]
    signal: CancelSignal


@final
@attrs.frozen(slots=True)
class Enter:
    """Open the step with exactly these messages (claimed ones left out stay consumed)."""

    messages: tuple[UserMessage, ...]


@final
@attrs.frozen(slots=True)
class Reject:
    """Open no step; the turn closes. Claimed messages end here."""

    reason: str = "rejected"


PreStepDecision = Enter | Reject


# ---- request_config ------------------------------------------------------------------------


@final
@attrs.frozen(slots=True)
class RequestConfig:
    """The call configuration of one model request (replace it to switch model or limits)."""

    agent: AgentHandle
    provider: ProviderId
    model: str
    max_tokens: int | None = None
    temperature: float | None = None
    #: the level to ask for (``none`` ... ``max``, ``auto``); the provider resolves it and the
    #: run records how (``RunRecord.reasoning``)
    reasoning_effort: ReasoningEffort | None = None
    options: Mapping[str, Any] = attrs.field(factory=dict)


# ---- request_error -------------------------------------------------------------------------


@final
@attrs.frozen(slots=True)
class RequestError:
    """A failed model request, before its turn closes."""

    agent: AgentHandle
    error: BaseException
    attempt: int
    signal: CancelSignal


@final
@attrs.frozen(slots=True)
class Retry:
    """Returned by a ``request_error`` listener that owns recovery: try the request again."""


# ---- compaction ----------------------------------------------------------------------------


@final
@attrs.frozen(slots=True)
class CompactionRequest:
    """The history is to be shortened (``trigger``: ``auto`` past the configured share of the
    window, ``manual`` when asked).

    ``messages`` is the history the model sees, without the system prompt; ``used`` /
    ``window`` its size in tokens.  ``keep_last`` messages at the end are to stay as they
    are.  ``instructions`` are the caller's (or an earlier listener's) wishes for the summary.
    ``summarize(messages, instructions)`` asks the configured summary model for a summary of
    ``messages`` and returns its text and usage.
    """

    agent: AgentHandle
    trigger: Literal["auto", "manual"]
    messages: tuple[UserMessage | AssistantMessage | ToolMessage, ...]
    used: int
    window: int
    keep_last: int
    instructions: str | None
    signal: CancelSignal
    summarize: Callable[
        [Sequence[UserMessage | AssistantMessage | ToolMessage], str | None],
        Awaitable[tuple[str, Usage | None]],
    ]


@final
@attrs.frozen(slots=True)
class CompactionPlan:
    """What replaces the history's first ``replaced`` messages: ``messages`` (a summary as a
    labelled data message, kept messages with old tool results cleared ...).

    ``strategy`` names who made the plan (logged with the compaction); ``usage`` is the
    summary call's, ``instructions`` the ones it followed (a listener may have added some).
    """

    strategy: str
    replaced: int
    messages: tuple[UserMessage | AssistantMessage | ToolMessage, ...]
    usage: Usage | None = None
    instructions: str | None = None


# ---- tool_execution ------------------------------------------------------------------------


@final
@attrs.frozen(slots=True)
class ToolExecution:
    """One tool call about to run; ``next`` runs it (possibly with rewritten ``arguments``)."""

    agent: AgentHandle
    call: ToolCallBlock
    arguments: Mapping[str, Any]
    tool: Any
    signal: CancelSignal


# ---- turn_stopping -------------------------------------------------------------------------


@final
@attrs.frozen(slots=True)
class TurnStopping:
    """The turn has nothing left to do; steer the agent now to keep it going."""

    agent: AgentHandle
    turn: int
    last_message: AssistantMessage | None
    signal: CancelSignal


# ---- permission_approver -------------------------------------------------------------------


@final
@attrs.frozen(slots=True)
class PermissionQuestion:
    """A call the permission evaluator could not decide alone.

    ``call_id`` is the id of the tool call asked about; an ``Approval`` answer must carry it
    (``Approval.allow(call_id=payload.call_id)``), a plain ``"allow"``/``"deny"`` answers
    this question by being returned for it.

    ``always_ask`` is true for the cases asked in every mode, bypass included (an ask rule,
    a rule that cannot be evaluated, a catastrophic call): a remembered answer is not kept
    for them, and a blanket consent (the CLI's ``--yes``) does not answer them.
    """

    agent_id: AgentId | None
    tool: str
    arguments: Mapping[str, Any]
    reason: str
    rule: str | None = None
    call_id: CallId | None = None
    always_ask: bool = False


# ---- elicitation -----------------------------------------------------------------------------


@final
@attrs.frozen(slots=True)
class ElicitationQuestion:
    """Something other than the model asks the person for input (an MCP server's
    elicitation), usually in the middle of a tool call.

    ``source`` names the asker (``mcp:<server>``) so the person can tell who wants to know.
    In form mode ``schema`` is the flat JSON object schema the answer must match (each
    property a string, number, integer, boolean or enum); in URL mode ``url`` is a page the
    person is asked to open, and ``schema`` is None.  ``agent_id`` is the agent whose tool
    call the question belongs to, when known.
    """

    agent_id: AgentId | None
    source: str
    message: str
    schema: Mapping[str, Any] | None = None
    url: str | None = None

    @property
    def mode(self) -> Literal["form", "url"]:
        return "url" if self.url is not None else "form"


@final
@attrs.frozen(slots=True)
class ElicitationAnswer:
    """The person's answer: ``accept`` (with ``content`` in form mode), ``decline`` (an
    explicit no) or ``cancel`` (dismissed without choosing)."""

    action: Literal["accept", "decline", "cancel"] = attrs.field(
        validator=attrs.validators.in_(("accept", "decline", "cancel"))
    )
    content: Mapping[str, Any] | None = None

    @classmethod
    def accept(cls, content: Mapping[str, Any] | None = None) -> ElicitationAnswer:
        return cls("accept", content)

    @classmethod
    def decline(cls) -> ElicitationAnswer:
        return cls("decline")

    @classmethod
    def cancel(cls) -> ElicitationAnswer:
        return cls("cancel")
