"""The ``transcript_path`` hooks read: the conversation in Claude Code's transcript shape.

Claude Code hands every hook the path of a JSONL transcript -- one JSON object a line, each
with ``type`` (``user`` / ``assistant``), ``message`` (``role`` and ``content`` blocks:
``text``, ``tool_use``, ``tool_result``), ``uuid``, ``parentUuid``, ``sessionId``, ``cwd``
and ``timestamp``.  Hook scripts read it (the last assistant message, the tool calls so
far), so agentrig writes the same shape from the session's model-visible messages and brings
the file up to date before each hook runs.  Only the lines not yet written are appended.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentrig.ids import new_message_id
from agentrig.llm import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    UserMessage,
)

__all__ = ["TranscriptWriter", "transcript_line"]


def _timestamp() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def _block(block: Any) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolCallBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.arguments}
    dumped: dict[str, Any] = block.model_dump(mode="json")
    return dumped


def _message(message: Message) -> tuple[str, dict[str, Any]] | None:
    if isinstance(message, UserMessage):
        blocks = [_block(b) for b in message.content]
        return "user", {"role": "user", "content": blocks}
    if isinstance(message, AssistantMessage):
        body: dict[str, Any] = {
            "type": "message",
            "role": "assistant",
            "model": message.model,
            "content": [_block(b) for b in message.content],
            "stop_reason": message.stop_reason,
        }
        return "assistant", body
    if isinstance(message, ToolMessage):
        result = {
            "type": "tool_result",
            "tool_use_id": message.call_id,
            "content": message.text,
            "is_error": message.status != "ok",
        }
        return "user", {"role": "user", "content": [result]}
    return None  # the system prompt is not a transcript line in Claude Code either


def transcript_line(
    message: Message, *, session_id: str, cwd: str, parent: str | None
) -> dict[str, Any] | None:
    """One transcript line for ``message`` (``None`` for a message Claude Code does not log)."""
    shaped = _message(message)
    if shaped is None:
        return None
    kind, body = shaped
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session_id,
        "type": kind,
        "message": body,
        "uuid": new_message_id(),
        "timestamp": _timestamp(),
    }


class _File:
    __slots__ = ("parent", "path", "written")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.written = 0  # messages of the session view already on disk
        self.parent: str | None = None


class TranscriptWriter:
    """Keeps one transcript file per session in a private directory, removed on :meth:`close`.

    ``directory`` defaults to a fresh temporary directory (mode 0700): transcripts hold the
    conversation, so they are not left in the project.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self._owned = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="agentrig-transcripts-"))
        self.directory.mkdir(parents=True, exist_ok=True)
        self._files: dict[str, _File] = {}

    def path(self, session_id: str) -> Path:
        """Where ``session_id``'s transcript lives (created empty on first use)."""
        entry = self._files.get(session_id)
        if entry is None:
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)
            entry = self._files[session_id] = _File(self.directory / f"{safe}.jsonl")
            entry.path.touch(mode=0o600)
        return entry.path

    def sync(self, session_id: str, messages: Sequence[Message], *, cwd: str) -> str:
        """Append the messages not yet written; returns the transcript's path."""
        path = self.path(session_id)
        entry = self._files[session_id]
        if len(messages) < entry.written:  # the view was rebuilt shorter: write it afresh
            path.write_text("", encoding="utf-8")
            entry.written, entry.parent = 0, None
        lines: list[str] = []
        for message in messages[entry.written :]:
            line = transcript_line(message, session_id=session_id, cwd=cwd, parent=entry.parent)
            if line is not None:
                entry.parent = line["uuid"]
                lines.append(json.dumps(line, ensure_ascii=False, default=str))
        entry.written = len(messages)
        if lines:
            with path.open("a", encoding="utf-8") as handle:
                handle.write("\n".join(lines) + "\n")
        return str(path)

    def forget(self, session_id: str) -> None:
        """Stop tracking ``session_id`` (its file stays until :meth:`close`)."""
        self._files.pop(session_id, None)

    def close(self) -> None:
        """Remove the directory when this writer created it."""
        self._files.clear()
        if self._owned:
            shutil.rmtree(self.directory, ignore_errors=True)
