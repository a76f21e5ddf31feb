"""Git stays inspection-only: no git command while the repository config defines filters.

A filter driver (``[filter "x"] clean = ...``, ``smudge``, ``process``) is a program Git runs
on file contents during ``status``, ``diff``, ``checkout`` and more -- whoever can write the
repository config can make an innocent-looking ``git diff`` run anything.  So before a
command that may run Git, the repository's config files are read (never executed): a
filter section, or an ``include`` that could bring one from elsewhere, refuses the command.
"""

from __future__ import annotations

import re
from pathlib import Path

from agentrig.builtins.workspace._errors import GitProtectedError
from agentrig.permissions import split_command

__all__ = ["may_run_git", "refuse_git_with_filters", "repository_filters"]

_SECTION = re.compile(r"^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+\"((?:[^\"\\]|\\.)*)\")?\s*\]", re.M)
_GIT_WORD = re.compile(r"(?<![\w.-])git(?![\w.])", re.I)


def _git_dir(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        marker = folder / ".git"
        if marker.is_dir():
            return marker
        if marker.is_file():  # a worktree or submodule: "gitdir: <path>"
            text = marker.read_text(encoding="utf-8", errors="replace").strip()
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                return target if target.is_absolute() else (folder / target).resolve()
    return None


def _config_files(git_dir: Path) -> list[Path]:
    files = [git_dir / "config", git_dir / "config.worktree"]
    common = git_dir / "commondir"
    if common.is_file():
        shared = Path(common.read_text(encoding="utf-8", errors="replace").strip())
        shared = shared if shared.is_absolute() else (git_dir / shared).resolve()
        files += [shared / "config", shared / "config.worktree"]
    return [f for f in files if f.is_file()]


def repository_filters(start: Path) -> list[str]:
    """Why the repository around ``start`` may run a filter: its filter sections and includes."""
    git_dir = _git_dir(start)
    if git_dir is None:
        return []
    found: list[str] = []
    for path in _config_files(git_dir):
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in _SECTION.finditer(text):
            section = match.group(1).lower()
            name = match.group(2)
            if section == "filter" or section.startswith("filter."):
                label = name if name is not None else section.partition(".")[2]
                found.append(f"filter driver {label!r} in {path}")
            elif section in ("include", "includeif") or section.startswith("includeif."):
                found.append(f"an include ({section}) in {path}, which may define filters")
    return found


def may_run_git(command: str) -> bool:
    """Whether ``command`` may run Git: a segment running ``git``, or an opaque reading that
    mentions it (``eval``, substitutions, ``sh -c`` the splitter cannot see into)."""
    parsed = split_command(command)
    for segment in parsed.segments:
        for candidate in segment.candidates:
            program = candidate.argv[0].rsplit("/", 1)[-1] if candidate.argv else ""
            if program == "git" or program.startswith("git-"):
                return True
    return not parsed.conclusive and bool(_GIT_WORD.search(command))


def refuse_git_with_filters(command: str, cwd: Path) -> None:
    """Raise :class:`GitProtectedError` when ``command`` may run Git under filter drivers."""
    if not may_run_git(command):
        return
    reasons = repository_filters(cwd)
    if reasons:
        raise GitProtectedError(
            "refused to run a git command: the repository config defines "
            + "; ".join(reasons)
            + " -- Git stays inspection-only, and a filter runs a program on every file it "
            "touches; remove the filter from the repository config to use git here"
        )
