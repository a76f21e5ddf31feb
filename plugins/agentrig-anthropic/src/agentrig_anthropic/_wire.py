"""Anthropic Messages wire format <-> agentrig's vocabulary.

Pure functions: the request body, the non-streaming response, and the SSE event reader.
Thinking and redacted-thinking blocks become :class:`~agentrig.llm.ProviderStateBlock` values
(``provider="anthropic"``, the vendor block verbatim) that are replayed unchanged, ahead of
the reply's other blocks, on the next request; a thinking block's text is also given as a
:class:`~agentrig.llm.ReasoningBlock` for display (never replayed).  Both paths produce the
same block sequence, so ``complete()`` and ``stream()`` give equal messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agentrig.llm import (
    BODY_FIELDS,
    AssistantMessage,
    CapabilityError,
    ContentBlock,
    FileBlock,
    FinishChunk,
    ImageBlock,
    Message,
    ModelRequest,
    ProviderStateBlock,
    ProviderStateChunk,
    ReasoningBlock,
    ReasoningDelta,
    StopReason,
    StreamChunk,
    SystemMessage,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    ToolCallStart,
    ToolMessage,
    ToolSpec,
    Usage,
    UsageChunk,
    UserMessage,
    reserved_option_error,
)
from agentrig.tools.schema import ANTHROPIC, Adapted, Rejected, describe_with_note, project_schema

__all__ = [
    "KIND",
    "RESERVED_OPTIONS",
    "STOP_DETAILS",
    "STOP_REASONS",
    "EventReader",
    "build_body",
    "message_from_body",
    "schema_instruction",
    "stop_reason",
    "usage_from",
]

KIND = "anthropic"

STOP_REASONS: Mapping[str, StopReason] = {
    "end_turn": "end",
    "max_tokens": "length",
    "stop_sequence": "stop_sequence",
    "tool_use": "tool_calls",
    "refusal": "refusal",
    "pause_turn": "other",
    "model_context_window_exceeded": "length",
}
"""``stop_reason`` -> :data:`~agentrig.llm.StopReason`; anything else is ``"other"``."""

STOP_DETAILS = "stop_details"
"""``data["type"]`` of the provider-state block that keeps a reply's ``stop_details`` (for
example a refusal's category and explanation).  It is not a content block and is never sent
back."""

_LEADING_STATE = frozenset({"thinking", "redacted_thinking"})
_NOT_REPLAYED = frozenset({STOP_DETAILS})


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def stop_reason(raw: str | None) -> StopReason:
    if raw is None:
        return "other"
    return STOP_REASONS.get(raw, "other")


def usage_from(raw: object) -> Usage | None:
    """The usage triple from a Messages ``usage`` object (``None`` if absent).

    ``prompt = input_tokens + cache_read_input_tokens + cache_creation_input_tokens``; the
    cache counts are parts of it, ``input_tokens`` is the uncached rest.  Anthropic reports
    prompt caching on every response, so a missing cache count is 0.
    """
    if not isinstance(raw, Mapping):
        return None
    uncached = _int(raw.get("input_tokens"))
    output = _int(raw.get("output_tokens"))
    if uncached is None and output is None:
        return None
    cache_read = _int(raw.get("cache_read_input_tokens")) or 0
    cache_write = _int(raw.get("cache_creation_input_tokens")) or 0
    details = raw.get("output_tokens_details")
    reasoning = _int(details.get("thinking_tokens")) if isinstance(details, Mapping) else None
    prompt = (uncached or 0) + cache_read + cache_write
    return Usage.of(
        prompt,
        output or 0,
        cache_read=cache_read,
        cache_write=cache_write,
        uncached_input=uncached or 0,
        reasoning=reasoning,
        partial=uncached is None or output is None,
    )


def _stop_details_block(details: Mapping[str, Any]) -> ProviderStateBlock:
    explanation = details.get("explanation")
    return ProviderStateBlock(
        provider=KIND,
        data={"type": STOP_DETAILS, "stop_details": dict(details)},
        text=explanation if isinstance(explanation, str) else None,
    )


# -- request ---------------------------------------------------------------------------------


def _source(block: ImageBlock | FileBlock) -> dict[str, Any]:
    if block.data is not None:
        return {"type": "base64", "media_type": block.media_type, "data": block.data}
    if block.url is not None:
        return {"type": "url", "url": block.url}
    raise CapabilityError(f"a {type(block).__name__} needs data or url", provider=KIND)


def _content_block(block: ContentBlock) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text} if block.text else None
    if isinstance(block, ImageBlock):
        return {"type": "image", "source": _source(block)}
    if isinstance(block, FileBlock):
        if block.media_type == "text/plain" and block.data is not None:
            raise CapabilityError(
                "send plain-text files as text blocks (the document block takes base64 PDFs)",
                provider=KIND,
            )
        document: dict[str, Any] = {"type": "document", "source": _source(block)}
        if block.name:
            document["title"] = block.name
        return document
    if isinstance(block, ReasoningBlock | ProviderStateBlock):
        return None
    raise CapabilityError(
        f"a {type(block).__name__} cannot be sent in a user message", provider=KIND
    )


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    leading: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ProviderStateBlock):
            kind = block.data.get("type")
            if block.provider != KIND or kind in _NOT_REPLAYED:
                continue  # another provider's state, or not a content block at all
            (leading if kind in _LEADING_STATE else rest).append(dict(block.data))
        elif isinstance(block, TextBlock):
            if block.text:
                rest.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolCallBlock):
            rest.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.arguments}
            )
    return leading + rest


def _tool_result(message: ToolMessage) -> dict[str, Any]:
    blocks = [b for b in (_content_block(x) for x in message.content) if b is not None]
    content: str | list[dict[str, Any]]
    if all(b["type"] == "text" for b in blocks):
        content = "".join(b["text"] for b in blocks)
    else:
        content = blocks
    return {
        "type": "tool_result",
        "tool_use_id": message.call_id,
        "content": content,
        "is_error": message.status != "ok",
    }


def _starts_with_tool_result(message: Mapping[str, Any] | None) -> bool:
    if message is None or message["role"] != "user":
        return False
    content = message["content"]
    return bool(content) and content[0].get("type") == "tool_result"


def _messages(messages: Sequence[Message]) -> tuple[list[str], list[dict[str, Any]]]:
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        last = out[-1] if out else None
        if isinstance(message, SystemMessage):
            system.append(message.text)
        elif isinstance(message, UserMessage):
            blocks = [b for b in (_content_block(x) for x in message.content) if b is not None]
            if _starts_with_tool_result(last):
                assert last is not None
                last["content"].extend(blocks)  # text after tool results joins their message
            else:
                out.append({"role": "user", "content": blocks})
        elif isinstance(message, AssistantMessage):
            blocks = _assistant_blocks(message)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif isinstance(message, ToolMessage):
            result = _tool_result(message)
            if _starts_with_tool_result(last):
                assert last is not None
                last["content"].append(result)  # consecutive results: one user message
            else:
                out.append({"role": "user", "content": [result]})
    return system, out


def _tool(spec: ToolSpec) -> dict[str, Any]:
    result = project_schema(spec.parameters, ANTHROPIC)
    if isinstance(result, Rejected):
        raise CapabilityError(
            f"tool {spec.name!r} cannot be sent to Anthropic: {result.reason}", provider=KIND
        )
    schema = result.schema if isinstance(result, Adapted) else dict(result.schema)
    return {
        "name": spec.name,
        "description": describe_with_note(spec.description, result),
        "input_schema": schema,
    }


def _tool_choice(choice: str | None, parallel: bool | None) -> dict[str, Any] | None:
    out: dict[str, Any]
    if choice in (None, "auto"):
        out = {"type": "auto"}
    elif choice == "required":
        out = {"type": "any"}
    elif choice == "none":
        out = {"type": "none"}
    else:
        out = {"type": "tool", "name": choice}
    if parallel is False and out["type"] != "none":
        out["disable_parallel_tool_use"] = True
    if choice is None and "disable_parallel_tool_use" not in out:
        return None
    return out


def schema_instruction(name: str, schema: Mapping[str, Any]) -> str:
    """The system-prompt text that states a response schema (the ``"prompt"`` transport)."""
    return (
        f"Reply with a single JSON value named {name!r} that validates against this JSON "
        f"Schema, and nothing else (no prose, no code fences):\n{_dumps(schema)}"
    )


RESERVED_OPTIONS: Mapping[str, str] = BODY_FIELDS
"""Request fields :func:`build_body` sets itself, each with what to use instead: an agent
whose ``options`` name one is refused when it is built (``check_request_options``)."""


def build_body(
    request: ModelRequest,
    *,
    stream: bool,
    max_tokens: int,
    thinking: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The JSON body of ``POST /v1/messages`` for ``request``.

    ``request.options`` are merged last as extra body fields, e.g. ``{"thinking": {"type":
    "adaptive"}}`` or ``metadata``; one of :data:`RESERVED_OPTIONS` is an
    :class:`~agentrig.llm.InvalidRequestError` (an agent's own options were refused when it
    was built, so only a ``request_config`` listener can bring one).
    """
    system, messages = _messages(request.messages)
    fmt = request.response_format
    if request.structured_output == "prompt" and fmt is not None:
        system.append(schema_instruction(fmt.name, fmt.schema_))
    body: dict[str, Any] = {"model": request.model, "max_tokens": max_tokens, "messages": messages}
    if system:
        body["system"] = "\n\n".join(system)
    if request.tools and request.tool_choice != "none":
        body["tools"] = [_tool(t) for t in request.tools]
    if request.tools:
        choice = _tool_choice(request.tool_choice, request.parallel_tool_calls)
        if choice is not None:
            body["tool_choice"] = choice
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    if thinking is not None:
        body["thinking"] = dict(thinking)
    if request.structured_output == "native" and fmt is not None:
        body["output_format"] = {"type": "json_schema", "schema": fmt.schema_}
    body["stream"] = stream
    for key, value in request.options.items():
        if key in RESERVED_OPTIONS:  # a request_config listener's options: never dropped
            raise reserved_option_error(key, RESERVED_OPTIONS, provider=KIND)
        body[key] = value
    return body


