"""The journal's durable records and the execution state rebuilt from them.

Every record belongs to one execution (``run_id``) and has a stable ``key`` within it:

=================  ======================  =============================================
kind               key                     written
=================  ======================  =============================================
``execution``      ``execution``           once, before the execution's first intent
``model/intent``   ``m<n>`` / ``c<n>``     before the provider call is made (``c``: the
                                           summary call of a compaction, not a round)
``model/result``   ``m<n>`` / ``c<n>``     after the call settled (completed, interrupted
                                           or failed), joining a cancelled call
``tool/intent``    ``m<n>/<call id>``      before the effect starts, with the arguments
                                           the tool actually runs with
``tool/intent``    ``m<n>/<call id>#<a>``  a re-run (attempt ``a`` >= 2) of an effect a crash
                                           cut off, for an idempotent tool only
``tool/result``    ``m<n>/<call id>``      after the effect settled (whichever attempt)
=================  ======================  =============================================

A key is written at most once per kind: a second write of the same record is refused, so
no effect or model call can be journaled as started twice.  The one exception is explicit:
an effect of an idempotent tool (declared ``idempotent``, or of ``inspect`` risk) that
started and never settled may be journaled as started again, as the next attempt, before
continuation runs it again -- each attempt under its own key, so two processes can never
start the same attempt.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

import attrs
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agentrig.ids import AgentId, CallId, InvocationId, RunId, SessionId
from agentrig.llm import AssistantMessage, ModelRequest, ToolMessage
from agentrig.schemas import SCHEMAS, VersionedJson

__all__ = [
    "JOURNAL_RECORD_CODEC",
    "JOURNAL_RECORD_SCHEMA",
    "ExecutionLimits",
    "ExecutionRecord",
    "ExecutionState",
    "JournalRecord",
    "ModelCall",
    "ModelIntent",
    "ModelSettlement",
    "ToolEffect",
    "ToolIntent",
    "ToolSettlement",
    "request_digest",
]

_CONFIG = ConfigDict(frozen=True, extra="forbid")


class ExecutionLimits(BaseModel):
    """The limits an execution started with (continuation keeps them)."""

    model_config = _CONFIG

    max_rounds: int
    identical_input_limit: int
    tool_only_completion: bool = False


class ExecutionRecord(BaseModel):
    """An execution: who ran, with which provider, limits and tool residency."""

    model_config = _CONFIG

    kind: Literal["execution"] = "execution"
    run_id: RunId
    agent_id: AgentId
    session_id: SessionId
    provider: str
    model: str
    limits: ExecutionLimits
    tools: tuple[str, ...] = ()
    resident: tuple[str, ...] = ()
    at: float = Field(default_factory=time.time)

    @property
    def key(self) -> str:
        return "execution"


class ModelIntent(BaseModel):
    """A model call about to be made (durable before the provider is called)."""

    model_config = _CONFIG

    kind: Literal["model/intent"] = "model/intent"
    run_id: RunId
    call_id: InvocationId
    digest: str
    model: str
    tools: tuple[str, ...] = ()
    at: float = Field(default_factory=time.time)

    @property
    def key(self) -> str:
        return self.call_id


class ModelSettlement(BaseModel):
    """How a model call settled; ``message`` is what it returned (partial when interrupted)."""

    model_config = _CONFIG

    kind: Literal["model/result"] = "model/result"
    run_id: RunId
    call_id: InvocationId
    outcome: Literal["completed", "interrupted", "failed"]
    message: AssistantMessage | None = None
    error: str | None = None
    reconciled: bool = False
    at: float = Field(default_factory=time.time)

    @property
    def key(self) -> str:
        return self.call_id


class ToolIntent(BaseModel):
    """An effect about to start, with the arguments it actually runs with."""

    model_config = _CONFIG

    kind: Literal["tool/intent"] = "tool/intent"
    run_id: RunId
    invocation_id: InvocationId
    model_call_id: InvocationId | None
    call_id: CallId
    tool: str
    arguments: dict[str, Any]
    at: float = Field(default_factory=time.time)

    @property
    def key(self) -> str:
        return self.invocation_id

    @property
    def effect_id(self) -> str:
        """The effect this intent starts: its invocation id without an attempt suffix."""
        if self.attempt == 1:
            return self.invocation_id
        return f"{self.model_call_id or 'direct'}/{self.call_id}"

    @property
    def attempt(self) -> int:
        """1 for the first start; ``a`` for a re-run journaled as ``<effect id>#<a>``."""
        base = f"{self.model_call_id or 'direct'}/{self.call_id}#"
        suffix = self.invocation_id.removeprefix(base)
        if suffix != self.invocation_id and suffix.isdigit() and int(suffix) >= 2:
            return int(suffix)
        return 1


class ToolSettlement(BaseModel):
    """The settled result of an effect: the full message the model was (or will be) given."""

    model_config = _CONFIG

    kind: Literal["tool/result"] = "tool/result"
    run_id: RunId
    invocation_id: InvocationId
    message: ToolMessage
    reconciled: bool = False
    at: float = Field(default_factory=time.time)

    @property
    def key(self) -> str:
        return self.invocation_id


JournalRecord = Annotated[
    ExecutionRecord | ModelIntent | ModelSettlement | ToolIntent | ToolSettlement,
    Field(discriminator="kind"),
]
"""Any journal record (discriminated by ``kind``)."""

RECORD_ADAPTER: TypeAdapter[
    ExecutionRecord | ModelIntent | ModelSettlement | ToolIntent | ToolSettlement
] = TypeAdapter(JournalRecord)


