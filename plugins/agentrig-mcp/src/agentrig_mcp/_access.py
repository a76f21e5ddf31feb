"""Which tools an authenticated caller of ``agentrig mcp serve`` may list and call.

``[[mcp.serve.clients]]`` gives a bearer key (a secret reference) a grant: the tool names
(``fnmatch`` patterns) it may use; an empty list grants every tool.  The policy fails
closed: a grant needs a caller it can authenticate, so clients configured while serving
over stdio (no caller to authenticate) are a configuration error, a request whose key has
no grant sees nothing (keys from ``api_keys`` have the whole catalog), and a pattern that
names no served tool is an error rather than a grant of nothing.
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
from collections.abc import Collection, Sequence
from typing import Any

from agentrig.errors import ConfigError, Issue

__all__ = ["AccessPolicy", "bearer_of"]


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


def bearer_of(headers: Any) -> bytes:
    """The bearer key a request presented (empty when none)."""
    value = headers.get("authorization", "") if headers is not None else ""
    if isinstance(value, str) and value[:7].lower() == "bearer ":
        return value[7:].strip().encode("utf-8")
    return b""


class AccessPolicy:
    """Bearer key -> the tool-name patterns it is granted (empty: every tool)."""

    def __init__(
        self, grants: Sequence[tuple[str, Sequence[str]]], open_keys: Sequence[str]
    ) -> None:
        self._grants = [(_digest(k.encode("utf-8")), tuple(p)) for k, p in grants]
        self._grants += [(_digest(k.encode("utf-8")), ()) for k in open_keys]

    def check_names(
        self,
        served: Collection[str],
        where: Sequence[tuple[str | int, ...]],
        *,
        source: str | None = None,
    ) -> None:
        """Refuse a pattern that matches no served tool (a typo would grant nothing)."""
        issues = []
        for (_, patterns), path in zip(self._grants, where, strict=False):
            for i, pattern in enumerate(patterns):
                if not fnmatch.filter(served, pattern):
                    issues.append(
                        Issue(
                            "mcp.grant_unknown_tool",
                            f"{pattern!r} names no served tool "
                            f"(served: {', '.join(sorted(served)) or 'none'})",
                            (*path, "tools", i),
                        )
                    )
        if issues:
            raise ConfigError(issues, source=source)

    def patterns(self, presented: bytes) -> tuple[str, ...] | None:
        """The patterns the presented key is granted; None when no grant holds it."""
        candidate = _digest(presented)
        found: tuple[str, ...] | None = None
        for digest, patterns in self._grants:  # no early exit, like the bearer check
            if hmac.compare_digest(candidate, digest) and presented and found is None:
                found = patterns
        return found

    def permits(self, presented: bytes, tool: str) -> bool:
        """May the caller who presented this key use ``tool``?"""
        patterns = self.patterns(presented)
        if patterns is None:
            return False
        return not patterns or any(fnmatch.fnmatchcase(tool, p) for p in patterns)
