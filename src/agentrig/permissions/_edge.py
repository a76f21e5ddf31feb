"""The public path matchers, with the host's canonicalisation as the default port.

The evaluator's own modules (``_match``, ``_risk``, ``_evaluate``) do no filesystem I/O:
they read paths only through a :data:`PathResolver` they are given.  Callers outside the
evaluator (tests, tools, docs samples) usually want the real filesystem, so these wrappers
default the port to the host's ``resolve_path`` -- the project's one canonicalisation, bound
by the core distribution (``agentrig.seams``) -- and otherwise pass through unchanged.
"""

from __future__ import annotations

from agentrig.permissions import _match
from agentrig.permissions._match import Direction
from agentrig.permissions._rules import PermissionRule
from agentrig.permissions._types import MatchOutcome, PathResolver, PermissionCall, default_resolver

__all__ = ["canonical_path", "match_path", "match_rule"]


def canonical_path(
    value: str, *, root: str, home: str, resolve: PathResolver | None = None
) -> str | None:
    """The absolute, symlink-free path a tool argument names, or None when it cannot be told.

    Relative paths are read against ``root`` and ``~``/``~/`` against ``home``; ``~user``
    forms and NUL bytes are refused.  ``resolve`` defaults to the host's symlink walk.
    """
    return _match.canonical_path(value, root=root, home=home, resolve=resolve or default_resolver())


def match_path(
    pattern: str,
    value: str,
    *,
    root: str,
    home: str,
    direction: Direction = "grant",
    settings: str | None = None,
    resolve: PathResolver | None = None,
) -> MatchOutcome:
    """Glob a path ``pattern`` over ``value`` (see ``docs/permissions.md``)."""
    return _match.match_path(
        pattern,
        value,
        root=root,
        home=home,
        direction=direction,
        settings=settings,
        resolve=resolve or default_resolver(),
    )


def match_rule(
    rule: PermissionRule,
    call: PermissionCall,
    *,
    root: str,
    home: str,
    direction: Direction,
    settings: str | None = None,
    resolve: PathResolver | None = None,
) -> MatchOutcome:
    """Whether ``rule`` covers ``call``; ``root`` must already be canonical."""
    return _match.match_rule(
        rule,
        call,
        root=root,
        home=home,
        direction=direction,
        settings=settings,
        resolve=resolve or default_resolver(),
    )
