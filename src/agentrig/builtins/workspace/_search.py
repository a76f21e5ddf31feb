"""Glob and Grep: find files and lines without leaving the workspace.

The walk never follows a symlinked directory, lists a symlinked file only when it resolves
inside the workspace, and skips ``.git/`` (Git's objects are not the project's text).
Patterns are Claude Code's: Glob takes ``**``, ``*``, ``?``, ``[...]`` and ``{a,b}``; Grep a
regular expression (Python's ``re``) with ripgrep's option names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agentrig.builtins.workspace._base import BlockingTool
from agentrig.builtins.workspace._errors import WorkspaceError, WorkspacePathError
from agentrig.builtins.workspace._space import Workspace
from agentrig.host import is_within
from agentrig.tools import PermissionArg

__all__ = ["GlobInput", "GlobTool", "GrepInput", "GrepTool", "glob_regex"]

_SKIP_DIRS = frozenset({".git"})
_SNIFF = 8192


def _braces(pattern: str) -> list[str]:
    """``a{b,c}d`` -> ``abd``, ``acd`` (nested and repeated groups too)."""
    depth, start = 0, -1
    for i, ch in enumerate(pattern):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                inner, parts, level, last = pattern[start + 1 : i], [], 0, 0
                for j, c in enumerate(inner):
                    level += c == "{"
                    level -= c == "}"
                    if c == "," and level == 0:
                        parts.append(inner[last:j])
                        last = j + 1
                parts.append(inner[last:])
                head, tail = pattern[:start], pattern[i + 1 :]
                return [x for part in parts for x in _braces(head + part + tail)]
    return [pattern]


def _segment(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = text.find("]", i + 2)
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = text[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regular expression matching relative paths the glob ``pattern`` names."""
    alternatives = []
    for expanded in _braces(pattern):
        parts = [p for p in expanded.split("/") if p]
        body = ""
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            if part == "**":
                body += ".*" if last else "(?:.*/)?"
            else:
                body += _segment(part) + ("" if last else "/")
        alternatives.append(body)
    return re.compile("(?:" + "|".join(alternatives) + ")\\Z", re.DOTALL)


def _walk(space: Workspace, top: Path) -> Iterator[Path]:
    """Files below ``top`` (never through a symlinked directory, never out of the root)."""
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if path.is_symlink() and not _inside(space, path):
                continue
            yield path


def _inside(space: Workspace, path: Path) -> bool:
    try:
        return is_within(path, space.root)
    except Exception:  # an unanswerable check is not "inside"
        return False


def _search_root(space: Workspace, path: str | None) -> Path:
    return space.resolve(path or str(space.root), what="path")


class GlobInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(description="The glob pattern, e.g. '**/*.py' or 'src/**/*.{ts,tsx}'.")
    path: str | None = Field(
        default=None, description="The directory to search in (default: the workspace root)."
    )


class GlobTool(BlockingTool[GlobInput]):
    name = "Glob"
    summary = (
        "Find files of the workspace by glob pattern ('**/*.py', 'src/**/*.{ts,tsx}'); "
        "the newest first. .git/ is not searched."
    )
    model = GlobInput
    risk = "inspect"
    permission_arg = PermissionArg("path", "path")

    def run(self, input: GlobInput, space: Workspace) -> str:
        top = _search_root(space, input.path)
        if not top.is_dir():
            raise WorkspacePathError(f"path {str(top)!r} is not a directory")
        regex = glob_regex(input.pattern)
        found = [p for p in _walk(space, top) if regex.match(p.relative_to(top).as_posix())]
        found.sort(key=_mtime, reverse=True)
        limit = space.config.files.max_results
        lines = [space.display(p) for p in found[:limit]]
        if not lines:
            return f"No files match {input.pattern!r} in {space.display(top)}"
        if len(found) > limit:
            lines.append(f"[{len(found) - limit} more not shown; narrow the pattern]")
        return "\n".join(lines)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


class GrepInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=False)

    pattern: str = Field(description="The regular expression to search for.")
    path: str | None = Field(
        default=None, description="The file or directory to search (default: the workspace)."
    )
    glob: str | None = Field(default=None, description="Only files matching this glob ('*.py').")
    output_mode: Literal["content", "files_with_matches", "count"] = Field(
        default="files_with_matches",
        description="content: matching lines; files_with_matches: paths; count: per file.",
    )
    case_insensitive: bool = Field(default=False, alias="-i", description="Ignore case.")
    line_numbers: bool = Field(
        default=True, alias="-n", description="Show line numbers (content mode)."
    )
    after: int | None = Field(default=None, ge=0, alias="-A", description="Lines after a match.")
    before: int | None = Field(default=None, ge=0, alias="-B", description="Lines before.")
    context: int | None = Field(default=None, ge=0, alias="-C", description="Lines around.")
    head_limit: int | None = Field(default=None, ge=1, description="Show only the first N.")
    multiline: bool = Field(default=False, description="Let . and patterns span lines.")


class GrepTool(BlockingTool[GrepInput]):
    name = "Grep"
    summary = (
        "Search file contents of the workspace with a regular expression. output_mode "
        "'files_with_matches' (default) lists files, 'content' shows lines (-n, -A/-B/-C), "
        "'count' counts. glob filters files ('*.py'); -i ignores case."
    )
    model = GrepInput
    risk = "inspect"
    permission_arg = PermissionArg("path", "path")

    def run(self, input: GrepInput, space: Workspace) -> str:
        flags = (re.IGNORECASE if input.case_insensitive else 0) | (
            re.MULTILINE | re.DOTALL if input.multiline else re.MULTILINE
        )
        try:
            regex = re.compile(input.pattern, flags)
        except re.error as exc:
            raise WorkspaceError(f"invalid regular expression {input.pattern!r}: {exc}") from None
        top = _search_root(space, input.path)
        files = [top] if top.is_file() else list(_walk(space, top)) if top.is_dir() else []
        if not files:
            raise WorkspacePathError(f"path {str(top)!r} is not a file or directory")
        wanted = input.glob or "**"
        only = glob_regex(wanted if "/" in wanted else f"**/{wanted}")
        limit = min(input.head_limit or space.config.files.max_results, 100_000)
        out: list[str] = []
        for path in files:
            if input.glob and top.is_dir() and not only.match(path.relative_to(top).as_posix()):
                continue
            text = _text_of(path, space.config.files.max_read_bytes * 40)
            if text is None:
                continue
            out += self._report(input, regex, text, space.display(path))
            if len(out) > limit:
                break
        if not out:
            return f"No matches for {input.pattern!r}"
        shown = out[:limit]
        if len(out) > limit:
            shown.append(f"[more results cut at {limit}]")
        return "\n".join(shown)

    def _report(self, input: GrepInput, regex: re.Pattern[str], text: str, name: str) -> list[str]:
        if input.output_mode == "files_with_matches":
            return [name] if regex.search(text) else []
        if input.output_mode == "count":
            found = sum(1 for _ in regex.finditer(text))
            return [f"{name}:{found}"] if found else []
        lines = text.splitlines()
        before = input.before if input.before is not None else input.context or 0
        after = input.after if input.after is not None else input.context or 0
        hits = {text.count("\n", 0, m.start()) for m in regex.finditer(text)}
        shown: set[int] = set()
        for hit in hits:
            shown.update(range(max(0, hit - before), min(len(lines), hit + after + 1)))
        out = []
        for index in sorted(shown):
            sep = ":" if index in hits else "-"
            number = f"{index + 1}{sep}" if input.line_numbers else ""
            out.append(f"{name}:{number}{lines[index] if index < len(lines) else ''}")
        return out


def _text_of(path: Path, limit: int) -> str | None:
    """The file's text, or None for a binary, unreadable or too large file (skipped)."""
    try:
        if path.stat().st_size > limit:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\x00" in data[:_SNIFF]:
        return None
    return data.decode("utf-8", "replace")
