"""``POST /v1/responses``: the OpenAI Responses API, plain and streamed.

``instructions`` join the agent's own system prompt; ``input`` is a string or a list of
message, ``function_call``, ``function_call_output``, ``mcp_call`` and
``mcp_approval_request`` items (a client that keeps the conversation itself sends an earlier
reply's ``output`` back, server-side calls included).  With ``store`` (the default, as in
OpenAI's API) the server keeps the conversation, and a later request continues it with
``previous_response_id``.  The agent's own tool calls are server-side: they appear in
``output`` as ``mcp_call`` items (``server_label`` ``"agentrig"``) with their results, and a
call waiting for a person as an ``mcp_approval_request`` item -- answered at
``POST /v1/approvals/{id}``, or by a request whose input ends with ``mcp_approval_response``
items.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping
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
from agentrig_server._approvals import ApprovalAnswer
from agentrig_server._conversation import Conversation
from agentrig_server._errors import ApiError
from agentrig_server._events import (
    ApprovalRequested,
    Finished,
    FinishReason,
    RunEvent,
    TextOut,
    ToolCallOut,
    ToolResultOut,
    UsageOut,
)
from agentrig_server._runs import STEP_SEPARATOR, Prompt
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

__all__ = ["ResponseBuilder", "parse_responses_request"]

_SUPPORTED = (
    "model",
    "input",
    "include",
    "instructions",
    "previous_response_id",
    "stream",
    "store",
    "max_output_tokens",
    "temperature",
    "metadata",
    "user",
)
_TOOL_KEYS = ("tools", "tool_choice", "parallel_tool_calls")


def parse_responses_request(
    body: object,
) -> tuple[Prompt | tuple[ApprovalAnswer, ...], bool, dict[str, Any]]:
    """``(prompt, stream, echo)`` -- ``echo`` holds request fields the response repeats; an
    input that ends with ``mcp_approval_response`` items gives those answers instead of a
    prompt (nothing new for the agent: the run that waits continues where it is)."""
    body = require_object(body, "body")
    check_keys(body, "", _SUPPORTED, tools=_TOOL_KEYS)
    model = require_str(body.get("model"), "model")
    stream = opt_bool(body, "stream")
    store = body.get("store", True)
    if not isinstance(store, bool):
        raise bad("store", f"expected true or false, got {store!r}")
    _check_include(body.get("include"))
    instructions = body.get("instructions")
    if instructions is not None:
        require_str(instructions, "instructions")
    previous = body.get("previous_response_id")
    if previous is not None:
        require_str(previous, "previous_response_id")
    metadata = body.get("metadata") or {}
    require_object(metadata, "metadata")
    raw = body.get("input")
    talk = Conversation([instructions] if instructions else [])
    answers: tuple[ApprovalAnswer, ...] = ()
    if isinstance(raw, str):
        talk.history.append(UserMessage(content=(TextBlock(text=raw),)))
    else:
        answers = _items(raw, talk)
    max_tokens = opt_int(body, "max_output_tokens")
    temperature = opt_temperature(body, "temperature", 2.0)
    echo = {
        "instructions": instructions,
        "previous_response_id": previous,
        "metadata": dict(metadata),
        "store": store,
        "temperature": temperature,
        "max_output_tokens": max_tokens,
    }
    if answers:
        return answers, stream, echo
    prompt = talk.prompt(
        "input",
        "the last input item must be the user's message",
        model=model,
        max_tokens=max_tokens,
        temperature=temperature,
        previous_response=previous,
        store=store or previous is not None,
    )
    return prompt, stream, echo


# What ``include`` may name: the agents' reasoning is not sent out, so a stateless client's
# request for it encrypted (OpenAI's ``store: false`` pattern) has nothing to add.
_INCLUDABLE = ("reasoning.encrypted_content",)


def _check_include(raw: object) -> None:
    if raw is None:
        return
    if not isinstance(raw, list) or not all(isinstance(value, str) for value in raw):
        raise bad("include", "expected a list of strings")
    for at, value in enumerate(raw):
        if value not in _INCLUDABLE:
            raise bad(
                f"include[{at}]",
                f"{value!r} cannot be included by this server (supported: "
                f"{', '.join(_INCLUDABLE)})",
            )


def _items(raw: object, talk: Conversation) -> tuple[ApprovalAnswer, ...]:
    """Read the input items into ``talk``; the ``mcp_approval_response`` items that end it."""
    items = talk.history
    approvals = _Approvals()
    for at, item in objects(raw, "input"):
        kind = item.get("type", "message")
        if approvals.answers and kind != "mcp_approval_response":
            raise bad(at, "after an mcp_approval_response item only more of them may follow")
        if kind == "message":
            role = item.get("role")
            if role in ("system", "developer"):
                talk.system.append(joined_text(item.get("content"), f"{at}.content", _TEXT_KINDS))
            elif role == "user":
                items.append(
                    UserMessage(
                        content=user_content(item.get("content"), f"{at}.content", _USER_PARTS)
                    )
                )
            elif role == "assistant":
                text = joined_text(item.get("content"), f"{at}.content", _TEXT_KINDS)
                items.append(AssistantMessage(content=(TextBlock(text=text),) if text else ()))
            else:
                raise bad(f"{at}.role", f"unsupported role {role!r}")
        elif kind == "function_call":
            call_id = require_str(item.get("call_id"), f"{at}.call_id")
            _call(item, at, call_id, talk)
        elif kind == "function_call_output":
            answered = item.get("call_id")
            call_id, name = talk.answered(answered, f"{at}.call_id", call="function_call")
            output = item.get("output")
            text = output if isinstance(output, str) else json.dumps(output)
            items.append(ToolMessage.of(call_id, name, text))
        elif kind in _MCP_ITEMS:
            approvals.read(kind, item, at, talk)
        else:
            raise bad(
                f"{at}.type",
                f"unsupported input item {kind!r} (supported: message, function_call, "
                f"function_call_output, {', '.join(_MCP_ITEMS)})",
            )
    return approvals.finish()


_MCP_ITEMS = ("mcp_call", "mcp_approval_request", "mcp_approval_response")


class _Approvals:
    """The server-side calls of an input: ``mcp_call`` items (a call and its result) and the
    approval requests and answers around them.

    A call that waited for a person is sent back as its ``mcp_approval_request`` and its
    ``mcp_call`` (which names the request in ``approval_request_id``; a streamed reply lists
    the call first): one call in the history, with its result.  A request with neither its
    call nor an answer in the input is a call without a result, which no model may be sent.
    """

    __slots__ = ("answers", "ran", "waiting")

    def __init__(self) -> None:
        self.waiting: dict[str, str] = {}  # approval id -> where its request stands
        self.ran: set[str] = set()  # approval ids whose mcp_call came first
        self.answers: list[ApprovalAnswer] = []

    def read(self, kind: str, item: Mapping[str, Any], at: str, talk: Conversation) -> None:
        if kind == "mcp_approval_request":
            approval_id = require_str(item.get("id"), f"{at}.id")
            if approval_id not in self.ran:  # else its call (and result) is in already
                self.waiting[approval_id] = at
                _call(item, at, approval_id, talk)
        elif kind == "mcp_approval_response":
            self.answers.append(_answer(item, at))
        else:
            self._ran(item, at, talk)

    def _ran(self, item: Mapping[str, Any], at: str, talk: Conversation) -> None:
        # a tool call the server ran in an earlier reply, sent back whole by a client that
        # keeps the conversation itself (``store: false``): the call and its result
        call_id = require_str(item.get("id"), f"{at}.id")
        asked = item.get("approval_request_id")
        if asked is not None:
            require_str(asked, f"{at}.approval_request_id")
        if asked in self.waiting:  # its approval request recorded the call already
            del self.waiting[asked]
            call_id, name = talk.answered(asked, f"{at}.approval_request_id", call="request")
        else:
            name = _call(item, at, call_id, talk)
            if asked is not None:
                self.ran.add(asked)
        output, error = item.get("output"), item.get("error")
        if isinstance(output, str):
            talk.history.append(ToolMessage.of(call_id, name, output))
        elif error is not None:
            text = _error_text(error, f"{at}.error")
            talk.history.append(ToolMessage.of(call_id, name, text, "error"))
        else:
            raise bad(f"{at}.output", "an mcp_call item needs its output or its error")

    def finish(self) -> tuple[ApprovalAnswer, ...]:
        answered = {answer.approval_id for answer in self.answers}
        for approval_id, at in self.waiting.items():
            if approval_id not in answered:
                raise bad(
                    at,
                    f"mcp_approval_request {approval_id!r} has no result: send the mcp_call "
                    "that ran it (its approval_request_id names the request), or end the "
                    "input with an mcp_approval_response answering it",
                )
        return tuple(self.answers)


_ERROR_KINDS = ("mcp_protocol_error", "mcp_tool_execution_error", "http_error")


def _error_text(error: object, at: str) -> str:
    """An ``mcp_call``'s error: a string (as this server writes it), or one of the objects
    OpenAI's SDK now types it as (``mcp_tool_execution_error`` with its ``content``; a
    protocol or HTTP error with its ``message``)."""
    if isinstance(error, str):
        return error
    body = require_object(error, at)
    kind = body.get("type")
    if kind == "mcp_tool_execution_error":
        content = body.get("content")
        return content if isinstance(content, str) else json.dumps(content)
    if kind in _ERROR_KINDS:
        return require_str(body.get("message"), f"{at}.message")
    raise bad(
        f"{at}.type", f"unsupported mcp_call error {kind!r} (supported: {', '.join(_ERROR_KINDS)})"
    )


def _answer(item: Mapping[str, Any], at: str) -> ApprovalAnswer:
    """An ``mcp_approval_response`` item, in OpenAI's shape."""
    param = f"{at}.approval_request_id"
    approval_id = require_str(item.get("approval_request_id"), param)
    approve = item.get("approve")
    if not isinstance(approve, bool):
        raise bad(f"{at}.approve", f"expected true or false, got {approve!r}")
    reason = item.get("reason")
    if reason is not None:
        require_str(reason, f"{at}.reason")
    return ApprovalAnswer(approval_id, "allow" if approve else "deny", reason or "", param)