JOURNAL_RECORD_SCHEMA = "agentrig.journal.record"
"""The persisted schema of journal records: version 1 (records written before versions
existed carry no ``v`` and are version 1 too)."""
SCHEMAS.define(JOURNAL_RECORD_SCHEMA, 1, RECORD_ADAPTER)

JOURNAL_RECORD_CODEC: VersionedJson[
    ExecutionRecord | ModelIntent | ModelSettlement | ToolIntent | ToolSettlement
] = VersionedJson(
    SCHEMAS,
    JOURNAL_RECORD_SCHEMA,
    from_json=RECORD_ADAPTER.validate_json,
    from_data=RECORD_ADAPTER.validate_python,
)


def dump_record(record: BaseModel, codec: VersionedJson[Any] = JOURNAL_RECORD_CODEC) -> str:
    """A record as compact JSON naming its version first (``{"v":1,"kind":...}``)."""
    body = json.dumps(record.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))
    return codec.dump(body)


def parse_record(
    body: str | bytes,
) -> ExecutionRecord | ModelIntent | ModelSettlement | ToolIntent | ToolSettlement:
    """A stored record of any readable version (a newer one is refused by name)."""
    return JOURNAL_RECORD_CODEC.parse(body)


def request_digest(request: ModelRequest) -> str:
    """A stable SHA-256 of what a model request asks (messages, tools, settings)."""
    body = {
        "model": request.model,
        "messages": [m.model_dump(mode="json") for m in request.messages],
        "tools": [t.model_dump(mode="json") for t in request.tools],
        "tool_choice": request.tool_choice,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "options": dict(request.options),
    }
    rendered = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(rendered.encode()).hexdigest()


# ---- the rebuilt state ---------------------------------------------------------------------


@attrs.define(slots=True)
class ModelCall:
    """One model call of an execution: its intent and, once settled, its settlement."""

    intent: ModelIntent
    result: ModelSettlement | None = None

    @property
    def call_id(self) -> InvocationId:
        return self.intent.call_id

    @property
    def compaction(self) -> bool:
        """A compaction's summary call (``c<n>``): journaled, but not a round of the turn."""
        return self.intent.call_id.startswith("c")


@attrs.define(slots=True)
class ToolEffect:
    """One effect of an execution: its intent and, once settled, its settlement."""

    intent: ToolIntent
    result: ToolSettlement | None = None
    #: the intents of its re-runs after crashes (attempts 2, 3, ...), in order
    reruns: list[ToolIntent] = attrs.field(factory=list)

    @property
    def invocation_id(self) -> str:
        return self.intent.invocation_id

    @property
    def attempt(self) -> int:
        """How many times the effect was journaled as started."""
        return 1 + len(self.reruns)


@attrs.define(slots=True)
class ExecutionState:
    """An execution as the journal proves it, rebuilt from its records in order."""

    record: ExecutionRecord
    model_calls: list[ModelCall] = attrs.field(factory=list)
    effects: dict[str, ToolEffect] = attrs.field(factory=dict)

    @property
    def run_id(self) -> str:
        return self.record.run_id

    def call(self, call_id: str) -> ModelCall | None:
        for call in self.model_calls:
            if call.call_id == call_id:
                return call
        return None

    def next_call_id(self, *, compaction: bool = False) -> InvocationId:
        return InvocationId(f"{'c' if compaction else 'm'}{len(self.model_calls) + 1}")

    @property
    def rounds(self) -> list[ModelCall]:
        """The turn's model calls (a compaction's summary calls left out)."""
        return [c for c in self.model_calls if not c.compaction]

    def latest_settled(self) -> ModelCall | None:
        """The latest round with a recorded response message."""
        for call in reversed(self.model_calls):
            if not call.compaction and call.result is not None and call.result.message is not None:
                return call
        return None

    def rounds_used(self) -> int:
        return sum(
            1 for c in self.rounds if c.result is not None and c.result.outcome == "completed"
        )

    def summary(self, digest: str) -> AssistantMessage | None:
        """The recorded answer of a completed summary call that asked ``digest`` (a
        compaction repeated after a restart reuses it instead of asking again)."""
        for call in self.model_calls:
            result = call.result
            if (
                call.compaction
                and call.intent.digest == digest
                and result is not None
                and result.outcome == "completed"
                and result.message is not None
            ):
                return result.message
        return None

    def unsettled_calls(self) -> list[ModelCall]:
        return [c for c in self.model_calls if c.result is None]

    def unsettled_effects(self) -> list[ToolEffect]:
        return [e for e in self.effects.values() if e.result is None]

    def apply(self, record: JournalRecordType) -> None:
        """Fold one more record in (the journal checks order before writing)."""
        if isinstance(record, ModelIntent):
            self.model_calls.append(ModelCall(record))
        elif isinstance(record, ModelSettlement):
            call = self.call(record.call_id)
            if call is not None:
                call.result = record
        elif isinstance(record, ToolIntent):
            if record.attempt == 1:
                self.effects[record.invocation_id] = ToolEffect(record)
            elif (rerun := self.effects.get(record.effect_id)) is not None:
                rerun.reruns.append(record)
        elif isinstance(record, ToolSettlement):
            effect = self.effects.get(record.invocation_id)
            if effect is not None:
                effect.result = record

    @classmethod
    def rebuild(cls, records: Sequence[JournalRecordType]) -> ExecutionState | None:
        state: ExecutionState | None = None
        for record in records:
            if isinstance(record, ExecutionRecord):
                state = cls(record)
            elif state is not None:
                state.apply(record)
        return state


JournalRecordType = ExecutionRecord | ModelIntent | ModelSettlement | ToolIntent | ToolSettlement


def arguments_of(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON-safe copy of a call's arguments (what the intent records)."""
    loaded: dict[str, Any] = json.loads(json.dumps(dict(arguments), default=str))
    return loaded
