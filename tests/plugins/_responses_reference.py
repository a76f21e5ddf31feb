"""OpenAI Responses API objects and stream events, written to OpenAI's API reference.

A reply is planned as a list of output items (``message``, ``function_call``, ``reasoning``);
:func:`response_object` is the finished ``response`` object (the non-streamed answer and the
payload of ``response.completed``), :func:`stream_events` the events a streamed answer sends
for it, in the reference's order: ``response.created``, ``response.in_progress``, then per
item ``output_item.added`` / its part and delta events / ``output_item.done``, then
``response.completed`` (or ``response.incomplete``), every event with its
``sequence_number``.  The official ``openai`` SDK parses what these build (checked in
``test_openai_responses_server.py``).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "function_call",
    "message",
    "reasoning",
    "refusal",
    "response_object",
    "stream_events",
    "usage",
]


def _id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


def _assistant(part: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": _id("msg"),
        "status": "completed",
        "role": "assistant",
        "content": [part],
    }


def message(text: str) -> dict[str, Any]:
    return _assistant({"type": "output_text", "text": text, "annotations": [], "logprobs": []})


def refusal(text: str) -> dict[str, Any]:
    return _assistant({"type": "refusal", "refusal": text})


def function_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": _id("fc"),
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


def reasoning(summary: Sequence[str], encrypted: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": _id("rs"),
        "summary": [{"type": "summary_text", "text": s} for s in summary],
    }
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


def usage(prompt: int, completion: int, *, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": prompt + completion,
    }


def response_object(
    response_id: str,
    model: str,
    output: Sequence[Mapping[str, Any]],
    *,
    status: str = "completed",
    incomplete: str | None = None,
    usage: Mapping[str, Any] | None = None,
    previous: str | None = None,
    store: bool = True,
) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "instructions": None,
        "max_output_tokens": None,
        "model": model,
        "output": [dict(item) for item in output],
        "parallel_tool_calls": True,
        "previous_response_id": previous,
        "reasoning": {"effort": None, "summary": None},
        "store": store,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": dict(usage) if usage is not None else None,
        "user": None,
        "metadata": {},
    }


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class _Events:
    def __init__(self) -> None:
        self.out: list[dict[str, Any]] = []

    def add(self, kind: str, **fields: Any) -> None:
        self.out.append({"type": kind, **fields, "sequence_number": len(self.out)})


def _message_events(ev: _Events, index: int, item: Mapping[str, Any], size: int) -> None:
    item_id = item["id"]
    ev.add("response.output_item.added", output_index=index, item={**item, "content": []})
    for part_index, part in enumerate(item["content"]):
        kind = part["type"]
        empty = {**part, kind if kind == "refusal" else "text": ""}
        where = {"item_id": item_id, "output_index": index, "content_index": part_index}
        ev.add("response.content_part.added", **where, part=empty)
        if kind == "refusal":
            for piece in _pieces(part["refusal"], size):
                ev.add("response.refusal.delta", **where, delta=piece)
            ev.add("response.refusal.done", **where, refusal=part["refusal"])
        else:
            for piece in _pieces(part["text"], size):
                ev.add("response.output_text.delta", **where, delta=piece, logprobs=[])
            ev.add("response.output_text.done", **where, text=part["text"], logprobs=[])
        ev.add("response.content_part.done", **where, part=part)
    ev.add("response.output_item.done", output_index=index, item=item)


def _call_events(ev: _Events, index: int, item: Mapping[str, Any], size: int) -> None:
    ev.add("response.output_item.added", output_index=index, item={**item, "arguments": ""})
    where = {"item_id": item["id"], "output_index": index}
    for piece in _pieces(item["arguments"], size):
        ev.add("response.function_call_arguments.delta", **where, delta=piece)
    ev.add("response.function_call_arguments.done", **where, arguments=item["arguments"])
    ev.add("response.output_item.done", output_index=index, item=item)


def _reasoning_events(ev: _Events, index: int, item: Mapping[str, Any], size: int) -> None:
    ev.add("response.output_item.added", output_index=index, item={**item, "summary": []})
    where = {"item_id": item["id"], "output_index": index}
    for summary_index, part in enumerate(item["summary"]):
        ev.add(
            "response.reasoning_summary_part.added",
            **where,
            summary_index=summary_index,
            part={"type": "summary_text", "text": ""},
        )
        for piece in _pieces(part["text"], size):
            ev.add(
                "response.reasoning_summary_text.delta",
                **where,
                summary_index=summary_index,
                delta=piece,
            )
        ev.add(
            "response.reasoning_summary_text.done",
            **where,
            summary_index=summary_index,
            text=part["text"],
        )
        ev.add(
            "response.reasoning_summary_part.done", **where, summary_index=summary_index, part=part
        )
    ev.add("response.output_item.done", output_index=index, item=item)


def stream_events(final: Mapping[str, Any], *, delta_size: int = 3) -> list[dict[str, Any]]:
    """The events that stream ``final`` (a finished response object)."""
    ev = _Events()
    started = {**final, "status": "in_progress", "output": [], "usage": None}
    started["incomplete_details"] = None
    ev.add("response.created", response=started)
    ev.add("response.in_progress", response=started)
    writers = {"message": _message_events, "function_call": _call_events}
    for index, item in enumerate(final["output"]):
        writers.get(item["type"], _reasoning_events)(ev, index, item, delta_size)
    terminal = {"completed": "response.completed", "incomplete": "response.incomplete"}
    ev.add(terminal.get(final["status"], "response.failed"), response=dict(final))
    return ev.out
