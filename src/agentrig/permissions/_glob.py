"""The glob syntax of path rules, read the way ``.gitignore`` reads it, and nothing looser.

A path rule is matched segment by segment (``/`` separates segments):

* ``*`` is any run of characters inside one segment (``**`` next to other characters too);
* ``**`` standing alone as a segment is any number of segments, none included;
* ``?`` is one character other than ``/``;
* ``[abc]``, ``[a-z]``, ``[!a-z]`` / ``[^a-z]`` is one character from (or not from) a set;
  ``]`` right after the opening ``[`` (or ``[!``) is a member;
* ``\\`` makes the next character literal (``\\*``, ``\\[``, ``\\\\``, ``\\ ``).

What ``.gitignore`` gives a meaning this syntax does not support is a syntax error, never a
literal that silently matches less: a leading ``!`` (negation) or ``#`` (comment), an
unterminated ``[``, a POSIX class ``[[:alpha:]]``, a reversed range, ``/`` inside a class,
a trailing unescaped space (gitignore drops it), a lone trailing ``\\``, ``\\/``; and an
opening brace, which shells expand (``*.{pem,key}``) but gitignore does not.

Parsing is pure and cached; turning the segments into a regular expression anchored at a
directory happens in ``_match``.
"""

from __future__ import annotations

import functools
import re
from typing import Literal

import attrs

__all__ = [
    "Anchor",
    "GlobSyntaxError",
    "PathGlob",
    "Segment",
    "escape_glob",
    "parse_path_pattern",
]

_POSIX_CLASS = re.compile(r"\[:[a-z]*:\]")
_SPECIAL = frozenset("\\*?[]{}!# ")


def escape_glob(path: str) -> str:
    """``path`` as a pattern that names exactly it: every character the glob syntax reads
    specially (``* ? [ ] { } \\ ! #`` and spaces) is escaped, ``/`` is kept as the separator.

    For building a rule from a path that is not a pattern (a project directory spelled into
    an imported rule): ``/srv/a[1]`` would otherwise be a character class that names
    ``/srv/a1`` and not the directory itself.
    """
    return "".join("\\" + ch if ch in _SPECIAL else ch for ch in path)


class GlobSyntaxError(ValueError):
    """A path pattern that this syntax does not read; the message says what and where."""


@attrs.frozen(slots=True)
class Segment:
    """One ``/``-separated part of a pattern.

    ``kind`` is ``literal`` (``text`` holds the unescaped name), ``globstar`` (``**`` alone)
    or ``glob``: ``regex`` matches one name exactly as git would, ``restrict_regex`` is the
    wider reading deny and ask rules use (a negated class may also match ``/``).
    """

    kind: Literal["literal", "glob", "globstar"]
    text: str = ""
    regex: str = ""
    restrict_regex: str = ""


def _class(pattern: str, start: int) -> tuple[str, str, int]:
    """Read the class opening at ``pattern[start] == "["``: (exact regex, loose regex, end)."""
    i = start + 1
    negated = i < len(pattern) and pattern[i] in "!^"
    if negated:
        i += 1
    members: list[str] = []
    first = True
    while True:
        if i >= len(pattern):
            raise GlobSyntaxError(
                f"'[' at position {start + 1} opens a character class that is never closed "
                "within its segment (a class cannot hold '/'; write '\\[' for a literal "
                "bracket)"
            )
        if pattern[i] == "]" and not first:
            break
        member, i = _class_member(pattern, i)
        members.append(member)
        first = False
    body = "".join(members)
    if negated:
        # exact: like git, never '/'.  loose (deny/ask, compared case-insensitively): any
        # other character, '/' included in case another reader lets a negated class span a
        # separator, and case-sensitive, or "[!a]" would stop matching "A"
        return f"[^/{body}]", f"(?-i:[^{body}])", i + 1
    return f"[{body}]", f"[{body}]", i + 1


_SLASH_IN_CLASS = "a character class cannot hold '/': a class matches one character of a name"


def _class_member(pattern: str, i: int) -> tuple[str, int]:
    """The regex of the class member (a character or a range) at ``i``, and where it ends."""
    ch = pattern[i]
    posix = _POSIX_CLASS.match(pattern, i) if ch == "[" else None
    if posix is not None:
        raise GlobSyntaxError(
            f"POSIX character classes such as {posix.group()!r} are not supported; "
            "write the range itself, e.g. [a-z]"
        )
    if ch == "\\":
        if i + 1 >= len(pattern):
            raise GlobSyntaxError("the pattern ends with a lone '\\'")
        i += 1
        ch = pattern[i]
    if ch == "/":
        raise GlobSyntaxError(_SLASH_IN_CLASS)
    if not (i + 2 < len(pattern) and pattern[i + 1] == "-" and pattern[i + 2] != "]"):
        return re.escape(ch), i + 1
    high_at = i + 2
    high = pattern[high_at]
    if high == "\\" and high_at + 1 < len(pattern):
        high_at += 1
        high = pattern[high_at]
    if high == "/":
        raise GlobSyntaxError(_SLASH_IN_CLASS)
    if ord(high) < ord(ch):
        raise GlobSyntaxError(f"the range '{ch}-{high}' is reversed")
    if ord(ch) <= ord("/") <= ord(high):
        raise GlobSyntaxError(
            f"the range '{ch}-{high}' includes '/': a class matches one character of a name"
        )
    return f"{re.escape(ch)}-{re.escape(high)}", high_at + 1


