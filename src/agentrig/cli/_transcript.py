"""A stored session as people read it: text, Markdown, or JSON.

One pass over the session log: turns, user input, steering, the assistant's text with its
usage, each tool call with its arguments and each result with its status.  Nothing is
summarised away, so an export is the transcript, not a digest of it -- except the value of
every secret key (tool arguments, event fields), which the shared redactor replaces.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from agentrig.redaction import redact

if TYPE_CHECKING:
    from agentrig.llm import Usage
    from agentrig.session import SessionEvent

__all__ = ["FORMATS", "compaction_line", "context_of", "render", "total_usage"]

Format = Literal["text", "markdown", "json"]
FORMATS: tuple[Format, ...] = ("text", "markdown", "json")


def total_usage(events: Sequence[SessionEvent]) -> Usage | None:
    """The usage the provider reported over the whole session, compactions' summary calls
    and side calls included (None when it reported none)."""
    from agentrig.llm import Usage
    from agentrig.session import event_usage

    found = [u for u in (event_usage(e.data) for e in events) if u is not None]
    if not found:
        return None
    return Usage.of(
        sum(u.prompt for u in found),
        sum(u.completion for u in found),
        total=sum(u.total for u in found),
    )


def _usage_text(usage: Usage | None) -> str:
    if usage is None:
        return "not reported"
    return f"{usage.prompt} prompt + {usage.completion} completion = {usage.total} tokens"


def context_of(events: Sequence[SessionEvent], window: Callable[[str], int] | None) -> Any:
    """The context usage (a ``ContextUsage``) the session's next request would start from:
    the last reply's reported usage plus the estimate since, as the loop measures it.

    ``window`` gives a model's context window (None: unknown, reported as 0).  None when the
    session made no request yet.
    """
    from agentrig.agent import ContextUsage, measure_context
    from agentrig.ids import SessionId
    from agentrig.session import RequestHeader, Session

    model = next(
        (e.data.model for e in reversed(events) if isinstance(e.data, RequestHeader)), None
    )
    if model is None:
        return None
    session = Session(SessionId("ses_context"))
    session.load(events)
    usage: ContextUsage = measure_context(session, window(model) if window is not None else 0)
    return usage


def render(
    session_id: str,
    store: str,
    events: Sequence[SessionEvent],
    fmt: Format,
    *,
    damaged: str = "",
    window: Callable[[str], int] | None = None,
) -> str:
    """The transcript of ``events`` in ``fmt`` (``window``: a model's context window)."""
    context = context_of(events, window)
    if fmt == "json":
        from agentrig.session import dump_event

        usage = total_usage(events)
        document = {
            "session_id": session_id,
            "store": store,
            "damaged": damaged or None,
            "usage": usage.model_dump(mode="json") if usage is not None else None,
            "context": _context_json(context),
            "events": [redact(json.loads(dump_event(e))) for e in events],
        }
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    lines = _Lines(markdown=fmt == "markdown")
    lines.title(f"Session {session_id}", f"store {store!r}, {len(events)} events")
    if damaged:
        lines.note(f"damaged: {damaged}")
    for event in events:
        lines.event(event.data)
    lines.note(f"usage: {_usage_text(total_usage(events))}")
    if context is not None:
        lines.note(f"context: {_context_text(context)}")
    return lines.text()


def compaction_line(data: Any) -> str:
    """``context compacted (auto, summary): 12 message(s) replaced by 1, ~900 -> ~120 tokens``"""
    sizes = ""
    if data.tokens_before is not None and data.tokens_after is not None:
        sizes = f", ~{data.tokens_before:,} -> ~{data.tokens_after:,} tokens"
    return (
        f"context compacted ({data.trigger}, {data.strategy}): {data.replaced} "
        f"message(s) replaced by {len(data.messages)}{sizes}"
    )


def _context_text(context: Any) -> str:
    if context.window:
        return str(context.describe())
    return f"{context.used:,} tokens ({context.source}; context window unknown)"


def _context_json(context: Any) -> dict[str, Any] | None:
    if context is None:
        return None
    return {
        "used": context.used,
        "window": context.window or None,
        "share": round(context.share, 4) if context.window else None,
        "source": context.source,
    }


class _Lines:
    """Accumulates one transcript; the two human formats differ only in markup."""

    def __init__(self, *, markdown: bool) -> None:
        self.markdown = markdown
        self.out: list[str] = []

    def text(self) -> str:
        return "\n".join(self.out).rstrip("\n") + "\n"

    def title(self, text: str, sub: str) -> None:
        if self.markdown:
            self.out += [f"# {text}", "", f"*{sub}*", ""]
        else:
            self.out += [f"{text} ({sub})", ""]

    def heading(self, text: str) -> None:
        self.out += [f"## {text}", ""] if self.markdown else [f"--- {text} ---"]

    def note(self, text: str) -> None:
        self.out += [f"*{text}*", ""] if self.markdown else [f"  ({text})"]

    def said(self, who: str, text: str) -> None:
        if self.markdown:
            self.out += [f"**{who}:** {text}", ""]
        else:
            first, *rest = text.splitlines() or [""]
            self.out += [f"{who}: {first}", *(f"  {line}" for line in rest)]

    def block(self, label: str, body: str, language: str) -> None:
        if self.markdown:
            self.out += [f"**{label}**", "", f"```{language}", body, "```", ""]
        else:
            self.out += [f"{label}: {body}"]

    def event(self, data: Any) -> None:
        kind = data.type
        if kind == "turn/start":
            self.heading(f"turn {data.turn} ({data.trigger})")
        elif kind == "system/prompt":
            self.said("system", data.text)
        elif kind == "user/message":
            self.said("user", data.message.text)
        elif kind == "steering/message":
            self.said(f"steering ({data.message.source})", data.message.text)
        elif kind == "assistant/message":
            message = data.message
            if message.text:
                self.said(
                    "assistant" + (" [interrupted]" if message.interrupted else ""), message.text
                )
            if message.usage is not None:
                self.note(f"usage: {_usage_text(message.usage)}")
        elif kind == "tool/call":
            arguments = json.dumps(redact(data.call.arguments), ensure_ascii=False)
            self.block(f"tool call {data.call.name}", arguments, "json")
        elif kind == "tool/result":
            result = data.message
            self.block(f"tool result {result.name} [{result.status}]", result.text, "text")
        elif kind == "turn/end":
            detail = f": {data.detail}" if data.detail else ""
            self.note(f"turn {data.turn} ended {data.reason}{detail}")
        elif kind == "model/error":
            self.note(
                f"model call failed [{data.code}] ({data.provider} {data.model}, "
                f"attempt {data.attempt}): {data.message}"
            )
        elif kind == "context/compaction":
            self.note(compaction_line(data))
        elif kind == "notice":
            self.note(f"{data.source}: {data.text}")
