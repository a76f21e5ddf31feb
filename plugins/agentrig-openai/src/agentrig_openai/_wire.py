"""Chat Completions wire format <-> agentrig's vocabulary.

Pure functions: building the request body, reading a response body, and turning stream
chunks into :class:`~agentrig.llm.StreamChunk` values.  The streaming and non-streaming paths
produce equal assistant messages for the same answer: reasoning first, then text (a refusal
counts as text, see :func:`stop_reason`), then tool calls in index order.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

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
)
from agentrig.tools.schema import (
    OPENAI,
    OPENAI_STRICT,
    Adapted,
    Adopted,
    Rejected,
    describe_with_note,
    project_schema,
)
from agentrig_openai._body_fields import (
    add_controls,
    add_options,
    as_int,
    compact_json,
    data_url,
    usage_of,
)

__all__ = [
    "RESERVED_OPTIONS",
    "STOP_REASONS",
    "ChunkReader",
    "build_body",
    "message_from_body",
    "project_tool_schema",
    "stop_reason",
    "usage_from",
]

logger = logging.getLogger("agentrig_openai")

KIND = "openai"

STOP_REASONS: Mapping[str, StopReason] = {
    "stop": "end",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}
"""``finish_reason`` -> :data:`~agentrig.llm.StopReason`; anything else is ``"other"``."""


# -- helpers ---------------------------------------------------------------------------------


def stop_reason(finish_reason: str | None, *, refused: bool) -> StopReason:
    """Map ``finish_reason``; a refusal (``message.refusal`` text) ends as ``"refusal"``.

    The refusal text itself is kept as the assistant's text so the reader sees why; the stop
    reason is what tells it apart from an answer.
    """
    if refused and finish_reason in (None, "stop"):
        return "refusal"
    if finish_reason is None:
        return "other"
    return STOP_REASONS.get(finish_reason, "other")


def usage_from(raw: object) -> Usage | None:
    """The usage triple from a Chat Completions ``usage`` object (``None`` if absent).

    ``prompt_tokens_details.cached_tokens`` is the cache read (a part of the prompt);
    ``completion_tokens_details.reasoning_tokens`` the reasoning part of the completion; the
    provider's ``total_tokens`` is kept as given, even when it is not prompt + completion.
    """
    return usage_of(raw, prompt="prompt", completion="completion")


def project_tool_schema(
    spec: ToolSpec, *, strict: Literal["auto", "always", "never"], vendor: bool
) -> tuple[dict[str, Any], bool, str]:
    """Project a tool for OpenAI: ``(parameters, strict, description)``.

    ``auto`` asks for strict mode only on OpenAI's own endpoint (gateways often reject the
    flag), only for tools that take arguments, and only when the ``OPENAI_STRICT`` projection
    adopts the schema unchanged -- an adapted schema (optional properties made nullable,
    annotations removed) would show the model something other than what the tool declared.
    ``always`` takes an adapted strict schema too (its note joins the description);
    ``never`` sends the ``OPENAI`` projection.  A schema no profile can carry raises
    :class:`CapabilityError` before any network activity.
    """
    schema = spec.parameters
    has_arguments = bool(schema.get("properties"))
    want_strict = strict == "always" or (strict == "auto" and vendor and has_arguments)
    if want_strict:
        strict_result = project_schema(schema, OPENAI_STRICT)
        if isinstance(strict_result, Adopted):
            return dict(strict_result.schema), True, spec.description
        if isinstance(strict_result, Adapted) and strict == "always":
            return strict_result.schema, True, describe_with_note(spec.description, strict_result)
        if strict == "always":
            reason = strict_result.reason if isinstance(strict_result, Rejected) else "refused"
            raise CapabilityError(
                f"tool {spec.name!r} cannot be sent in OpenAI strict mode: {reason}",
                provider=KIND,
            )
    result = project_schema(schema, OPENAI)
    if isinstance(result, Rejected):
        raise CapabilityError(
            f"tool {spec.name!r} cannot be sent to OpenAI: {result.reason}", provider=KIND
        )
    if isinstance(result, Adapted):
        return result.schema, False, describe_with_note(spec.description, result)
    return dict(result.schema), False, spec.description


# -- request ---------------------------------------------------------------------------------


def _user_part(block: ContentBlock) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageBlock):
        if block.url is not None:
            url = block.url
        elif block.data is not None:
            url = data_url(block.media_type, block.data)
        else:
            raise CapabilityError("an image block needs data or url", provider=KIND)
        return {"type": "image_url", "image_url": {"url": url}}
    if isinstance(block, FileBlock):
        if block.data is None:
            raise CapabilityError(
                "OpenAI Chat Completions takes files as inline data only (no file URLs)",
                provider=KIND,
            )
        file: dict[str, Any] = {"file_data": data_url(block.media_type, block.data)}
        if block.name is not None:
            file["filename"] = block.name
        return {"type": "file", "file": file}
    if isinstance(block, ReasoningBlock | ProviderStateBlock):
        return None  # never replayed (another provider's state is not ours to send)
    raise CapabilityError(
        f"a {type(block).__name__} cannot be sent in a user message", provider=KIND
    )


def _tool_result(message: ToolMessage) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``tool`` message and the image/file parts it cannot carry.

    Chat Completions takes text only in a tool message, so a multimodal result's images and
    files go to the model in a user message right after the run of tool messages, each
    group labelled with its call (see :func:`_messages`).
    """
    texts: list[str] = []
    media: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ImageBlock | FileBlock):
            part = _user_part(block)
            assert part is not None
            media.append(part)
        elif not isinstance(block, ReasoningBlock | ProviderStateBlock):
            raise CapabilityError(
                f"OpenAI Chat Completions cannot carry a {type(block).__name__} in a tool result",
                provider=KIND,
            )
    text = "".join(texts)
    if media:
        note = f"[{len(media)} attachment(s) of this result follow in the next user message]"
        text = f"{text}\n{note}" if text else note
        label = f"[attachments of the {message.name} result {message.call_id}]"
        media.insert(0, {"type": "text", "text": label})
    return {"role": "tool", "tool_call_id": message.call_id, "content": text}, media


