"""Read, Write and Edit: Claude Code's file tools, held to the workspace.

Reads are bounded three ways (a line range, a byte cap, a per-line cap) and refuse binary
files; writes are staged (temp file beside the target, then a rename) and never touch Git's
own files; Edit refuses an ``old_string`` that matches more than once unless the call says
``replace_all``, because guessing which one was meant is how edits land in the wrong place.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agentrig.builtins.workspace._base import BlockingTool
from agentrig.builtins.workspace._errors import EditMatchError, WorkspacePathError
from agentrig.builtins.workspace._space import Workspace, staged_write
from agentrig.tools import PermissionArg

__all__ = ["EditInput", "EditTool", "ReadInput", "ReadTool", "WriteInput", "WriteTool"]

_SNIFF = 8192
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReadInput(_Input):
    file_path: str = Field(description="The absolute path of the file to read.")
    offset: int | None = Field(
        default=None, ge=1, description="The line number to start reading from (1-based)."
    )
    limit: int | None = Field(default=None, ge=1, description="The number of lines to read.")


class WriteInput(_Input):
    file_path: str = Field(description="The absolute path of the file to write.")
    content: str = Field(description="The content to write to the file.")


class EditInput(_Input):
    file_path: str = Field(description="The absolute path of the file to modify.")
    old_string: str = Field(description="The text to replace.")
    new_string: str = Field(description="The text to replace it with (must differ).")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


def _open_file(path: Path) -> int:
    """Open the canonical ``path`` for reading without following a link swapped in since."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW)
    except FileNotFoundError:
        raise WorkspacePathError(f"{str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise WorkspacePathError(f"{str(path)!r} is a directory; use Glob to list it") from None
    except OSError as exc:
        raise WorkspacePathError(f"cannot open {str(path)!r}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or a device would block or never end
        os.close(fd)
        raise WorkspacePathError(f"{str(path)!r} is not a regular file")
    return fd


def read_text(path: Path, limit_bytes: int) -> str:
    """The whole file as text (for Edit): refused when binary or over ``limit_bytes``."""
    fd = _open_file(path)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit_bytes + 1)
    if len(data) > limit_bytes:
        raise WorkspacePathError(f"{str(path)!r} is larger than {limit_bytes} bytes")
    if b"\x00" in data[:_SNIFF]:
        raise WorkspacePathError(f"{str(path)!r} is a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise WorkspacePathError(f"{str(path)!r} is not UTF-8 text") from None


class ReadTool(BlockingTool[ReadInput]):
    name = "Read"
    summary = (
        "Read a text file of the workspace. Lines are numbered from 1 (cat -n style); pass "
        "offset and limit to read a range of a long file. Binary files are refused."
    )
    model = ReadInput
    risk = "inspect"
    permission_arg = PermissionArg("file_path", "path")

    def run(self, input: ReadInput, space: Workspace) -> str:
        files = space.config.files
        path = space.resolve(input.file_path)
        start = input.offset or 1
        wanted = input.limit or files.default_lines
        fd = _open_file(path)
        out: list[str] = []
        used = 0
        more = ""
        with os.fdopen(fd, "rb") as handle:
            if b"\x00" in handle.read(_SNIFF):
                raise WorkspacePathError(f"{str(path)!r} is a binary file")
            handle.seek(0)
            number = 0
            for raw in handle:
                number += 1
                if number < start:
                    continue
                if len(out) >= wanted:
                    more = f"[more lines follow; read on with offset={number}]"
                    break
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if len(line) > files.max_line_chars:
                    line = line[: files.max_line_chars] + " [line cut]"
                used += len(line) + 8
                if used > files.max_read_bytes:
                    more = f"[cut at {files.max_read_bytes} bytes; read on with offset={number}]"
                    break
                out.append(f"{number:>6}\t{line}")
        if not out and not more:
            if number == 0:
                return f"[{space.display(path)} is empty]"
            return f"[{space.display(path)} has {number} lines; offset {start} is past the end]"
        return "\n".join(out) + (f"\n{more}" if more else "")


class WriteTool(BlockingTool[WriteInput]):
    name = "Write"
    summary = (
        "Write a file of the workspace, replacing it if it exists (parent directories are "
        "created). Git's own files (.git/, .gitattributes, .gitmodules) are refused."
    )
    model = WriteInput
    risk = "modify"
    permission_arg = PermissionArg("file_path", "path")
    permission_rule_names = ("Edit",)  # Claude Code applies Edit rules to every file edit

    def run(self, input: WriteInput, space: Workspace) -> str:
        path = space.resolve_for_write(input.file_path)
        if path.is_dir():
            raise WorkspacePathError(f"{str(path)!r} is a directory")
        created = staged_write(path, input.content.encode("utf-8"))
        verb = "Created" if created else "Wrote"
        return f"{verb} {space.display(path)} ({len(input.content.encode('utf-8'))} bytes)"


class EditTool(BlockingTool[EditInput]):
    name = "Edit"
    summary = (
        "Replace text in a file of the workspace. old_string must match exactly once (add "
        "surrounding lines to make it unique) unless replace_all is true."
    )
    model = EditInput
    risk = "modify"
    permission_arg = PermissionArg("file_path", "path")

    def run(self, input: EditInput, space: Workspace) -> str:
        if input.old_string == input.new_string:
            raise EditMatchError("old_string and new_string are the same: nothing to change")
        if not input.old_string:
            raise EditMatchError("old_string is empty; use Write to create a file")
        path = space.resolve_for_write(input.file_path)
        text = read_text(path, space.config.files.max_read_bytes * 40)
        count = text.count(input.old_string)
        if count == 0:
            raise EditMatchError(f"old_string was not found in {space.display(path)}")
        if count > 1 and not input.replace_all:
            raise EditMatchError(
                f"old_string matches {count} places in {space.display(path)}; add surrounding "
                "lines to make it unique, or set replace_all to change every one"
            )
        staged_write(path, text.replace(input.old_string, input.new_string).encode("utf-8"))
        return f"Replaced {count} occurrence{'s' if count > 1 else ''} in {space.display(path)}"
