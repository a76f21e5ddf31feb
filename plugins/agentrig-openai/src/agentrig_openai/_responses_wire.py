"""Responses API wire format <-> agentrig's vocabulary.

Pure functions: the request body (``POST /v1/responses`` and the WebSocket
``response.create`` message), the event reader that turns Responses stream events into
:class:`~agentrig.llm.StreamChunk` values, and the chunks of a finished response object.
``complete()`` folds :func:`response_chunks` through a :class:`~agentrig.llm.StreamAssembler`,
so streamed and non-streamed answers are equal by construction.

Provider state rides in :class:`~agentrig.llm.ProviderStateBlock` values of kind
``openai-responses``: every output item the adapter does not turn into text or a tool call
(reasoning items with their ``encrypted_content``, hosted-tool items) is kept verbatim and
replayed in place when the whole conversation is sent again; the last block of a reply names
the response (``{"type": "agentrig.response", "id": ..., "endpoint": ...}``) so a later
request can continue it with ``previous_response_id`` and send only what came after it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from agentrig.llm import (
    BODY_FIELDS,
    AssistantMessage,
    CapabilityError,
    ContentBlock,
    ContextLengthError,
    FileBlock,
    FinishChunk,
    ImageBlock,
    InvalidRequestError,
    Message,
    ModelRequest,
    ProviderError,
    ProviderStateBlock,
    ProviderStateChunk,
    ProviderStreamError,
    RateLimitError,
    ReasoningBlock,
    ReasoningDelta,
    ServerError,
    StopReason,
    StreamChunk,
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
    error_from_status,
)
from agentrig_openai._body_fields import (
    add_controls,
    add_options,
    as_int,
    compact_json,
    data_url,
    usage_of,
)
from agentrig_openai._wire import project_tool_schema, schema_instruction

__all__ = [
    "KIND",
    "RESERVED_OPTIONS",
    "RESPONSE_REF",
    "Continuation",
    "EventReader",
    "build_body",
    "continuation",
    "event_error",
    "failed_error",
    "input_items",
    "response_chunks",
    "usage_from",
]

KIND = "openai-responses"
RESPONSE_REF = "agentrig.response"
"""The ``type`` of the state block that names the response a reply came from."""

_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})

RESERVED_OPTIONS: Mapping[str, str] = {
    **BODY_FIELDS,
    "input": "the input items are the session's history and the prompt of run()/stream()",
    "instructions": "the agent's system prompt is sent as instructions",
    "previous_response_id": "the provider chains responses itself (option store = true, "
    "or the WebSocket transport)",
    "store": "the provider option store ([providers.<id>.options]) chooses it",
    "include": "the provider asks for encrypted reasoning itself when store = false",
    "reasoning": "set the agent's reasoning_effort (summaries: the option reasoning_summary)",
    "tools": "tools are the agent's own",
    "text": "structured output is the agent's output schema",
}
"""Body fields :func:`build_body` sets itself, each with what to use instead."""


# -- request ---------------------------------------------------------------------------------


def _input_part(block: ContentBlock) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"type": "input_text", "text": block.text}
    if isinstance(block, ImageBlock):
        if block.url is not None:
            return {"type": "input_image", "image_url": block.url, "detail": "auto"}
        if block.data is not None:
            url = data_url(block.media_type, block.data)
            return {"type": "input_image", "image_url": url, "detail": "auto"}
        raise CapabilityError("an image block needs data or url", provider=KIND)
    if isinstance(block, FileBlock):
        if block.url is not None:
            return {"type": "input_file", "file_url": block.url}
        if block.data is None:
            raise CapabilityError("a file block needs data or url", provider=KIND)
        part: dict[str, Any] = {
            "type": "input_file",
            "file_data": data_url(block.media_type, block.data),
        }
        if block.name is not None:
            part["filename"] = block.name
        return part
    if isinstance(block, ReasoningBlock | ProviderStateBlock):
        return None
    raise CapabilityError(
        f"a {type(block).__name__} cannot be sent in a user message", provider=KIND
    )


def _tool_output(message: ToolMessage) -> dict[str, Any]:
    parts = [p for p in (_input_part(b) for b in message.content) if p is not None]
    if all(p["type"] == "input_text" for p in parts):
        output: str | list[dict[str, Any]] = "".join(p["text"] for p in parts)
    else:
        output = parts  # images and files travel in the output itself
    return {"type": "function_call_output", "call_id": message.call_id, "output": output}


def _assistant_items(message: AssistantMessage) -> Iterator[dict[str, Any]]:
    """The output items of an earlier reply, in the order the model produced them."""
    texts: list[str] = []

    def flush() -> Iterator[dict[str, Any]]:
        if texts:
            text = "".join(texts)
            texts.clear()
            yield {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }

    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:
                texts.append(block.text)
            continue
        if isinstance(block, ProviderStateBlock):
            if block.provider != KIND or block.data.get("type") == RESPONSE_REF:
                continue  # another provider's state, or only the name of the response
            yield from flush()
            yield dict(block.data)
        elif isinstance(block, ToolCallBlock):
            yield from flush()
            arguments = block.raw_arguments
            yield {
                "type": "function_call",
                "call_id": block.id,
                "name": block.name,
                "arguments": arguments if arguments is not None else compact_json(block.arguments),
            }
    yield from flush()


def input_items(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The ``input`` items of ``messages`` (a system message is sent as ``instructions``)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            parts = [p for p in (_input_part(b) for b in message.content) if p is not None]
            out.append({"type": "message", "role": "user", "content": parts})
        elif isinstance(message, AssistantMessage):
            out.extend(_assistant_items(message))
        elif isinstance(message, ToolMessage):
            out.append(_tool_output(message))
    return out


class Continuation:
    """Where a request may continue an earlier response: its id and what came after it."""

    __slots__ = ("after", "response_id")

    def __init__(self, response_id: str, after: Sequence[Message]) -> None:
        self.response_id = response_id
        self.after = tuple(after)


def continuation(messages: Sequence[Message], endpoint: str) -> Continuation | None:
    """The last reply this endpoint gave in ``messages`` and the messages after it.

    ``None`` when no reply of this endpoint is in the history (another provider answered
    last, or the conversation is new): then the whole conversation is sent.
    """
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if not isinstance(message, AssistantMessage):
            continue
        for block in reversed(message.content):
            if (
                isinstance(block, ProviderStateBlock)
                and block.provider == KIND
                and block.data.get("type") == RESPONSE_REF
                and block.data.get("endpoint") == endpoint
                and isinstance(block.data.get("id"), str)
            ):
                return Continuation(block.data["id"], messages[position + 1 :])
        return None  # the last reply is not ours to continue
    return None


def _tool(
    spec: ToolSpec, *, strict: Literal["auto", "always", "never"], vendor: bool
) -> dict[str, Any]:
    parameters, is_strict, description = project_tool_schema(spec, strict=strict, vendor=vendor)
    return {
        "type": "function",
        "name": spec.name,
        "description": description,
        "parameters": parameters,
        "strict": is_strict,
    }


def _tool_choice(choice: str) -> str | dict[str, Any]:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "name": choice}


def _text_format(request: ModelRequest) -> dict[str, Any] | None:
    fmt = request.response_format
    if request.structured_output == "native" and fmt is not None:
        return {
            "format": {
                "type": "json_schema",
                "name": fmt.name,
                "schema": fmt.schema_,
                "strict": fmt.strict,
            }
        }
    if request.structured_output == "json_mode":
        return {"format": {"type": "json_object"}}
    return None


def _instructions(request: ModelRequest) -> str | None:
    system = request.system
    fmt = request.response_format
    if request.structured_output == "prompt" and fmt is not None:
        note = schema_instruction(fmt.name, fmt.schema_)
        return f"{system}\n\n{note}" if system else note
    return system


def build_body(
    request: ModelRequest,
    *,
    effort: str | None,
    summary: str | None,
    strict: Literal["auto", "always", "never"],
    vendor: bool,
    store: bool,
    previous: Continuation | None,
) -> dict[str, Any]:
    """The body of ``POST /responses`` (without ``stream``) for ``request``.

    With ``previous``, only the messages after that response are sent, with its id as
    ``previous_response_id``; ``instructions`` are sent every time (the API does not carry
    them over).  Without ``store``, encrypted reasoning is asked for so that it can be
    replayed.  ``request.options`` are merged last; one of :data:`RESERVED_OPTIONS` is an
    :class:`~agentrig.llm.InvalidRequestError`.
    """
    if request.stop:
        raise CapabilityError(
            "the Responses API has no stop sequences (request.stop); use the openai "
            "(Chat Completions) provider for them",
            provider=KIND,
        )
    messages = previous.after if previous is not None else request.messages
    body: dict[str, Any] = {
        "model": request.model,
        "input": input_items(messages),
        "store": store,
    }
    instructions = _instructions(request)
    if instructions:
        body["instructions"] = instructions
    if previous is not None:
        body["previous_response_id"] = previous.response_id
    if not store:
        body["include"] = ["reasoning.encrypted_content"]
    add_controls(
        body,
        request,
        tool=lambda spec: _tool(spec, strict=strict, vendor=vendor),
        tool_choice=_tool_choice,
        max_tokens_field="max_output_tokens",
    )
    text = _text_format(request)
    if text is not None:
        body["text"] = text
    if effort is not None or summary is not None:
        reasoning: dict[str, Any] = {}
        if effort is not None:
            reasoning["effort"] = effort
        if summary is not None:
            reasoning["summary"] = summary
        body["reasoning"] = reasoning
    add_options(body, request, RESERVED_OPTIONS, provider=KIND)
    return body


# -- response --------------------------------------------------------------------------------


def usage_from(raw: object) -> Usage | None:
    """The usage triple of a response's ``usage`` object (``None`` when absent)."""
    return usage_of(raw, prompt="input", completion="output")