# -- response --------------------------------------------------------------------------------


class _Content:
    """Collects reply blocks; adjacent text merges as the stream assembler merges it."""

    def __init__(self) -> None:
        self.blocks: list[ContentBlock] = []

    def text(self, text: str) -> None:
        if not text:
            return
        last = self.blocks[-1] if self.blocks else None
        if isinstance(last, TextBlock):
            self.blocks[-1] = TextBlock(text=last.text + text)
        else:
            self.blocks.append(TextBlock(text=text))

    def add(self, block: ContentBlock) -> None:
        self.blocks.append(block)


def message_from_body(body: Mapping[str, Any]) -> AssistantMessage:
    """The assistant message of a non-streaming Messages response."""
    content = _Content()
    raw_blocks = body.get("content")
    for raw in raw_blocks if isinstance(raw_blocks, list) else []:
        if not isinstance(raw, Mapping):
            continue
        kind = raw.get("type")
        if kind == "text":
            text = raw.get("text")
            content.text(text if isinstance(text, str) else "")
        elif kind == "tool_use":
            arguments = raw.get("input")
            content.add(
                ToolCallBlock(
                    id=str(raw.get("id") or ""),
                    name=str(raw.get("name") or ""),
                    arguments=dict(arguments) if isinstance(arguments, Mapping) else {},
                    raw_arguments=None if isinstance(arguments, Mapping) else _dumps(arguments),
                )
            )
        else:
            thinking = raw.get("thinking") if kind == "thinking" else None
            if isinstance(thinking, str) and thinking:
                content.add(ReasoningBlock(text=thinking))
            content.add(ProviderStateBlock(provider=KIND, data=dict(raw)))
    details = body.get("stop_details")
    if isinstance(details, Mapping):
        content.add(_stop_details_block(details))
    raw_stop = body.get("stop_reason")
    raw_stop = raw_stop if isinstance(raw_stop, str) else None
    model = body.get("model")
    return AssistantMessage(
        content=tuple(content.blocks),
        stop_reason=stop_reason(raw_stop),
        provider_stop_reason=raw_stop,
        model=model if isinstance(model, str) else None,
        usage=usage_from(body.get("usage")),
    )


