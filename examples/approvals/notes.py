"""The approvals example's tools: one that only reads (never asked), one that writes (asked)."""

from __future__ import annotations

from pathlib import Path

from agentrig.plugin import tool


@tool(risk="inspect")
def read_note(path: str) -> str:
    """Read the note at ``path`` (empty when there is none)."""
    note = Path(path)
    return note.read_text(encoding="utf-8") if note.is_file() else ""


@tool(risk="modify")
def write_note(path: str, text: str) -> str:
    """Write ``text`` to the note at ``path``, replacing what was there."""
    Path(path).write_text(text, encoding="utf-8")
    return f"wrote {len(text)} characters to {path}"