_INCOMPLETE: Mapping[str, StopReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}


def _stop(response: Mapping[str, Any], *, calls: bool, refused: bool) -> tuple[StopReason, str]:
    status = response.get("status")
    if status == "incomplete":
        details = response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, Mapping) else None
        reason = reason if isinstance(reason, str) else "incomplete"
        return _INCOMPLETE.get(reason, "other"), reason
    vendor = status if isinstance(status, str) else "completed"
    if calls:
        return "tool_calls", vendor
    if refused:
        return "refusal", vendor
    return ("end" if vendor == "completed" else "other"), vendor


_ERROR_CLASSES: Mapping[str, type[ProviderError]] = {
    "rate_limit_exceeded": RateLimitError,
    "server_error": ServerError,
    "context_length_exceeded": ContextLengthError,
    "invalid_prompt": InvalidRequestError,
}


def failed_error(
    error: object, *, request_id: str | None, provider: str, status: int | None = None
) -> ProviderError:
    """The taxonomy's error for a ``response.failed`` response's ``error`` or an ``error``
    event (``{"code", "message"}``); an unknown code is a :class:`ProviderStreamError`."""
    raw: Mapping[str, Any] = error if isinstance(error, Mapping) else {}
    code = raw.get("code")
    code = code if isinstance(code, str) else None
    text = raw.get("message")
    text = text if isinstance(text, str) else str(error)
    cls = _ERROR_CLASSES.get(code or "")
    if cls is None:
        return ProviderStreamError(
            f"{provider}: the response failed: {text}",
            error=dict(raw),
            vendor_code=code,
            request_id=request_id,
            provider=provider,
        )
    kind = raw.get("type")
    return cls(
        f"{provider}: the response failed ({code}): {text}",
        status=status,
        vendor_type=kind if isinstance(kind, str) else None,
        vendor_code=code,
        request_id=request_id,
        provider=provider,
        body=dict(raw),
    )


