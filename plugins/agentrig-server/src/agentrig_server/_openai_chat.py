"""``POST /v1/chat/completions``: OpenAI chat requests in, chat completions (or chunks) out.

System and developer messages join the agent's own system prompt; user, assistant and tool
messages become the session's history; the last message must be the user's.  Tool calls stay
on the server: they never appear in the answer as calls for the client to run.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from typing import Any

from agentrig.llm import (
    AssistantMessage,
    ContentBlock,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    Usage,
    UserMessage,
)
from agentrig_server._conversation import Conversation
from agentrig_server._errors import ApiError, reported_error
from agentrig_server._events import ApprovalRequested, Finished, FinishReason, RunEvent, TextOut
from agentrig_server._runs import Prompt
from agentrig_server._validate import (
    PartParser,
    Template,
    bad,
    check_keys,
    data_url_block,
    inline_file,
    joined_text,
    objects,
    opt_bool,
    opt_int,
    opt_temperature,
    require_object,
    require_str,
    text_part,
    user_content,
)

__all__ = ["ChatStream", "chat_completion", "parse_chat_request"]

_SUPPORTED = (
    "model",
    "messages",
    "stream",
    "stream_options",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "n",
    "user",
)
_TOOL_KEYS = ("tools", "tool_choice", "functions", "function_call", "parallel_tool_calls")


def _image_url(part: Mapping[str, Any], at: str) -> ContentBlock:
    image = require_object(part.get("image_url"), f"{at}.image_url")
    url = require_str(image.get("url"), f"{at}.image_url.url")
    return data_url_block(url, f"{at}.image_url.url", kind="image")


def _file(part: Mapping[str, Any], at: str) -> ContentBlock:
    file = require_object(part.get("file"), f"{at}.file")
    if "file_data" not in file:
        raise bad(f"{at}.file", "only inline file_data is supported (no file ids)")
    return inline_file(file.get("file_data"), file.get("filename"), f"{at}.file.file_data")


_USER_PARTS: dict[str, PartParser[ContentBlock]] = {
    "text": text_part,
    "image_url": _image_url,
    "file": _file,
}


def parse_chat_request(body: object) -> tuple[Prompt, bool, bool]:
    """``(prompt, stream, include_usage)`` from a request body, or a 400 naming the field."""
    body = require_object(body, "body")
    check_keys(body, "", _SUPPORTED, tools=_TOOL_KEYS)
    model = require_str(body.get("model"), "model")
    n = body.get("n")
    if n not in (None, 1):
        raise bad("n", "only n=1 is supported")
    stream = opt_bool(body, "stream")
    options = body.get("stream_options")
    include_usage = False
    if options is not None:
        if not stream:  # as OpenAI answers: the options have no stream to apply to
            raise bad("stream_options", "only allowed when 'stream' is true")
        options = require_object(options, "stream_options")
        check_keys(options, "stream_options.", ("include_usage",))
        include_usage = opt_bool(options, "include_usage")
    max_tokens = opt_int(body, "max_completion_tokens") or opt_int(body, "max_tokens")
    temperature = opt_temperature(body, "temperature", 2.0)
    talk = Conversation()
    for at, message in objects(body.get("messages"), "messages", empty=_NO_MESSAGES):
        role = message.get("role")
        content = message.get("content")
        if role in ("system", "developer"):
            talk.system.append(joined_text(content, f"{at}.content"))
        elif role == "user":
            talk.history.append(
                UserMessage(content=user_content(content, f"{at}.content", _USER_PARTS))
            )
        elif role == "assistant":
            talk.history.append(_assistant(message, at, talk))
        elif role == "tool":
            answered = message.get("tool_call_id")
            call_id, name = talk.answered(answered, f"{at}.tool_call_id", call=_CALL)
            text = joined_text(content, f"{at}.content")
            talk.history.append(ToolMessage.of(call_id, name, text))
        else:
            raise bad(f"{at}.role", f"unsupported role {role!r}")
    prompt = talk.prompt(
        "messages",
        "the last message must be the user's",
        model=model,
        max_tokens=max_tokens,
        temperature=temperature,
    )
    return prompt, stream, include_usage


_NO_MESSAGES = "at least one message is required"
_CALL = "assistant tool call"


def _assistant(message: Mapping[str, Any], at: str, talk: Conversation) -> AssistantMessage:
    content = message.get("content")
    blocks: list[ContentBlock] = []
    if content is not None:
        text = joined_text(content, f"{at}.content")
        if text:
            blocks.append(TextBlock(text=text))
    for where, call in objects(message.get("tool_calls") or [], f"{at}.tool_calls"):
        function = require_object(call.get("function"), f"{where}.function")
        call_id = require_str(call.get("id"), f"{where}.id")
        name = require_str(function.get("name"), f"{where}.function.name")
        arguments = require_str(function.get("arguments", ""), f"{where}.function.arguments")
        talk.called(call_id, name)
        blocks.append(ToolCallBlock.from_json(call_id, name, arguments))
    return AssistantMessage(content=tuple(blocks))


def _usage(usage: Usage | None) -> dict[str, int] | None:
    if usage is None:
        return None
    return {
        "prompt_tokens": usage.prompt,
        "completion_tokens": usage.completion,
        "total_tokens": usage.total,
    }


#: how chat completions word each way a run ends: the API has no reason for a deadline, so
#: a run that passed it is a truncation; a refusal is a content-filter stop, as OpenAI's own
#: moderation ends a reply
_FINISH: dict[FinishReason, str] = {
    "stop": "stop",
    "length": "length",
    "timeout": "length",
    "refusal": "content_filter",
    "content_filter": "content_filter",
}


def chat_completion(finished: Finished) -> dict[str, Any]:
    """The non-streamed answer."""
    if finished.finish == "error":
        raise reported_error("finish_reason error")
    refusal = finished.text if finished.finish == "refusal" else None
    body: dict[str, Any] = {
        "id": f"chatcmpl-{secrets.token_hex(12)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": finished.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": finished.text, "refusal": refusal},
                "finish_reason": _FINISH[finished.finish],
                "logprobs": None,
            }
        ],
    }
    usage = _usage(finished.usage)
    if usage is not None:
        body["usage"] = usage
    return body


class ChatStream:
    """Renders run events as ``chat.completion.chunk`` SSE frames."""

    def __init__(self, model: str, include_usage: bool) -> None:
        self._id = f"chatcmpl-{secrets.token_hex(12)}"
        self._created = int(time.time())
        self._model = model
        self._include_usage = include_usage
        self._text = Template("data: ", self._body({"content": Template.hole()}, None), "\n\n")

    def _body(self, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": self._id,
            "object": "chat.completion.chunk",
            "created": self._created,
            "model": self._model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        if self._include_usage:
            body["usage"] = None
        return body

    def _chunk(self, delta: dict[str, Any], finish: str | None) -> bytes:
        body = json.dumps(self._body(delta, finish), separators=(",", ":"))
        return b"data: " + body.encode() + b"\n\n"

    def start(self) -> list[bytes]:
        return [self._chunk({"role": "assistant", "content": ""}, None)]

    def event(self, event: RunEvent) -> list[bytes]:
        if isinstance(event, TextOut):
            return [self._text.fill(event.text)]
        if isinstance(event, ApprovalRequested):
            # an SSE comment: clients skip it; a person answers at /v1/approvals/{id}
            return [f": approval pending {event.approval_id} ({event.tool})\n\n".encode()]
        if isinstance(event, Finished):
            if event.finish == "error":
                return self.error(reported_error("finish_reason error"))
            frames = [self._chunk({}, _FINISH[event.finish])]
            if self._include_usage:
                body = {
                    "id": self._id,
                    "object": "chat.completion.chunk",
                    "created": self._created,
                    "model": self._model,
                    "choices": [],
                    "usage": _usage(event.usage),
                }
                frames.append(
                    b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"
                )
            frames.append(b"data: [DONE]\n\n")
            return frames
        return []

    def error(self, error: ApiError) -> list[bytes]:
        return [b"data: " + json.dumps(error.body("openai")).encode() + b"\n\n"]