def _messages(
    messages: Sequence[Message], *, system_role: str, schema_instruction: str | None
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    system_seen = False
    attached: list[dict[str, Any]] = []  # tool results' images, sent after their run
    for message in messages:
        if attached and not isinstance(message, ToolMessage):
            out.append({"role": "user", "content": attached})
            attached = []
        if isinstance(message, SystemMessage):
            text = message.text
            if schema_instruction is not None and not system_seen:
                text = f"{text}\n\n{schema_instruction}" if text else schema_instruction
            system_seen = True
            out.append({"role": system_role, "content": text})
        elif isinstance(message, UserMessage):
            parts = [p for p in (_user_part(b) for b in message.content) if p is not None]
            if all(p["type"] == "text" for p in parts) and len(parts) == 1:
                out.append({"role": "user", "content": parts[0]["text"]})
            else:
                out.append({"role": "user", "content": parts})
        elif isinstance(message, AssistantMessage):
            out.append(_assistant(message))
        elif isinstance(message, ToolMessage):
            result, media = _tool_result(message)
            out.append(result)
            attached += media
    if attached:
        out.append({"role": "user", "content": attached})
    if schema_instruction is not None and not system_seen:
        out.insert(0, {"role": system_role, "content": schema_instruction})
    return out


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    calls = [
        {
            "id": b.id,
            "type": "function",
            "function": {
                "name": b.name,
                "arguments": b.raw_arguments
                if b.raw_arguments is not None
                else compact_json(b.arguments),
            },
        }
        for b in message.content
        if isinstance(b, ToolCallBlock)
    ]
    out: dict[str, Any] = {"role": "assistant"}
    if text or not calls:
        out["content"] = text
    if calls:
        out["tool_calls"] = calls
    return out


def _tool(
    spec: ToolSpec, *, strict: Literal["auto", "always", "never"], vendor: bool
) -> dict[str, Any]:
    parameters, is_strict, description = project_tool_schema(spec, strict=strict, vendor=vendor)
    function: dict[str, Any] = {
        "name": spec.name,
        "description": description,
        "parameters": parameters,
    }
    if is_strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def _tool_choice(choice: str) -> str | dict[str, Any]:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def schema_instruction(name: str, schema: Mapping[str, Any]) -> str:
    """The system-prompt text that states a response schema (the ``"prompt"`` transport)."""
    return (
        f"Reply with a single JSON value named {name!r} that validates against this JSON "
        f"Schema, and nothing else (no prose, no code fences):\n{compact_json(schema)}"
    )


RESERVED_OPTIONS: Mapping[str, str] = {
    **BODY_FIELDS,
    "stream_options": "the provider option stream_usage ([providers.<id>.options]) "
    "chooses whether a stream reports usage",
}
"""Request fields :func:`build_body` sets itself, each with what to use instead: an agent
whose ``options`` name one is refused when it is built (``check_request_options``)."""


def build_body(
    request: ModelRequest,
    *,
    stream: bool,
    effort: str | None,
    strict: Literal["auto", "always", "never"],
    vendor: bool,
    max_tokens_field: str,
    system_role: str,
    stream_usage: bool,
) -> dict[str, Any]:
    """The JSON body of ``POST /chat/completions`` for ``request``.

    ``request.options`` are merged last as extra body fields; one of
    :data:`RESERVED_OPTIONS` is an :class:`~agentrig.llm.InvalidRequestError` (an agent's own
    options were refused when it was built, so only a ``request_config`` listener can bring
    one).
    """
    fmt = request.response_format
    mode = request.structured_output
    instruction = None
    if mode == "prompt" and fmt is not None:
        instruction = schema_instruction(fmt.name, fmt.schema_)
    body: dict[str, Any] = {
        "model": request.model,
        "messages": _messages(
            request.messages, system_role=system_role, schema_instruction=instruction
        ),
        "stream": stream,
    }
    if stream and stream_usage:
        body["stream_options"] = {"include_usage": True}
    add_controls(
        body,
        request,
        tool=lambda spec: _tool(spec, strict=strict, vendor=vendor),
        tool_choice=_tool_choice,
        max_tokens_field=max_tokens_field,
    )
    if request.stop:
        body["stop"] = list(request.stop)
    if mode == "native" and fmt is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": fmt.name, "schema": fmt.schema_, "strict": fmt.strict},
        }
    elif mode == "json_mode":
        body["response_format"] = {"type": "json_object"}
    if effort is not None:
        body["reasoning_effort"] = effort
    add_options(body, request, RESERVED_OPTIONS, provider=KIND)
    return body


