"""What a run returns, and the errors the loop raises."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Generic, Literal, TypeVar, final

import attrs

from agentrig.agent._config import thaw
from agentrig.errors import AbortError, AgentrigError, Issue
from agentrig.ids import AgentId, CallId, InvocationId, RunId, SessionId
from agentrig.llm import EffortDisposition, EffortResolution, ReasoningEffort, ToolMessage, Usage

__all__ = [
    "ContextWindowError",
    "DeadlineExceededError",
    "DelegationError",
    "IdenticalToolInputError",
    "ModelResponseFailure",
    "ReasoningAudit",
    "RefusalCode",
    "RefusedCall",
    "ResponseFailureKind",
    "RunOutcome",
    "RunRecord",
    "RunResult",
    "StructuredOutputError",
    "ToolCallRecord",
    "ToolChoiceViolationError",
    "ToolResult",
]

T = TypeVar("T")
#: how a run ended: ``completed``; ``interrupted`` (its caller cancelled it); ``timeout`` (its
#: own deadline passed -- the only thing that ends a run so; a tool's or a provider's own
#: timeout is an ordinary failure); ``model_response_failure`` (the agent classifies model
#: replies and the model refused, was stopped by a content filter, or reported an error)
RunOutcome = Literal["completed", "interrupted", "timeout", "model_response_failure"]
#: what a classified reply reports: the model refused, the provider's content filter stopped
#: it, or the provider reported an error as the reply's stop reason
ResponseFailureKind = Literal["refusal", "content_filter", "error"]
#: why a model's tool call did not run: the gate (permission rules, hooks, an approver) or the
#: tool's ``authorize`` refused it, no such tool exists, its arguments did not validate, or the
#: loop settled it without running it (a stop, a cancellation, a guard, a spent budget)
RefusalCode = Literal["denied", "unknown_tool", "invalid_input", "not_executed"]


@attrs.frozen(slots=True)
class RefusedCall:
    """A tool call of the run that was answered without the tool having done its work."""

    call_id: CallId
    #: the tool's name as the model called it (it may name no tool)
    tool: str
    code: RefusalCode
    #: the result text the model was given for the call
    reason: str


@attrs.frozen(slots=True)
class ModelResponseFailure:
    """A model reply that reports a failure instead of an answer.

    Kept only when the agent classifies replies (``classify_model_responses``): without it a
    refusal is an ordinary answer whose text the caller reads.  This says what the reply
    itself reported; a raised error (a 429, a dropped stream) is still an exception.
    """

    kind: ResponseFailureKind
    #: the vendor's own stop value (``content_filter``, ``refusal`` ...), unmapped
    provider_stop_reason: str | None
    #: the reply's text as the model or provider gave it (OpenAI's ``refusal`` text ...)
    text: str
    #: the model that answered, when the provider named it
    model: str | None = None


_NO_REPORT = "the provider reported no effort resolution"
#: the (frozen, shared) body fields of a request that sent no effort control
_NOTHING_SENT: Mapping[str, Any] = EffortResolution(None, "not_applied").native


@final
@attrs.frozen(slots=True)
class ReasoningAudit:
    """What became of one model request's reasoning effort: what was asked, how the provider
    resolved it, and whether a native control really went out.

    ``dispatched`` is true only when the provider reported sending the request (see
    :func:`agentrig.llm.report_effort`); a provider that did not report, or a call refused
    before it was sent, is recorded ``not_applied`` with nothing sent -- so the record never
    claims a control that is not known to have been on the wire.
    """

    provider: str
    model: str
    #: the model round of the run (from 1) and the attempt of that round (from 1)
    round: int
    attempt: int
    requested: ReasoningEffort | None
    disposition: EffortDisposition
    #: the level in effect (the request's, or the one it was clamped to); None: the model's own
    effective: ReasoningEffort | None
    #: the request body fields that carried the control (empty: none was sent)
    native: Mapping[str, Any]
    reason: str | None
    dispatched: bool

    @property
    def native_sent(self) -> bool:
        """Did a native effort control go out with a dispatched request?"""
        return self.dispatched and bool(self.native)

    @classmethod
    def of(
        cls,
        provider: str,
        model: str,
        position: tuple[int, int],
        requested: ReasoningEffort | None,
        reports: Sequence[EffortResolution],
    ) -> ReasoningAudit:
        """The audit of a request at ``position`` (round, attempt) from what its provider
        reported while it was called (the last report is the request that answered)."""
        round, attempt = position
        if not reports:  # nothing is known to have gone out
            return cls(provider, model, round, attempt, requested, "not_applied", None,
                       _NOTHING_SENT, _NO_REPORT, False)  # fmt: skip
        reported = reports[-1]  # the fields in their order (a keyword call costs a third more)
        return cls(provider, model, round, attempt, reported.requested, reported.disposition,
                   reported.effective, reported.native, reported.reason, True)  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (``native`` as plain dicts and lists), the fields in their order.

        Written out rather than walked over ``attrs.fields_dict``: every ``model_call``
        observation carries one, and the walk was a third of what the loop spends building
        observations (a test checks the keys against the fields).
        """
        native = self.native
        return {
            "provider": self.provider,
            "model": self.model,
            "round": self.round,
            "attempt": self.attempt,
            "requested": self.requested,
            "disposition": self.disposition,
            "effective": self.effective,
            "native": thaw(native) if native else {},  # most requests send no control
            "reason": self.reason,
            "dispatched": self.dispatched,
            "native_sent": self.dispatched and bool(native),  # native_sent, without a call
        }


