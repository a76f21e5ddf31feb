"""Reading a server's listings and results entry by entry, keeping what is valid.

The SDK validates a whole ``tools/list`` or ``tools/call`` answer at once: one tool entry or
one content block of an unknown shape fails all of it, with a validation dump in place of the
result.  Here the envelope is read loosely and each entry validated on its own: a bad tool
is skipped (the caller warns), a bad block dropped with a note the model sees, structured
content that is not an object dropped the same way.
"""

from __future__ import annotations

from typing import Any

from mcp import types
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

__all__ = ["RawCallResult", "RawToolList", "call_result", "listed_tools"]

_BLOCK: TypeAdapter[types.ContentBlock] = TypeAdapter(types.ContentBlock)


class RawToolList(BaseModel):
    """A ``tools/list`` answer, its entries not yet validated."""

    model_config = ConfigDict(extra="allow")
    tools: list[Any] = []
    next_cursor: str | None = Field(default=None, alias="nextCursor")


class RawCallResult(BaseModel):
    """A ``tools/call`` answer, its blocks not yet validated."""

    model_config = ConfigDict(extra="allow")
    content: list[Any] = []
    structured_content: Any = Field(default=None, alias="structuredContent")
    is_error: Any = Field(default=False, alias="isError")


def _label(raw: object) -> str:
    if isinstance(raw, dict):
        kind = raw.get("type")
        if isinstance(kind, str):
            return repr(kind[:40])
    return type(raw).__name__


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(root)"
    return f"{where}: {first['msg']}"


def listed_tools(raw: RawToolList) -> tuple[list[types.Tool], list[str]]:
    """The valid tools of a listing, and a reason for each entry that is not."""
    tools: list[types.Tool] = []
    bad: list[str] = []
    for index, entry in enumerate(raw.tools):
        try:
            tools.append(types.Tool.model_validate(entry))
        except ValidationError as exc:
            name = entry.get("name") if isinstance(entry, dict) else None
            shown = repr(name[:80]) if isinstance(name, str) else f"entry {index}"
            bad.append(f"{shown}: {_first_error(exc)}")
    return tools, bad


def call_result(raw: RawCallResult) -> types.CallToolResult:
    """The result with every valid block; what was dropped is said in a last text block."""
    blocks: list[types.ContentBlock] = []
    dropped: list[str] = []
    for entry in raw.content:
        try:
            blocks.append(_BLOCK.validate_python(entry))
        except ValidationError:
            dropped.append(_label(entry))
    structured = raw.structured_content
    if structured is not None and not isinstance(structured, dict):
        dropped.append(f"structured content ({type(structured).__name__}, not an object)")
        structured = None
    if dropped:
        shown = ", ".join(dropped[:5]) + (
            f" and {len(dropped) - 5} more" if len(dropped) > 5 else ""
        )
        note = f"[agentrig: dropped {len(dropped)} part(s) of the result it cannot read: {shown}]"
        blocks.append(types.TextContent(type="text", text=note))
    return types.CallToolResult(
        content=blocks, structured_content=structured, is_error=raw.is_error is True
    )