def event_error(event: Mapping[str, Any], *, request_id: str | None) -> ProviderError:
    """The error of an ``error`` event.  The WebSocket mode's carry the HTTP ``status`` (and
    perhaps ``headers``): classified as that status would be (a rate limit with its retry
    hints, authentication, context length ...); the stream's carry a ``code``."""
    error = event.get("error")
    status = as_int(event.get("status"))
    if status is not None and status >= 400:
        headers = event.get("headers")
        return error_from_status(
            status,
            {"error": error if isinstance(error, Mapping) else dict(event)},
            {str(k): str(v) for k, v in headers.items()} if isinstance(headers, Mapping) else {},
            provider=KIND,
        )
    return failed_error(
        error if isinstance(error, Mapping) else event, request_id=request_id, provider=KIND
    )


def _summary_text(item: Mapping[str, Any]) -> str:
    summary = item.get("summary")
    if not isinstance(summary, list):
        return ""
    texts = [p.get("text") for p in summary if isinstance(p, Mapping)]
    return "\n\n".join(t for t in texts if isinstance(t, str) and t)


def _state(item: Mapping[str, Any]) -> ProviderStateChunk:
    text = _summary_text(item) if item.get("type") == "reasoning" else None
    return ProviderStateChunk(
        block=ProviderStateBlock(provider=KIND, data=dict(item), text=text or None)
    )


