"""``POST /v1/messages``: Anthropic Messages requests in, messages (or stream events) out.

``system`` joins the agent's own system prompt; ``text``, ``image`` and ``document`` blocks,
``tool_use`` history and ``tool_result`` blocks map to agentrig messages; the last message must
be the user's and hold more than tool results.  Tools are server-owned: ``tools`` and
``tool_choice`` are refused.  ``cache_control`` marks are accepted and have no effect here (the
agent's own provider decides its caching).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import Any

from agentrig.llm import (
    AssistantMessage,
    ContentBlock,
    FileBlock,
    ImageBlock,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    Usage,
    UserMessage,
)
from agentrig_server._conversation import Conversation
from agentrig_server._errors import ApiError, reported_error
from agentrig_server._events import (
    ApprovalRequested,
    Finished,
    FinishReason,
    RunEvent,
    TextOut,
    UsageOut,
)
from agentrig_server._runs import HistoryMessage, Prompt
from agentrig_server._validate import (
    PartParser,
    Template,
    bad,
    check_keys,
    joined_text,
    objects,
    opt_bool,
    opt_int,
    opt_temperature,
    parse_parts,
    require_object,
    require_str,
    text_part,
)

__all__ = ["MessagesStream", "message_body", "parse_count_request", "parse_messages_request"]

_SUPPORTED = ("model", "messages", "max_tokens", "system", "stream", "temperature", "metadata")
_COUNTED = ("model", "messages", "system")
_TOOL_KEYS = ("tools", "tool_choice")
#: how messages word each way a run ends: ``refusal`` is the API's stop reason for a reply its
#: safety systems stopped (a refusal or a content filter); it has none for a deadline, so a run
#: that passed it is cut short like one that ran out of tokens
_STOP: dict[FinishReason, str] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "timeout": "max_tokens",
    "refusal": "refusal",
    "content_filter": "refusal",
}


def _source_block(block: Mapping[str, Any], at: str, kind: str) -> ContentBlock:
    source = require_object(block.get("source"), f"{at}.source")
    source_type = source.get("type")
    if source_type == "base64":
        media_type = require_str(source.get("media_type"), f"{at}.source.media_type")
        data = require_str(source.get("data"), f"{at}.source.data")
        if kind == "image":
            return ImageBlock(media_type=media_type, data=data)
        return FileBlock(media_type=media_type, data=data)
    if source_type == "url":
        url = require_str(source.get("url"), f"{at}.source.url")
        if kind == "image":
            return ImageBlock(media_type="image/*", url=url)
        return FileBlock(media_type="application/pdf", url=url)
    if source_type == "text" and kind == "document":
        return TextBlock(text=require_str(source.get("data"), f"{at}.source.data"))
    raise bad(f"{at}.source.type", f"unsupported source type {source_type!r}")


def parse_messages_request(body: object) -> tuple[Prompt, bool]:
    """``(prompt, stream)`` from a request body, or a 400 naming the field."""
    return _parse(require_object(body, "body"), counting=False)


def parse_count_request(body: object) -> Prompt:
    """The prompt of ``POST /v1/messages/count_tokens`` (no ``max_tokens``, no stream)."""
    prompt, _ = _parse(require_object(body, "body"), counting=True)
    return prompt


def _parse(body: Mapping[str, Any], *, counting: bool) -> tuple[Prompt, bool]:
    check_keys(body, "", _COUNTED if counting else _SUPPORTED, tools=_TOOL_KEYS)
    model = require_str(body.get("model"), "model")
    max_tokens = None if counting else opt_int(body, "max_tokens")
    if max_tokens is None and not counting:
        raise bad("max_tokens", "required")
    temperature = None if counting else opt_temperature(body, "temperature", 1.0)
    stream = False if counting else opt_bool(body, "stream")
    system = body.get("system")
    talk = Conversation([joined_text(system, "system")] if system is not None else [])
    for at, message in objects(body.get("messages"), "messages", empty=_NO_MESSAGES):
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            talk.history.extend(_user(content, f"{at}.content", talk))
        elif role == "assistant":
            talk.history.append(_assistant(content, f"{at}.content", talk))
        else:
            raise bad(f"{at}.role", f"unsupported role {role!r} (user or assistant)")
    prompt = talk.prompt(
        "messages",
        "the last message must be the user's, with more than tool results",
        model=model,
        max_tokens=max_tokens,
        temperature=temperature,
    )
    return prompt, stream


_NO_MESSAGES = "at least one message is required"


def _user(content: object, where: str, talk: Conversation) -> list[HistoryMessage]:
    """A user turn: its tool results (one message each) first, then the rest as one message."""
    if isinstance(content, str):
        return [UserMessage(content=(TextBlock(text=content),))]

    def tool_result(block: Mapping[str, Any], at: str) -> ToolMessage:
        answered = block.get("tool_use_id")
        call_id, name = talk.answered(answered, f"{at}.tool_use_id", call="tool_use")
        text = joined_text(block.get("content", ""), f"{at}.content")
        return ToolMessage.of(call_id, name, text, "error" if block.get("is_error") else "ok")

    parsers: dict[str, PartParser[ContentBlock | ToolMessage]] = {
        "text": text_part,
        "image": lambda block, at: _source_block(block, at, "image"),
        "document": lambda block, at: _source_block(block, at, "document"),
        "tool_result": tool_result,
    }
    parts = parse_parts(content, where, parsers, what="content block")
    results: list[HistoryMessage] = [p for p in parts if isinstance(p, ToolMessage)]
    blocks = tuple(p for p in parts if not isinstance(p, ToolMessage))
    if blocks:
        results.append(UserMessage(content=blocks))
    if not results:
        raise bad(where, "empty content")
    return results


def _tool_use(talk: Conversation) -> PartParser[ContentBlock]:
    def parse(block: Mapping[str, Any], at: str) -> ContentBlock:
        call_id = require_str(block.get("id"), f"{at}.id")
        name = require_str(block.get("name"), f"{at}.name")
        arguments = require_object(block.get("input", {}), f"{at}.input")
        talk.called(call_id, name)
        return ToolCallBlock(id=call_id, name=name, arguments=dict(arguments))

    return parse


def _assistant(content: object, where: str, talk: Conversation) -> AssistantMessage:
    if isinstance(content, str):
        return AssistantMessage(content=(TextBlock(text=content),) if content else ())
    parsers = {"text": text_part, "tool_use": _tool_use(talk)}
    blocks = parse_parts(content, where, parsers, what="assistant block")
    return AssistantMessage(content=tuple(blocks))


def _usage(usage: Usage | None) -> dict[str, int]:
    # Anthropic's schema has no "not reported": zeros stand in only when the provider gave none
    if usage is None:
        return {"input_tokens": 0, "output_tokens": 0}
    return {"input_tokens": usage.prompt, "output_tokens": usage.completion}


def message_body(finished: Finished) -> dict[str, Any]:
    """The non-streamed answer."""
    if finished.finish == "error":
        raise reported_error("stop_reason error")
    content = [{"type": "text", "text": finished.text}] if finished.text else []
    return {
        "id": f"msg_{secrets.token_hex(12)}",
        "type": "message",
        "role": "assistant",
        "model": finished.model,
        "content": content,
        "stop_reason": _STOP[finished.finish],
        "stop_sequence": None,
        "usage": _usage(finished.usage),
    }


def _frame(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class MessagesStream:
    """Renders run events as Anthropic stream events (``message_start`` ... ``message_stop``)."""

    def __init__(self, model: str, estimate: int = 0) -> None:
        self._model = model
        self._estimate = estimate
        self._started = False
        self._open = False
        delta = {"type": "text_delta", "text": Template.hole()}
        self._text = Template(
            "event: content_block_delta\ndata: ",
            {"type": "content_block_delta", "index": 0, "delta": delta},
            "\n\n",
        )

    def start(self) -> list[bytes]:
        # message_start waits for the first event: a provider that reports the input tokens
        # before its answer (Anthropic's) gives the real number; otherwise the estimate
        return []

    def _message_start(self, input_tokens: int) -> list[bytes]:
        if self._started:
            return []
        self._started = True
        message: dict[str, Any] = {
            "id": f"msg_{secrets.token_hex(12)}",
            "type": "message",
            "role": "assistant",
            "model": self._model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 0},
        }
        return [_frame("message_start", {"type": "message_start", "message": message})]

    def event(self, event: RunEvent) -> list[bytes]:
        if isinstance(event, UsageOut):
            return self._message_start(event.usage.prompt)
        return [*self._message_start(self._estimate), *self._event(event)]

    def _event(self, event: RunEvent) -> list[bytes]:
        if isinstance(event, TextOut):
            frames = []
            if not self._open:
                self._open = True
                frames.append(
                    _frame(
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": 0,
                            "content_block": {"type": "text", "text": ""},
                        },
                    )
                )
            frames.append(self._text.fill(event.text))
            return frames
        if isinstance(event, ApprovalRequested):
            return [f": approval pending {event.approval_id} ({event.tool})\n\n".encode()]
        if isinstance(event, Finished):
            if event.finish == "error":
                return self.error(reported_error("stop_reason error"))
            frames = []
            if self._open:
                frames.append(
                    _frame("content_block_stop", {"type": "content_block_stop", "index": 0})
                )
            frames.append(
                _frame(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": _STOP[event.finish], "stop_sequence": None},
                        "usage": _usage(event.usage),
                    },
                )
            )
            frames.append(_frame("message_stop", {"type": "message_stop"}))
            return frames
        return []

    def error(self, error: ApiError) -> list[bytes]:
        return [_frame("error", error.body("anthropic"))]