def _call(item: Mapping[str, Any], at: str, call_id: str, talk: Conversation) -> str:
    """Record the tool call ``item`` makes as ``call_id`` in the history; its tool's name."""
    name = require_str(item.get("name"), f"{at}.name")
    arguments = require_str(item.get("arguments", ""), f"{at}.arguments")
    talk.called(call_id, name)
    call = ToolCallBlock.from_json(call_id, name, arguments)
    items = talk.history
    last = items[-1] if items else None
    if isinstance(last, AssistantMessage):  # parallel calls share one message
        items[-1] = AssistantMessage(content=(*last.content, call))
    else:
        items.append(AssistantMessage(content=(call,)))
    return name


_TEXT_KINDS = ("input_text", "output_text", "text")


def _input_image(part: Mapping[str, Any], at: str) -> ContentBlock:
    url = require_str(part.get("image_url"), f"{at}.image_url")
    return data_url_block(url, f"{at}.image_url", kind="image")


def _input_file(part: Mapping[str, Any], at: str) -> ContentBlock:
    return inline_file(part.get("file_data"), part.get("filename"), f"{at}.file_data")


_USER_PARTS: dict[str, PartParser[ContentBlock]] = {
    "input_text": text_part,
    "input_image": _input_image,
    "input_file": _input_file,
}