def _ref(response_id: str, endpoint: str) -> ProviderStateChunk:
    data = {"type": RESPONSE_REF, "id": response_id, "endpoint": endpoint}
    return ProviderStateChunk(block=ProviderStateBlock(provider=KIND, data=data))


class EventReader:
    """Turns Responses stream events into stream chunks, keeping what spans events.

    ``endpoint`` names where the response lives (see :func:`continuation`).  The terminal
    event (``response.completed`` / ``incomplete`` / ``failed``) sets :attr:`response`;
    ``failed`` and ``error`` raise after the chunks before them were yielded.
    """

    def __init__(
        self, endpoint: str, *, request_id: str | None = None, streamed: bool = True
    ) -> None:
        self.endpoint = endpoint
        self.streamed = streamed
        self.request_id = request_id
        self.response: Mapping[str, Any] | None = None
        self.response_id: str | None = None
        self.model: str | None = None
        self._calls: dict[str, int] = {}  # item id -> call index
        self._argued: set[int] = set()  # calls whose arguments were streamed
        self._refused = False
        self._summaries: set[tuple[str, int]] = set()
        self._reasoned: set[str] = set()  # reasoning items whose summary was streamed

    def text_of(self, event: Mapping[str, Any]) -> str | None:
        """The text of a ``response.output_text.delta`` event (the per-token short path)."""
        if event.get("type") == "response.output_text.delta":
            delta = event.get("delta")
            if type(delta) is str:
                return delta
        return None

    def feed(self, event: Mapping[str, Any]) -> list[StreamChunk]:
        """The stream chunks of one event."""
        text = self.text_of(event)
        if text is not None:
            return [TextDelta.of(text)] if text else []
        return list(self._other(event))

    def _other(self, event: Mapping[str, Any]) -> Iterator[StreamChunk]:
        kind = event.get("type")
        if kind == "response.refusal.delta":
            delta = event.get("delta")
            if isinstance(delta, str) and delta:
                self._refused = True
                yield TextDelta.of(delta)
        elif kind == "response.function_call_arguments.delta":
            yield from self._arguments(event)
        elif kind == "response.reasoning_summary_text.delta":
            yield from self._reasoning(event)
        elif kind == "response.output_item.added":
            yield from self._added(event.get("item"))
        elif kind == "response.output_item.done":
            yield from self._done(event.get("item"))
        elif kind in ("response.created", "response.in_progress"):
            self._note(event.get("response"))
        elif kind in _TERMINAL:
            yield from self._finish(event)
        elif kind == "error":
            raise event_error(event, request_id=self.request_id)

    def _note(self, response: object) -> None:
        if isinstance(response, Mapping):
            found = response.get("id")
            if isinstance(found, str) and found:
                self.response_id = found
            model = response.get("model")
            if isinstance(model, str) and model:
                self.model = model

    def _added(self, item: object) -> Iterator[StreamChunk]:
        if not isinstance(item, Mapping) or item.get("type") != "function_call":
            return
        item_id = str(item.get("id") or "")
        index = self._calls.setdefault(item_id, len(self._calls))
        yield ToolCallStart.of(index, str(item.get("call_id") or ""), str(item.get("name") or ""))

    def _arguments(self, event: Mapping[str, Any]) -> Iterator[StreamChunk]:
        delta = event.get("delta")
        index = self._calls.get(str(event.get("item_id") or ""))
        if index is not None and isinstance(delta, str) and delta:
            self._argued.add(index)
            yield ToolCallDelta.of(index, delta)

    def _reasoning(self, event: Mapping[str, Any]) -> Iterator[StreamChunk]:
        delta = event.get("delta")
        if not isinstance(delta, str) or not delta:
            return
        item_id = str(event.get("item_id") or "")
        part = as_int(event.get("summary_index")) or 0
        key = (item_id, part)
        if key not in self._summaries:
            if any(seen[0] == item_id for seen in self._summaries):
                yield ReasoningDelta.of("\n\n")  # a new summary part, as complete() joins them
            self._summaries.add(key)
        self._reasoned.add(item_id)
        yield ReasoningDelta.of(delta)

    def _done(self, item: object) -> Iterator[StreamChunk]:
        if not isinstance(item, Mapping):
            return
        kind = item.get("type")
        if kind == "function_call":
            item_id = str(item.get("id") or "")
            if item_id not in self._calls:
                yield from self._added(item)
            index = self._calls[item_id]
            arguments = item.get("arguments")
            if index not in self._argued and isinstance(arguments, str) and arguments:
                self._argued.add(index)
                yield ToolCallDelta.of(index, arguments)
        elif kind == "message":
            yield from self._message_done(item)
        else:  # reasoning and hosted-tool items: kept verbatim, replayed in place
            item_id = str(item.get("id") or "")
            if kind == "reasoning" and item_id not in self._reasoned:
                text = _summary_text(item)
                if text:
                    yield ReasoningDelta.of(text)
            yield _state(item)

    def _message_done(self, item: Mapping[str, Any]) -> Iterator[StreamChunk]:
        # A streamed message's text arrived as deltas; a whole response has it only here.
        if self.streamed:
            return
        for part in item.get("content") or ():
            if not isinstance(part, Mapping):
                continue
            kind = part.get("type")
            text = part.get("text") if kind == "output_text" else None
            refused = part.get("refusal") if kind == "refusal" else None
            if isinstance(text, str) and text:
                yield TextDelta.of(text)
            elif isinstance(refused, str) and refused:
                self._refused = True
                yield TextDelta.of(refused)

    def _finish(self, event: Mapping[str, Any]) -> Iterator[StreamChunk]:
        response = event.get("response")
        response = response if isinstance(response, Mapping) else {}
        self._note(response)
        self.response = response
        if event.get("type") == "response.failed" or response.get("status") == "failed":
            raise failed_error(response.get("error"), request_id=self.request_id, provider=KIND)
        if self.response_id is not None:
            yield _ref(self.response_id, self.endpoint)
        usage = usage_from(response.get("usage"))
        if usage is not None:
            yield UsageChunk.of(usage)

    def finish(self) -> FinishChunk:
        """The finish chunk, after the terminal event."""
        response = self.response if self.response is not None else {}
        stop, vendor = _stop(response, calls=bool(self._calls), refused=self._refused)
        return FinishChunk(
            stop_reason=stop,
            provider_stop_reason=vendor,
            model=self.model,
            response_id=self.response_id,
        )


def response_chunks(
    response: Mapping[str, Any], endpoint: str, *, request_id: str | None = None
) -> tuple[list[StreamChunk], FinishChunk]:
    """The chunks a stream of ``response`` (a finished response object) would give."""
    reader = EventReader(endpoint, request_id=request_id, streamed=False)
    chunks = reader.feed({"type": "response.created", "response": response})
    output = response.get("output")
    for item in output if isinstance(output, list) else ():
        chunks += reader.feed({"type": "response.output_item.done", "item": item})
    status = response.get("status")
    kind = {"incomplete": "response.incomplete", "failed": "response.failed"}.get(
        status if isinstance(status, str) else "", "response.completed"
    )
    chunks += reader.feed({"type": kind, "response": response})
    return chunks, reader.finish()
