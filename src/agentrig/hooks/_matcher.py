"""Hook matchers, read as Claude Code reads them.

* ``None``, ``""`` or ``"*"`` match everything;
* a matcher made only of letters, digits, ``_`` and ``|`` is an exact name or a
  ``|``-separated list of exact names (``"Bash"`` does not match ``"BashOutput"``);
* anything else is a regular expression searched in the subject (``"mcp__.*"``,
  ``"^Notebook"``, ``"Edit$"``), case-sensitive.

The subject is the tool name for tool events, the ``source`` for ``SessionStart``, the
``reason`` for ``SessionEnd``, the ``notification_type`` for ``Notification`` and the
``trigger`` for ``PreCompact`` and ``PostCompact``; other events ignore the matcher (their
hooks always run).
"""

from __future__ import annotations

import re

import attrs

from agentrig.hooks._events import HookEvent

__all__ = ["Matcher", "compile_matcher", "matcher_problem", "matcher_subject"]

_PLAIN = re.compile(r"[A-Za-z0-9_|]+")
_TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"})
_SUBJECT_KEYS = {
    "SessionStart": "source",
    "SessionEnd": "reason",
    "Notification": "notification_type",
    "PreCompact": "trigger",
    "PostCompact": "trigger",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
}


@attrs.frozen(slots=True)
class Matcher:
    """A compiled matcher (see the module docs)."""

    text: str | None
    names: frozenset[str] | None = None  # exact names, when the matcher is plain
    pattern: re.Pattern[str] | None = None  # the regex, otherwise; both None: match all

    def matches(self, subject: str | None) -> bool:
        if self.names is None and self.pattern is None:
            return True
        if subject is None:  # an event that has no subject is not filtered by a matcher
            return True
        if self.names is not None:
            return subject in self.names
        assert self.pattern is not None
        return self.pattern.search(subject) is not None


def matcher_problem(event: str, text: str | None) -> str | None:
    """Why ``text`` cannot filter hooks of ``event`` (None: it can, or it matches everything).

    An event with no matcher subject (``UserPromptSubmit``, ``Stop``) runs every hook, so a
    matcher there would be accepted and ignored; it is refused instead.
    """
    if text is None or text.strip() in ("", "*"):
        return None
    if event in _TOOL_EVENTS or event in _SUBJECT_KEYS:
        return None
    filtered = ", ".join(sorted(_TOOL_EVENTS | _SUBJECT_KEYS.keys()))
    return (
        f"{event} hooks have nothing to match (every one runs), so matcher {text!r} would be "
        f"ignored; remove it (matchers filter {filtered})"
    )


def compile_matcher(text: str | None) -> Matcher:
    """Compile a matcher; an invalid regular expression raises :class:`ValueError`."""
    if text is None or text.strip() in ("", "*"):
        return Matcher(text)
    if _PLAIN.fullmatch(text):
        return Matcher(text, names=frozenset(n for n in text.split("|") if n))
    try:
        return Matcher(text, pattern=re.compile(text))
    except re.error as exc:
        raise ValueError(f"invalid matcher {text!r}: {exc}") from exc


def matcher_subject(event: HookEvent) -> str | None:
    """What a matcher is tested against for ``event`` (``None``: the matcher is ignored)."""
    if event.name in _TOOL_EVENTS:
        return event.tool_name or ""
    key = _SUBJECT_KEYS.get(event.name)
    if key is None:
        return None
    value = event.payload.get(key)
    return value if isinstance(value, str) else ""
