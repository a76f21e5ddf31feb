"""Stream chunks and the assembler that turns a chunk stream into an assistant message.

Chunks form the ``stream_chunk`` variant family (:data:`STREAM_CHUNKS`).  A provider's
streaming path yields chunks; :class:`StreamAssembler` folds them into the same
:class:`~agentrig.llm.AssistantMessage` the provider's non-streaming path returns for the same
response.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar, Literal

from agentrig.messages._build import build
from agentrig.messages._content import (
    ContentBlock,
    ProviderStateBlock,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
)
from agentrig.messages._literals import StopReason
from agentrig.messages._messages import AssistantMessage
from agentrig.messages._usage import Usage
from agentrig.variants import Variant, VariantRegistry, discovered_members

__all__ = [
    "STREAM_CHUNKS",
    "FinishChunk",
    "ProviderStateChunk",
    "ReasoningDelta",
    "StreamAssembler",
    "StreamChunk",
    "TextDelta",
    "ToolResultChunk",
    "ToolCallDelta",
    "ToolCallStart",
    "UsageChunk",
    "message_chunks",
]


class StreamChunk(Variant):
    """Base of the ``stream_chunk`` family.

    Chunks are built validated, also by the ``of`` constructors: pydantic's validation (in
    Rust) is faster than ``model_construct``, and a chunk is passed on and dropped, so the
    fields-set each instance gets costs no retained memory (``benchmarks/README.md``).
    """

    family: ClassVar[str] = "stream_chunk"


class TextDelta(StreamChunk):
    """More answer text."""

    type: Literal["text_delta"] = "text_delta"
    text: str

    @classmethod
    def of(cls, text: str) -> TextDelta:
        """``TextDelta(text=text)``: the per-token constructor adapters call (see
        :class:`StreamChunk` on why chunks are validated)."""
        return cls(text=text)


class ReasoningDelta(StreamChunk):
    """More displayable reasoning text."""

    type: Literal["reasoning_delta"] = "reasoning_delta"
    text: str

    @classmethod
    def of(cls, text: str) -> ReasoningDelta:
        """``ReasoningDelta(text=text)``, as :meth:`TextDelta.of`."""
        return cls(text=text)


class ToolCallStart(StreamChunk):
    """A tool call begins; ``index`` identifies it among parallel calls of this response."""

    type: Literal["tool_call_start"] = "tool_call_start"
    index: int
    id: str
    name: str

    @classmethod
    def of(cls, index: int, id: str, name: str) -> ToolCallStart:
        """``ToolCallStart(index=index, id=id, name=name)``, as :meth:`TextDelta.of`."""
        return cls(index=index, id=id, name=name)


class ToolCallDelta(StreamChunk):
    """A raw JSON fragment of the arguments of call ``index``."""

    type: Literal["tool_call_delta"] = "tool_call_delta"
    index: int
    arguments: str

    @classmethod
    def of(cls, index: int, arguments: str) -> ToolCallDelta:
        """``ToolCallDelta(index=index, arguments=arguments)``, as :meth:`TextDelta.of`."""
        return cls(index=index, arguments=arguments)


class ProviderStateChunk(StreamChunk):
    """A complete provider-state block, emitted once the provider has finished it."""

    type: Literal["provider_state"] = "provider_state"
    block: ProviderStateBlock


class UsageChunk(StreamChunk):
    """Token usage so far; may come several times, the last one wins."""

    type: Literal["usage"] = "usage"
    usage: Usage

    @classmethod
    def of(cls, usage: Usage) -> UsageChunk:
        """``UsageChunk(usage=usage)``, as :meth:`TextDelta.of` (a built :class:`Usage` is
        taken as it is, not validated again)."""
        return cls(usage=usage)


class FinishChunk(StreamChunk):
    """The response is complete.

    ``continuation`` carries the provider's opaque continuation text, if any, so a streamed
    reply can keep it exactly as a non-streamed one does.  ``response_id`` is the provider's
    id of the response (OpenAI's ``chatcmpl-...``, Anthropic's ``msg_...``), for telemetry;
    it is not part of the message.
    """

    type: Literal["finish"] = "finish"
    stop_reason: StopReason
    provider_stop_reason: str | None = None
    model: str | None = None
    continuation: str | None = None
    response_id: str | None = None

    @classmethod
    def of(cls, stop_reason: StopReason, *, provider_stop_reason: str | None = None) -> FinishChunk:
        """``FinishChunk(stop_reason=..., provider_stop_reason=...)``, as
        :meth:`TextDelta.of`."""
        return cls(stop_reason=stop_reason, provider_stop_reason=provider_stop_reason)


class ToolResultChunk(StreamChunk):
    """A tool call settled during a streamed run (added by the agent loop, not by providers)."""

    type: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    status: str
    text: str


STREAM_CHUNKS: VariantRegistry[StreamChunk] = VariantRegistry(
    StreamChunk, loader=discovered_members
)
"""The ``stream_chunk`` family."""

STREAM_CHUNKS.register_all(
    (
        TextDelta,
        ReasoningDelta,
        ToolCallStart,
        ToolCallDelta,
        ProviderStateChunk,
        UsageChunk,
        FinishChunk,
        ToolResultChunk,
    ),
    source="agentrig",
)


class _Text:
    __slots__ = ("parts",)

    def __init__(self, text: str) -> None:
        self.parts = [text]


class _Reasoning(_Text):
    __slots__ = ()


class _ToolCall:
    __slots__ = ("id", "name", "parts")

    def __init__(self, id: str, name: str) -> None:
        self.id = id
        self.name = name
        self.parts: list[str] = []


_Slot = _Text | _ToolCall | ProviderStateBlock


class StreamAssembler:
    """Folds stream chunks into an :class:`AssistantMessage`.

    Blocks keep the order in which they first appeared.  Consecutive text deltas form one text
    block (likewise reasoning); a text delta after any other block starts a new one.  Tool-call
    arguments are collected per ``index`` (deltas of parallel calls may interleave) and parsed
    as JSON only when the message is built.  The last usage chunk wins; the last finish chunk
    gives the stop reason, model and continuation.  Chunks of plugin variants are ignored.
    """

    __slots__ = ("_calls", "_finish", "_slots", "_usage")

    def __init__(self) -> None:
        self._slots: list[_Slot] = []
        self._calls: dict[int, _ToolCall] = {}
        self._usage: Usage | None = None
        self._finish: FinishChunk | None = None

    @property
    def response_id(self) -> str | None:
        """The provider's id of the response, from the finish chunk (None before it)."""
        return self._finish.response_id if self._finish is not None else None

    def feed(self, chunk: StreamChunk) -> None:
        """Take one chunk."""
        if type(chunk) is TextDelta:  # once per token: the common case first, inlined
            slots = self._slots
            if slots and type(last := slots[-1]) is _Text:
                last.parts.append(chunk.text)
            else:
                slots.append(_Text(chunk.text))
            return
        # the others by their exact class (one lookup, not a chain of isinstance checks on
        # pydantic's metaclass); a subclass is resolved once, as the chain would
        kind = type(chunk)
        take = _TAKE.get(kind) or _take_for(kind)
        take(self, chunk)

    def _text(self, chunk: TextDelta) -> None:
        self._append_text(_Text, chunk.text)

    def _reasoning(self, chunk: ReasoningDelta) -> None:
        self._append_text(_Reasoning, chunk.text)

    def _call_delta(self, chunk: ToolCallDelta) -> None:
        self._call(chunk.index).parts.append(chunk.arguments)

    def _call_start(self, chunk: ToolCallStart) -> None:
        call = self._calls.get(chunk.index)
        if call is None:
            call = self._calls[chunk.index] = _ToolCall(chunk.id, chunk.name)
            self._slots.append(call)
        else:  # a repeated start (some servers resend it) fills what was missing
            call.id = call.id or chunk.id
            call.name = call.name or chunk.name

    def _state(self, chunk: ProviderStateChunk) -> None:
        self._slots.append(chunk.block)

    def _take_usage(self, chunk: UsageChunk) -> None:
        self._usage = chunk.usage

    def _take_finish(self, chunk: FinishChunk) -> None:
        self._finish = chunk

    def _ignore(self, chunk: StreamChunk) -> None:
        """Chunks of plugin variants carry nothing the message holds."""

    def _append_text(self, kind: type[_Text], text: str) -> None:
        last = self._slots[-1] if self._slots else None
        if isinstance(last, _Text) and type(last) is kind:
            last.parts.append(text)
        else:
            self._slots.append(kind(text))

    def _call(self, index: int) -> _ToolCall:
        call = self._calls.get(index)
        if call is None:  # arguments before any start: the id and name are unknown
            call = self._calls[index] = _ToolCall("", "")
            self._slots.append(call)
        return call

    @property
    def usage(self) -> Usage | None:
        """The latest usage seen, if any."""
        return self._usage

    @property
    def finished(self) -> bool:
        """Whether a finish chunk arrived."""
        return self._finish is not None

    def message(self, *, interrupted: bool = False) -> AssistantMessage:
        """The assistant message assembled so far.

        May be called before the stream finished (``interrupted=True`` for a reply cut short):
        the partial text is kept, and a partial tool-call argument text that is not valid JSON
        ends up in ``raw_arguments``.
        """
        content: list[ContentBlock] = []
        for slot in self._slots:
            if isinstance(slot, _ToolCall):
                content.append(ToolCallBlock.from_json(slot.id, slot.name, "".join(slot.parts)))
            elif isinstance(slot, _Reasoning):
                content.append(build(ReasoningBlock, {"text": "".join(slot.parts)}))
            elif isinstance(slot, _Text):
                content.append(build(TextBlock, {"text": "".join(slot.parts)}))
            else:
                content.append(slot)
        finish = self._finish
        values: dict[str, object] = {"content": tuple(content), "usage": self._usage}
        if finish is not None:
            values["stop_reason"] = finish.stop_reason
            values["provider_stop_reason"] = finish.provider_stop_reason
            values["model"] = finish.model
            values["continuation"] = finish.continuation
        if interrupted:
            values["interrupted"] = True
        return build(AssistantMessage, values)