@attrs.frozen(slots=True)
class RunRecord:
    """The invocation record of one run: ids, timings, and usage when it was reported.

    ``usage`` is everything the run's model calls reported, the summary calls of its
    compactions and its side calls (an MCP server's sampling) included; ``compaction_usage``
    and ``side_usage`` are those parts alone.
    """

    run_id: RunId
    invocation_id: InvocationId
    agent_id: AgentId
    session_id: SessionId
    turn: int
    started_at_ms: int
    duration_ms: float
    outcome: RunOutcome
    rounds: int
    model: str | None
    usage: Usage | None
    structured_attempts: int = 0
    #: why the run ended early, in words (a hook's ``continue: false`` + ``stopReason``, a
    #: ``UserPromptSubmit`` block ...); shown to the user, never to the model
    stop_reason: str | None = None
    #: what the run's hooks had to say to the user (``systemMessage`` ...), in order
    notices: tuple[str, ...] = ()
    #: the records of the sub-agents its delegation calls ran, in the order they finished
    subagents: tuple[RunRecord, ...] = ()
    #: the run of the agent it handed the conversation to (a ``transfer_to_<id>`` call),
    #: which answered in its place
    handoff: RunRecord | None = None
    #: what the summary calls of the run's compactions reported (a part of ``usage``)
    compaction_usage: Usage | None = None
    #: what the side calls made for the run reported (``Agent.complete_aside``: an MCP
    #: server's sampling requests; a part of ``usage``)
    side_usage: Usage | None = None
    #: the classified failure the last reply reported (outcome ``model_response_failure``)
    response_failure: ModelResponseFailure | None = None
    #: how each model request of the run resolved its reasoning effort, in order
    reasoning: tuple[ReasoningAudit, ...] = ()

    @property
    def total_usage(self) -> Usage | None:
        """``usage`` plus every sub-agent's and the handoff's ``total_usage`` (None:
        nothing was reported)."""
        more = [child.total_usage for child in self.subagents]
        if self.handoff is not None:
            more.append(self.handoff.total_usage)
        return sum_usage([self.usage, *more])

    @property
    def final_agent(self) -> AgentId:
        """The agent that answered: this run's, or the last one handed the conversation."""
        record = self
        while record.handoff is not None:
            record = record.handoff
        return record.agent_id


@final
@attrs.frozen(slots=True)
class RunResult(Generic[T]):
    """The one shape ``run()`` returns: ``value`` and its ``invocation`` record.

    ``value`` is the final text, or the validated model when ``output_type`` was given.  A
    run cancelled while in flight still returns (``invocation.outcome == "interrupted"``) with
    the partial text committed before the abort; one that ran past its deadline returns the
    same way with ``outcome == "timeout"``.  An agent that classifies replies ends a refused
    or filtered one with ``outcome == "model_response_failure"`` and ``response_failure``
    set; ``value`` is then the reply's text.  ``refused`` lists the tool calls the model
    made that were refused, skipped or settled without running.
    """

    value: T
    invocation: RunRecord
    #: the run's tool calls that did not run, in the order they were answered
    refused: tuple[RefusedCall, ...] = ()

    @property
    def interrupted(self) -> bool:
        """Was the run cancelled by its caller (not: did its deadline pass)?"""
        return self.invocation.outcome == "interrupted"

    @property
    def timed_out(self) -> bool:
        """Did the run's own deadline end it?"""
        return self.invocation.outcome == "timeout"

    @property
    def response_failure(self) -> ModelResponseFailure | None:
        """The refusal, content-filter stop or reported error that ended the run, when the
        agent classifies model replies (None: an ordinary answer, or classification off)."""
        return self.invocation.response_failure


class StructuredOutputError(AgentrigError):
    """The model's answer did not validate against ``output_type`` within the retry budget."""

    code = "output.invalid"
    category = "provider"

    def __init__(self, message: str, *, issues: Sequence[Issue], attempts: int, text: str) -> None:
        super().__init__(message, issues=issues)
        self.attempts = attempts
        self.text = text


class DelegationError(AgentrigError):
    """A delegation was refused (no such sub-agent, too deep, too many children) or its
    child was interrupted; ``code`` says which (``delegation.depth`` ...)."""

    code = "delegation.refused"
    category = "user"
    recoverable = True


class IdenticalToolInputError(AgentrigError):
    """The same tool was called with byte-identical input too often in one run."""

    code = "loop.identical_tool_input"
    category = "provider"
    recoverable = True


class DeadlineExceededError(AbortError):
    """A run went past its deadline: the reason its signal fired (the run ends ``timeout``)."""

    code = "loop.deadline"

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the run passed its deadline of {seconds:g}s", reason="deadline")
        self.seconds = seconds


class ContextWindowError(AgentrigError):
    """The request would overflow the model's context window; it was not sent."""

    code = "loop.context_window"
    category = "user"


class ToolChoiceViolationError(AgentrigError):
    """The model called a tool although the run asked for ``tool_choice="none"``."""

    code = "loop.tool_choice_violation"
    category = "provider"


@attrs.frozen(slots=True)
class ToolCallRecord:
    """The invocation record of a direct tool call."""

    invocation_id: InvocationId
    agent_id: AgentId
    tool: str
    started_at_ms: int
    duration_ms: float
    executed: bool


@attrs.frozen(slots=True)
class ToolResult:
    """What ``agent.call_tool()`` returns: the tool message and its invocation record."""

    value: ToolMessage
    invocation: ToolCallRecord


def sum_usage(items: Sequence[Usage | None]) -> Usage | None:
    """Add the reported usages; None when nothing was reported (never a fabricated zero)."""
    total: Usage | None = None
    for item in items:
        if item is None:
            continue
        total = item if total is None else total.add(item)
    return total