class _Block:
    __slots__ = ("data", "json_parts", "signature", "thinking")

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = dict(data)
        self.thinking: list[str] = []
        self.signature: list[str] = []
        self.json_parts: list[str] = []


class EventReader:
    """Turns Messages SSE events into stream chunks, keeping what spans events."""

    def __init__(self) -> None:
        self.model: str | None = None
        self.response_id: str | None = None
        self.stop_reason: str | None = None
        self.finished = False
        self._usage: dict[str, Any] = {}
        self._blocks: dict[int, _Block] = {}

    def feed(self, event: Mapping[str, Any]) -> Iterator[StreamChunk]:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message")
            if isinstance(message, Mapping):
                model = message.get("model")
                self.model = model if isinstance(model, str) else self.model
                response_id = message.get("id")
                if isinstance(response_id, str):
                    self.response_id = response_id
                yield from self._merge_usage(message.get("usage"))
        elif kind == "content_block_start":
            yield from self._start(event)
        elif kind == "content_block_delta":
            yield from self._delta(event)
        elif kind == "content_block_stop":
            yield from self._stop(event)
        elif kind == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, Mapping):
                raw_stop = delta.get("stop_reason")
                if isinstance(raw_stop, str):
                    self.stop_reason = raw_stop
                details = delta.get("stop_details")
                if isinstance(details, Mapping):
                    yield ProviderStateChunk(block=_stop_details_block(details))
            yield from self._merge_usage(event.get("usage"))
        elif kind == "message_stop":
            self.finished = True

    def _merge_usage(self, raw: object) -> Iterator[StreamChunk]:
        # message_delta counts are cumulative and replace message_start's where given.
        if not isinstance(raw, Mapping):
            return
        self._usage.update({k: v for k, v in raw.items() if v is not None})
        usage = usage_from(self._usage)
        if usage is not None:
            yield UsageChunk(usage=usage)

    def _index(self, event: Mapping[str, Any]) -> int:
        index = _int(event.get("index"))
        return index if index is not None else len(self._blocks)

    def _start(self, event: Mapping[str, Any]) -> Iterator[StreamChunk]:
        index = self._index(event)
        raw = event.get("content_block")
        block = _Block(raw if isinstance(raw, Mapping) else {})
        self._blocks[index] = block
        kind = block.data.get("type")
        if kind == "text":
            text = block.data.get("text")
            if isinstance(text, str) and text:
                yield TextDelta.of(text)
        elif kind == "tool_use":
            yield ToolCallStart(
                index=index,
                id=str(block.data.get("id") or ""),
                name=str(block.data.get("name") or ""),
            )
            given = block.data.get("input")
            if isinstance(given, Mapping) and given:
                yield ToolCallDelta.of(index, _dumps(given))
        elif kind == "thinking":
            initial = block.data.get("thinking")
            if isinstance(initial, str) and initial:
                block.thinking.append(initial)
                yield ReasoningDelta.of(initial)
            signature = block.data.get("signature")
            if isinstance(signature, str) and signature:
                block.signature.append(signature)

    def _delta(self, event: Mapping[str, Any]) -> Iterator[StreamChunk]:
        index = self._index(event)
        block = self._blocks.get(index)
        delta = event.get("delta")
        if block is None or not isinstance(delta, Mapping):
            return
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            if isinstance(text, str) and text:
                yield TextDelta.of(text)
        elif kind == "input_json_delta":
            part = delta.get("partial_json")
            if isinstance(part, str) and part:
                if block.data.get("type") == "tool_use":
                    yield ToolCallDelta.of(index, part)
                else:
                    block.json_parts.append(part)
        elif kind == "thinking_delta":
            text = delta.get("thinking")
            if isinstance(text, str) and text:
                block.thinking.append(text)
                yield ReasoningDelta.of(text)
        elif kind == "signature_delta":
            signature = delta.get("signature")
            if isinstance(signature, str):
                block.signature.append(signature)

    def _stop(self, event: Mapping[str, Any]) -> Iterator[StreamChunk]:
        block = self._blocks.get(self._index(event))
        if block is None:
            return
        kind = block.data.get("type")
        if kind in ("text", "tool_use"):
            return
        data = block.data
        if kind == "thinking":
            data["thinking"] = "".join(block.thinking)
            data["signature"] = "".join(block.signature)
        elif block.json_parts:
            try:
                data["input"] = json.loads("".join(block.json_parts))
            except ValueError:
                data["input"] = {}
        yield ProviderStateChunk(block=ProviderStateBlock(provider=KIND, data=data))

    def finish(self) -> FinishChunk:
        return FinishChunk(
            stop_reason=stop_reason(self.stop_reason),
            provider_stop_reason=self.stop_reason,
            model=self.model,
            response_id=self.response_id,
        )