_Take = Callable[[StreamAssembler, Any], None]
# in the order a chunk's class is matched (a subclass takes its first base's place)
_TAKERS: tuple[tuple[type[StreamChunk], _Take], ...] = (
    (TextDelta, StreamAssembler._text),
    (ReasoningDelta, StreamAssembler._reasoning),
    (ToolCallDelta, StreamAssembler._call_delta),
    (ToolCallStart, StreamAssembler._call_start),
    (ProviderStateChunk, StreamAssembler._state),
    (UsageChunk, StreamAssembler._take_usage),
    (FinishChunk, StreamAssembler._take_finish),
)
_TAKE: dict[type[Any], _Take] = {}


def _take_for(kind: type[Any]) -> _Take:
    take: _Take = StreamAssembler._ignore
    for base, taker in _TAKERS:
        if issubclass(kind, base):
            take = taker
            break
    if len(_TAKE) < 256:  # chunk classes are few; a stream of odd ones cannot grow this
        _TAKE[kind] = take
    return take


def message_chunks(message: AssistantMessage) -> list[StreamChunk]:
    """The chunks a stream of ``message`` would have carried, for a reply that arrived whole.

    The loop hands them to a streamed run's reader when the provider answered through its
    non-streaming call; a :class:`StreamAssembler` fed them rebuilds the message's text,
    reasoning, tool calls, provider state, usage and finish.  Image and file blocks have no
    chunk (the message itself keeps them).
    """
    chunks: list[StreamChunk] = []
    calls = 0
    for block in message.content:
        if isinstance(block, TextBlock):
            chunks.append(TextDelta.of(block.text))
        elif isinstance(block, ReasoningBlock):
            chunks.append(ReasoningDelta.of(block.text))
        elif isinstance(block, ToolCallBlock):
            chunks.append(ToolCallStart(index=calls, id=block.id, name=block.name))
            raw = block.raw_arguments
            if raw is None:
                raw = json.dumps(block.arguments) if block.arguments else ""
            if raw:
                chunks.append(ToolCallDelta.of(calls, raw))
            calls += 1
        elif isinstance(block, ProviderStateBlock):
            chunks.append(ProviderStateChunk(block=block))
    if message.usage is not None:
        chunks.append(UsageChunk(usage=message.usage))
    if message.stop_reason is not None:
        chunks.append(
            FinishChunk(
                stop_reason=message.stop_reason,
                provider_stop_reason=message.provider_stop_reason,
                model=message.model,
                continuation=message.continuation,
            )
        )
    return chunks