# -- response --------------------------------------------------------------------------------


def _reasoning_text(message: Mapping[str, Any]) -> str | None:
    # Compatible servers (vLLM, Groq, DeepSeek, OpenRouter) put displayable reasoning here.
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def message_from_body(body: Mapping[str, Any]) -> AssistantMessage:
    """The assistant message of a non-streaming Chat Completions response."""
    choices = body.get("choices")
    choice: Mapping[str, Any] = {}
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        choice = choices[0]
    raw_message = choice.get("message")
    message: Mapping[str, Any] = raw_message if isinstance(raw_message, Mapping) else {}
    content: list[ContentBlock] = []
    reasoning = _reasoning_text(message)
    if reasoning is not None:
        content.append(ReasoningBlock(text=reasoning))
    text = message.get("content")
    refusal = message.get("refusal")
    refused = isinstance(refusal, str) and bool(refusal)
    pieces = [p for p in (text, refusal) if isinstance(p, str) and p]
    if pieces:
        content.append(TextBlock(text="".join(pieces)))
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            if not isinstance(call, Mapping):
                continue
            function = call.get("function")
            function = function if isinstance(function, Mapping) else {}
            arguments = function.get("arguments")
            content.append(
                ToolCallBlock.from_json(
                    str(call.get("id") or ""),
                    str(function.get("name") or ""),
                    arguments if isinstance(arguments, str) else compact_json(arguments or {}),
                )
            )
    finish = choice.get("finish_reason")
    finish = finish if isinstance(finish, str) else None
    model = body.get("model")
    return AssistantMessage(
        content=tuple(content),
        stop_reason=stop_reason(finish, refused=refused),
        provider_stop_reason=finish,
        model=model if isinstance(model, str) else None,
        usage=usage_from(body.get("usage")),
    )


