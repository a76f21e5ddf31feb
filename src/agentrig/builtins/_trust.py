"""The files of one composition that widen trust when written: what agentrig itself reads.

Besides the default locations (``DEFAULT_TRUST_WIDENING_PATHS``), a runtime reads files
that only its own config names: the config file itself, the Claude Code settings files and
plugin folders it imports, and the hook scripts its hooks run.  A write to any of them would
change what the next run trusts, so it always asks (bypass included), like the defaults.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.permissions import DEFAULT_TRUST_WIDENING_PATHS, escape_glob

if TYPE_CHECKING:
    from agentrig.kernel import Runtime

__all__ = ["composition_trust_paths"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _words(command: object) -> list[str]:
    if isinstance(command, list):
        return [w for w in command if isinstance(w, str)]
    if isinstance(command, str):
        try:
            return shlex.split(command)
        except ValueError:
            return command.split()
    return []


def _expand(word: str, env: Mapping[str, str]) -> str:
    return _VARIABLE.sub(lambda m: env.get(m.group(1) or m.group(2), m.group(0)), word)


def _hook_files(hooks: Mapping[str, Iterable[Any]], base: Path) -> set[Path]:
    found: set[Path] = set()
    for entries in hooks.values():
        for entry in entries:
            options = entry.options if isinstance(entry.options, Mapping) else {}
            cwd = Path(str(options.get("cwd") or base))
            cwd = cwd if cwd.is_absolute() else base / cwd
            given = options.get("env")
            env: Mapping[str, str] = given if isinstance(given, Mapping) else {}
            for word in _words(options.get("command")):
                path = Path(_expand(word, env)).expanduser()
                path = path if path.is_absolute() else cwd / path
                if ("/" in word or path.suffix) and path.is_file():
                    found.add(path)
    return found


def _pattern(path: Path) -> str:
    """An absolute rule pattern naming exactly ``path`` (and what is inside it)."""
    return "//" + escape_glob(os.path.realpath(path).lstrip("/"))


def composition_trust_paths(rt: Runtime) -> tuple[str, ...]:
    """The default trust-widening patterns plus this composition's own files."""
    base = rt.loaded.base_dir
    files: set[Path] = set()
    if rt.loaded.source is not None:
        files.add(Path(rt.loaded.source).resolve())
    if {"claude_code", "hooks"} & rt.loaded.sections.keys():  # the hooks layer only when used
        from agentrig.hooks import claude_code_config, hooks_config

        claude = claude_code_config(rt.loaded)
        for name in (*claude.settings, *claude.plugins):
            path = Path(name).expanduser()
            files.add(path if path.is_absolute() else base / path)
        files |= _hook_files(hooks_config(rt.loaded), base)
    own = sorted({_pattern(p if p.is_absolute() else base / p) for p in files})
    return (*DEFAULT_TRUST_WIDENING_PATHS, *own)