def _segment(text: str, offset: int) -> Segment:
    if text == "**":
        return Segment("globstar")
    exact: list[str] = []
    loose: list[str] = []
    literal: list[str] = []
    is_literal = True
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            if i + 1 >= len(text):
                raise GlobSyntaxError("the pattern ends with a lone '\\'")
            if text[i + 1] == "/":
                raise GlobSyntaxError("'\\/' cannot escape a separator: '/' always separates")
            literal.append(text[i + 1])
            exact.append(re.escape(text[i + 1]))
            loose.append(exact[-1])
            i += 2
            continue
        if ch == "*":
            while i < len(text) and text[i] == "*":
                i += 1  # "a**b" is "a*b", as in gitignore
            is_literal = False
            exact.append("[^/]*")
            loose.append("[^/]*")
            continue
        if ch == "?":
            is_literal = False
            exact.append("[^/]")
            loose.append("[^/]")
        elif ch == "[":
            is_literal = False
            strict, wide, end = _class(text, i)
            exact.append(strict)
            loose.append(wide)
            i = end
            continue
        elif ch == "{":
            raise GlobSyntaxError(
                f"'{{' at position {offset + i + 1}: braces are not glob syntax in path "
                "rules (no {a,b} alternatives); write one rule per alternative, or '\\{' "
                "for a literal brace"
            )
        else:
            literal.append(ch)
            exact.append(re.escape(ch))
            loose.append(exact[-1])
        i += 1
    if is_literal:
        return Segment("literal", text="".join(literal))
    return Segment("glob", regex="".join(exact), restrict_regex="".join(loose))


def _segments(rest: str) -> tuple[Segment, ...]:
    if rest.endswith("\\") and (len(rest) - len(rest.rstrip("\\"))) % 2 == 1:
        raise GlobSyntaxError("the pattern ends with a lone '\\'")
    stripped = rest.rstrip(" ")
    if stripped != rest and not (
        stripped.endswith("\\") and (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 1
    ):
        raise GlobSyntaxError(
            "the pattern ends with a space, which gitignore-style rules drop; remove it, or "
            "write '\\ ' if the name really ends with a space"
        )
    segments: list[Segment] = []
    offset = 0
    for text in _split(rest):
        if text not in ("", "."):
            segments.append(_segment(text, offset))
        offset += len(text) + 1
    return tuple(segments)


def _split(rest: str) -> list[str]:
    # split at '/' that is not escaped (a '\/' stays inside its segment and fails there)
    parts: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(rest):
        ch = rest[i]
        if ch == "\\" and i + 1 < len(rest):
            current.append(rest[i : i + 2])
            i += 2
            continue
        if ch == "/":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


Anchor = Literal["root", "home", "settings", "cwd"]
"""Where a path pattern starts (Claude Code's four pattern types): ``//x`` the filesystem
root, ``~/x`` the home directory, ``/x`` the directory of the settings the rule came from,
``./x`` or a bare ``x`` the current (workspace) directory."""


@attrs.frozen(slots=True)
class PathGlob:
    """A parsed path pattern: where it is anchored and its segments below that anchor."""

    anchor: Anchor
    segments: tuple[Segment, ...]
    anywhere_when_restricting: bool = False
    """``name/**`` (a bare pattern with one directory segment): a deny or ask rule matches
    that directory at any depth below the current directory, an allow rule only at the top
    (Claude Code's documented reading)."""


@functools.lru_cache(maxsize=1024)  # rule patterns are few and immutable
def parse_path_pattern(pattern: str) -> PathGlob:
    """Parse a path rule's pattern, or raise :class:`GlobSyntaxError` naming the problem.

    As Claude Code reads ``Read``/``Edit`` rules: ``//x`` is absolute, ``~`` and ``~/x`` are
    under the home directory, ``/x`` is relative to the settings source (the directory of
    the config file that holds the rule), ``./x`` and bare ``x/y`` are relative to the
    current directory.  A bare pattern with no ``/`` except a trailing one (``.env``,
    ``*.env``, ``build/``) matches at any depth below the current directory, as in
    ``.gitignore``; ``./.env`` only at its top.
    """
    if pattern.startswith("!"):
        raise GlobSyntaxError(
            "a leading '!' negates a gitignore pattern, which a permission rule cannot do; "
            "write '\\!' for a name that starts with '!'"
        )
    if pattern.startswith("#"):
        raise GlobSyntaxError(
            "a leading '#' makes a gitignore line a comment; write '\\#' for a name that "
            "starts with '#'"
        )
    anchor: Anchor
    if pattern.startswith("//"):
        anchor, rest = "root", pattern.lstrip("/")
    elif pattern.startswith("/"):
        anchor, rest = "settings", pattern[1:]
    elif pattern == "~" or pattern.startswith("~/"):
        anchor, rest = "home", pattern[2:]
    elif pattern.startswith("~"):
        raise GlobSyntaxError("'~user' paths are not supported; write the absolute path")
    elif pattern.startswith("./"):
        return PathGlob("cwd", _segments(pattern[2:]))
    else:
        anchor, rest = "cwd", pattern
    segments = _segments(rest)
    if anchor == "cwd":
        if "/" not in rest.rstrip("/"):
            segments = (Segment("globstar"), *segments)  # a bare name, as in .gitignore
        elif [seg.kind == "globstar" for seg in segments] == [False, True]:
            return PathGlob(anchor, segments, anywhere_when_restricting=True)
    return PathGlob(anchor, segments)