def _usage(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {
        "input_tokens": usage.prompt,
        "input_tokens_details": {"cached_tokens": usage.cache_read or 0},
        "output_tokens": usage.completion,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning or 0},
        "total_tokens": usage.total,
    }


#: the status each way a run ends gives a response: cut short is ``incomplete`` (with the
#: reason when the API has one: ``max_output_tokens`` for a token budget or limit,
#: ``content_filter`` for a refusal or a filtered reply, none for a deadline); a reply that
#: reported an error is ``failed``
_STATUS: dict[FinishReason, str] = {
    "stop": "completed",
    "length": "incomplete",
    "timeout": "incomplete",
    "refusal": "incomplete",
    "content_filter": "incomplete",
    "error": "failed",
}
_INCOMPLETE: dict[FinishReason, str | None] = {
    "length": "max_output_tokens",
    "timeout": None,
    "refusal": "content_filter",
    "content_filter": "content_filter",
}
_FAILED = "the agent's model reported an error instead of an answer"


class ResponseBuilder:
    """Builds a response's output items from run events -- and, streamed, its events."""

    def __init__(
        self,
        response_id: str,
        model: str,
        echo: Mapping[str, Any],
        session_id: str | None = None,
        keep: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.response_id = response_id
        self._keep = keep
        self.session_id = session_id
        self.model = model
        self.echo = dict(echo)
        self.created = int(time.time())
        self.output: list[dict[str, Any]] = []
        self._seq = 0
        self._message: dict[str, Any] | None = None
        self._pieces: list[str] = []  # the open message's text so far
        self._delta: Template | None = None
        self._calls: dict[str, dict[str, Any]] = {}
        self._approved: dict[str, str] = {}  # call id -> approval id, before its mcp_call

    # ---- the response object ---------------------------------------------------------------
    def final(self, finished: Finished) -> dict[str, Any]:
        """The finished response (the non-streamed answer)."""
        return self.response(_STATUS[finished.finish], finished)

    def response(self, status: str, finished: Finished | None = None) -> dict[str, Any]:
        """The response object; a finished one is handed to ``keep`` (stored responses)."""
        body = self._body(status, finished)
        if finished is not None and self._keep is not None:
            self._keep(body)
        return body

    def _body(self, status: str, finished: Finished | None) -> dict[str, Any]:
        incomplete = None
        error = None
        if finished is not None and status == "incomplete":
            incomplete = {"reason": _INCOMPLETE[finished.finish]}
        elif status == "failed":
            error = {"code": "server_error", "message": _FAILED}
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "error": error,
            "incomplete_details": incomplete,
            "model": self.model,
            "output": list(self.output) if status != "in_progress" else [],
            "usage": _usage(finished.usage) if finished is not None else None,
            "parallel_tool_calls": False,
            "tool_choice": "auto",
            "tools": [],
            "text": {"format": {"type": "text"}},
            "top_p": None,
            "truncation": "disabled",
            "user": None,
            "conversation": {"id": self.session_id} if self.session_id is not None else None,
            **self.echo,
        }

    # ---- events ------------------------------------------------------------------------------
    def _event(self, kind: str, **fields: Any) -> bytes:
        data = {"type": kind, **fields, "sequence_number": self._seq}
        self._seq += 1
        return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()

    def start(self) -> list[bytes]:
        created = self.response("in_progress")
        return [
            self._event("response.created", response=created),
            self._event("response.in_progress", response=created),
        ]

    def _close_message(self) -> list[bytes]:
        message = self._message
        if message is None:
            return []
        self._message = None
        index = self.output.index(message)
        part = message["content"][0]
        part["text"] = "".join(self._pieces)
        message["status"] = "completed"
        return [
            self._event(
                "response.output_text.done",
                item_id=message["id"],
                output_index=index,
                content_index=0,
                text=part["text"],
                logprobs=[],
            ),
            self._event(
                "response.content_part.done",
                item_id=message["id"],
                output_index=index,
                content_index=0,
                part=part,
            ),
            self._event("response.output_item.done", output_index=index, item=message),
        ]

    def event(self, event: RunEvent) -> list[bytes]:
        if isinstance(event, TextOut):
            return self._text(event.text)
        if isinstance(event, ToolCallOut):
            frames = self._close_message()
            item: dict[str, Any] = {
                "type": "mcp_call",
                "id": f"mcp_{secrets.token_hex(10)}",
                "server_label": "agentrig",
                "name": event.name,
                "arguments": json.dumps(event.arguments),
                "output": None,
                "error": None,
                "status": "in_progress",
                # the approval it waited for (a reply read from the session lists it first)
                "approval_request_id": self._approved.pop(event.call_id, None),
            }
            self._calls[event.call_id] = item
            self.output.append(item)
            index = len(self.output) - 1
            return [
                *frames,
                self._event("response.output_item.added", output_index=index, item=item),
            ]
        if isinstance(event, ToolResultOut):
            found = self._calls.pop(event.call_id, None)
            if found is None:
                return []
            item = found
            if event.status == "ok":
                item["output"] = event.text
            else:
                item["error"] = event.text
            item["status"] = "completed" if event.status == "ok" else "failed"
            index = self.output.index(item)
            return [self._event("response.output_item.done", output_index=index, item=item)]
        if isinstance(event, ApprovalRequested):
            return self._approval(event)
        if isinstance(event, UsageOut):
            return []  # the response's usage is the run's, at its end
        if isinstance(event, Finished):
            frames = self._close_message()
            status = _STATUS[event.finish]
            kind = f"response.{status}"
            final = self.response(status, event)
            return [*frames, self._event(kind, response=final)]
        raise TypeError(f"not a run event: {event!r}")

    def _approval(self, event: ApprovalRequested) -> list[bytes]:
        frames = self._close_message()
        if event.call_id is not None:  # its mcp_call item names it (OpenAI's link)
            waiting = self._calls.get(event.call_id)
            if waiting is None:
                self._approved[event.call_id] = event.approval_id
            else:
                waiting["approval_request_id"] = event.approval_id
        approval: dict[str, Any] = {
            "type": "mcp_approval_request",
            "id": event.approval_id,
            "server_label": "agentrig",
            "name": event.tool,
            "arguments": json.dumps(event.arguments),
        }
        self.output.append(approval)
        index = len(self.output) - 1
        return [
            *frames,
            self._event("response.output_item.added", output_index=index, item=approval),
            self._event("response.output_item.done", output_index=index, item=approval),
        ]

    def _text(self, text: str) -> list[bytes]:
        frames: list[bytes] = []
        message = self._message
        if message is None:
            if text == STEP_SEPARATOR:
                return []  # a new step after tool calls starts a new message item instead
            message = {
                "type": "message",
                "id": f"msg_{secrets.token_hex(10)}",
                "status": "in_progress",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "", "annotations": [], "logprobs": []}],
            }
            self._message = message
            self._pieces = []
            self.output.append(message)
            index = len(self.output) - 1
            self._delta = Template(
                "event: response.output_text.delta\ndata: ",
                {
                    "type": "response.output_text.delta",
                    "item_id": message["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": Template.hole(),
                    "logprobs": [],
                    "sequence_number": Template.hole(),
                },
                "\n\n",
            )
            frames.append(
                self._event(
                    "response.output_item.added",
                    output_index=index,
                    item={**message, "content": []},
                )
            )
            frames.append(
                self._event(
                    "response.content_part.added",
                    item_id=message["id"],
                    output_index=index,
                    content_index=0,
                    part={"type": "output_text", "text": "", "annotations": [], "logprobs": []},
                )
            )
        self._pieces.append(text)
        delta = self._delta
        if delta is None:  # made with the message, so never: a programming error
            raise RuntimeError("no open message to add text to")
        frames.append(delta.fill(text, self._seq))
        self._seq += 1
        return frames

    def error(self, error: ApiError) -> list[bytes]:
        return [
            self._event(
                "error",
                code=error.api_code,
                message=error.message,
                param=error.param,
                error=error.body("openai")["error"],
            )
        ]