class ChunkReader:
    """Turns ``chat.completion.chunk`` objects into stream chunks, keeping what spans chunks.

    Chunks come from ``json.loads``, so containers are tested as ``dict``/``list`` (much
    cheaper than the ``Mapping`` ABC on a path run once per streamed token).
    """

    def __init__(self) -> None:
        self.finish_reason: str | None = None
        self.model: str | None = None
        self.response_id: str | None = None
        self.refused = False
        self.usage: Usage | None = None
        self._calls: dict[int, tuple[str, str]] = {}

    def text_of(self, chunk: Mapping[str, Any]) -> str | None:
        """The text of the common chunk -- one choice whose delta holds only non-empty
        content (and perhaps the role) -- or None: then :meth:`feed_other` takes it.

        The per-token short path: for such a chunk, ``[TextDelta.of(text)]`` is what the
        general path gives, and the model is kept the same way.
        """
        choices = chunk.get("choices")
        if type(choices) is list and len(choices) == 1 and chunk.get("usage") is None:
            choice = choices[0]
            delta = choice.get("delta") if type(choice) is dict else None
            if (
                type(delta) is dict
                and len(delta) == (2 if "role" in delta else 1)
                and choice.get("finish_reason") is None
                and choice.get("index", 0) == 0
            ):
                text = delta.get("content")
                if type(text) is str and text:
                    model = chunk.get("model")
                    if model and isinstance(model, str):
                        self.model = model
                    if self.response_id is None:
                        response_id = chunk.get("id")
                        if response_id and isinstance(response_id, str):
                            self.response_id = response_id
                    return text
        return None

    def feed(self, chunk: Mapping[str, Any]) -> list[StreamChunk]:
        """The stream chunks of one ``chat.completion.chunk`` object."""
        text = self.text_of(chunk)
        if text is not None:
            return [TextDelta.of(text)]
        return self.feed_other(chunk)

    def feed_other(self, chunk: Mapping[str, Any]) -> list[StreamChunk]:
        """:meth:`feed` for a chunk :meth:`text_of` declined (the general path)."""
        choices = chunk.get("choices")
        out: list[StreamChunk] = []
        model = chunk.get("model")
        if model and isinstance(model, str):
            self.model = model
        if self.response_id is None:  # every chunk of a response carries its id
            response_id = chunk.get("id")
            if response_id and isinstance(response_id, str):
                self.response_id = response_id
        if isinstance(choices, list):
            for choice in choices:
                if isinstance(choice, dict) and choice.get("index", 0) == 0:
                    self._choice(choice, out)
        raw_usage = chunk.get("usage")
        if raw_usage is not None:
            usage = usage_from(raw_usage)
            if usage is not None:
                self.usage = usage
                out.append(UsageChunk(usage=usage))
        return out

    def _choice(self, choice: Mapping[str, Any], out: list[StreamChunk]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            if "reasoning_content" in delta or "reasoning" in delta:
                reasoning = _reasoning_text(delta)
                if reasoning is not None:
                    out.append(ReasoningDelta.of(reasoning))
            text = delta.get("content")
            if text and isinstance(text, str):
                out.append(TextDelta.of(text))
            refusal = delta.get("refusal")
            if refusal and isinstance(refusal, str):
                self.refused = True
                out.append(TextDelta.of(refusal))
            calls = delta.get("tool_calls")
            if isinstance(calls, list):
                for position, call in enumerate(calls):
                    if isinstance(call, dict):
                        out.extend(self._call(position, call))
        finish = choice.get("finish_reason")
        if finish and isinstance(finish, str):
            self.finish_reason = finish

    def _call(self, position: int, call: Mapping[str, Any]) -> Iterator[StreamChunk]:
        index = as_int(call.get("index"))
        if index is None:
            index = position
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        call_id = str(call.get("id") or "")
        name = str(function.get("name") or "")
        known = self._calls.get(index)
        if known is None:
            self._calls[index] = (call_id, name)
            yield ToolCallStart(index=index, id=call_id, name=name)
        elif (call_id and not known[0]) or (name and not known[1]):
            # a late id or name (some gateways send it after the first fragment)
            self._calls[index] = (known[0] or call_id, known[1] or name)
            yield ToolCallStart(index=index, id=known[0] or call_id, name=known[1] or name)
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            yield ToolCallDelta.of(index, arguments)
        elif isinstance(arguments, Mapping) and arguments:
            yield ToolCallDelta.of(index, compact_json(arguments))

    def finish(self) -> FinishChunk:
        return FinishChunk(
            stop_reason=stop_reason(self.finish_reason, refused=self.refused),
            provider_stop_reason=self.finish_reason,
            model=self.model,
            response_id=self.response_id,
        )
