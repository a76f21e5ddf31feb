"""Match a rule's pattern against a call's argument, read in the argument's declared kind.

One glob syntax cannot serve every kind: a wildcard over a whole URL string also spans its
scheme and host, and a substring over a command line says nothing about what runs.  So each
kind has its own reading (paths, URLs, commands, text) and every reading answers with three
values: ``match``, ``no-match`` or ``unevaluable`` (the pattern or the argument cannot be
judged in that kind).

Every matcher takes a *direction*.  ``restrict`` is how deny and ask rules read a call: every
ambiguity is resolved toward a match (paths compare case-insensitively, a URL pattern
without a port covers every port, ``sudo git push`` is also ``git push``).  ``grant`` is how
allow rules, ceilings and remembered consent read it: ambiguity never grants (exact case,
default port only, the command exactly as written).

No I/O here: every path is canonicalised through the context's ``PathResolver`` port (the
host's symlink walk by default), so a symlink cannot carry a call around a rule and the
matchers stay a pure function of their arguments and the port's answers.
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
from fnmatch import fnmatchcase
from typing import Literal

from agentrig.permissions._glob import GlobSyntaxError, Segment, parse_path_pattern
from agentrig.permissions._rules import MATCH_ALL_SPECIFIERS, PermissionRule
from agentrig.permissions._shell import Candidate, CommandSegment, ParsedCommand, split_command
from agentrig.permissions._types import MatchOutcome, PathResolver, PermissionCall
from agentrig.permissions._urls import match_url
from agentrig.permissions._wrappers import INERT_PROGRAMS, WRAPPERS

__all__ = [
    "Direction",
    "canonical_path",
    "match_command",
    "match_path",
    "match_rule",
    "match_text",
    "match_url",
]

Direction = Literal["restrict", "grant"]
_Tri = Literal["yes", "no", "maybe"]
_EXPANDING = frozenset("$`{~")
_GLOBBING = frozenset("*?[")


def match_rule(
    rule: PermissionRule,
    call: PermissionCall,
    *,
    root: str,
    home: str,
    direction: Direction,
    resolve: PathResolver,
    settings: str | None = None,
) -> MatchOutcome:
    """Whether ``rule`` covers ``call``; ``root`` must already be canonical.

    ``settings`` is the directory a ``/path`` pattern is relative to (the rule's config
    file's directory); ``None`` means ``root``.
    """
    loose = direction == "restrict"
    names = (call.tool_id, *sorted(call.tool.rule_names))
    if not any(rule.names_tool(name, loose=loose) for name in names):
        return "no-match"
    if rule.matches_every_call:
        return "match"
    assert rule.specifier is not None
    parameter = rule.parameter(call.tool)
    if parameter is not None:
        return _match_parameter(parameter, call, direction)
    arg = call.tool.arg
    if arg is None or arg.key not in call.arguments:
        return "unevaluable"
    value = call.arguments[arg.key]
    if arg.kind == "command":
        return match_command(rule.specifier, value, direction=direction)
    values = _string_values(value)
    if values is None:
        return "unevaluable"
    specifier = rule.specifier
    outcomes: list[MatchOutcome]
    if arg.kind == "path":
        outcomes = [
            match_path(
                specifier,
                v,
                root=root,
                home=home,
                direction=direction,
                resolve=resolve,
                settings=settings,
            )
            for v in values
        ]
    elif arg.kind == "url":
        outcomes = [match_url(specifier, v, direction=direction) for v in values]
    else:
        outcomes = [match_text(specifier, v, direction=direction) for v in values]
    return _combine(outcomes, direction)


def _match_parameter(
    parameter: tuple[str, str], call: PermissionCall, direction: Direction
) -> MatchOutcome:
    """A rule on a named argument (``Tool(name:pattern)``), matched as text."""
    name, pattern = parameter
    if direction == "grant":
        return "no-match"  # parameter rules never grant (see _rules)
    arg = call.tool.arg
    if arg is not None and name == arg.key:
        return "unevaluable"  # read by kind, not as text: ask rather than guess
    if name not in call.arguments:
        return "no-match"
    text = _scalar_text(call.arguments[name])
    return "unevaluable" if text is None else match_text(pattern, text, direction=direction)


def _combine(outcomes: list[MatchOutcome], direction: Direction) -> MatchOutcome:
    # a restricting rule hits when any value hits; a grant needs every value granted
    if not outcomes:
        return "unevaluable"
    if direction == "restrict":
        if "match" in outcomes:
            return "match"
        return "unevaluable" if "unevaluable" in outcomes else "no-match"
    if all(o == "match" for o in outcomes):
        return "match"
    return "unevaluable" if "unevaluable" in outcomes else "no-match"


def _string_values(value: object) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return [str(v) for v in value]
    return None


def _scalar_text(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


# --- text ------------------------------------------------------------------------------


def match_text(pattern: str, value: str, *, direction: Direction = "grant") -> MatchOutcome:
    """Glob over the whole text: ``*`` is any run of characters, ``?`` any one character."""
    if pattern in MATCH_ALL_SPECIFIERS:
        return "match"
    flags = re.DOTALL | (re.IGNORECASE if direction == "restrict" else 0)
    regex = "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)
    return "match" if re.fullmatch(regex, value, flags) else "no-match"


# --- paths -----------------------------------------------------------------------------


def canonical_path(value: str, *, root: str, home: str, resolve: PathResolver) -> str | None:
    """The absolute, symlink-free path a tool argument names, or None when it cannot be told.

    Relative paths are read against the workspace root and ``~``/``~/`` against ``home``;
    ``~user`` forms and NUL bytes are refused.  ``resolve`` follows the symlinks.
    """
    if "\x00" in value or not value:
        return None
    if value == "~" or value.startswith("~/"):
        value = home + value[1:]
    elif value.startswith("~"):
        return None
    # The project's one canonicalisation, through the port (agentrig.host's by default):
    # symlinks resolved component by component; a loop or an unreadable component means
    # "cannot be told" (None), never a guess.
    if not posixpath.isabs(value) and not posixpath.isabs(root):
        return None  # a relative path needs an absolute root; the cwd is never guessed
    return resolve(posixpath.join(root, value))


def _pattern_regex(
    pattern: str,
    *,
    home: str,
    root: str,
    settings: str,
    loose: bool,
    resolve: PathResolver | None,
) -> re.Pattern[str] | None:
    # resolve=None reads the pattern as written: ``..`` folded by text, no symlink followed
    try:
        glob = parse_path_pattern(pattern)
    except GlobSyntaxError:
        return None  # refused at parse time when the tools are known; never a guess here
    segments = list(glob.segments)
    if loose and glob.anywhere_when_restricting:
        segments.insert(0, Segment("globstar"))
    literal: list[str] = []
    while segments and segments[0].kind == "literal":
        literal.append(segments.pop(0).text)
    if any(s.kind == "literal" and s.text == ".." for s in segments):
        return None
    base = {"root": "/", "home": home, "settings": settings, "cwd": root}[glob.anchor]
    joined = posixpath.join(base, *literal)
    resolved = posixpath.normpath(joined) if resolve is None else resolve(joined)
    if resolved is None:
        return None
    prefix = resolved
    parts = [re.escape("/" + p) for p in prefix.split("/") if p]
    for segment in segments:
        if segment.kind == "globstar":
            parts.append("(?:/[^/]+)*")
        elif segment.kind == "literal":
            parts.append(re.escape("/" + segment.text))
        else:
            parts.append("/" + (segment.restrict_regex if loose else segment.regex))
    # what a pattern names, it names with everything inside (gitignore: an ignored
    # directory's files are ignored): "secrets" and "secrets/*" both cover secrets/a/key.pem
    parts.append("(?:/.*)?")
    return re.compile("".join(parts), (re.IGNORECASE if loose else 0) | re.DOTALL)


def match_path(
    pattern: str,
    value: str,
    *,
    root: str,
    home: str,
    resolve: PathResolver,
    direction: Direction = "grant",
    settings: str | None = None,
) -> MatchOutcome:
    """Glob ``pattern`` (gitignore-style, see ``_glob``) over the canonical path.

    Claude Code's four anchors: ``//abs`` is absolute, ``~/x`` is under the home directory,
    ``/x`` is under ``settings`` (the rule's config directory; ``root`` when ``None``),
    ``./x`` and ``x/y`` are under the workspace root ``root``.  A bare name (``*.env``)
    matches at any depth below ``root``; ``name/**`` too in a deny or ask rule.  Whatever
    the pattern matches, it matches with everything below.  A pattern this syntax does not
    read is ``unevaluable``.  Restricting rules also match the path as written, before
    symlinks are followed.
    """
    if pattern in MATCH_ALL_SPECIFIERS:
        return "match"
    restrict = direction == "restrict"
    anchored = root if settings is None else settings
    regex = _pattern_regex(
        pattern, root=root, home=home, settings=anchored, loose=restrict, resolve=resolve
    )
    path = canonical_path(value, root=root, home=home, resolve=resolve)
    if regex is None or path is None:
        return "unevaluable"
    if regex.fullmatch("" if path == "/" else path):
        return "match"
    if restrict:
        # A glob cannot be resolved like a path: "src/*/key.pem" must also deny
        # "src/link/key.pem" when src/link points elsewhere.  So a restricting rule also
        # reads the path as written (symlinks not followed) against the pattern as written.
        written = _written_path(value, root=root, home=home)
        literal = _pattern_regex(
            pattern, root=root, home=home, settings=anchored, loose=True, resolve=None
        )
        for compiled in (regex, literal):
            if compiled is not None and compiled.fullmatch("" if written == "/" else written):
                return "match"
        if literal is not None and literal.fullmatch("" if path == "/" else path):
            return "match"
    return "no-match"


def _written_path(value: str, *, root: str, home: str) -> str:
    """The absolute path as written: ``..`` folded by text, symlinks not followed."""
    if value == "~" or value.startswith("~/"):
        value = home + value[1:]
    return posixpath.normpath(posixpath.join(root, value))


# --- commands --------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)  # rule patterns are few and immutable
def _command_pattern(pattern: str) -> tuple[tuple[str, ...], bool] | None:
    prefix = False
    body = pattern.strip()
    if body.endswith(":*"):
        prefix, body = True, body[:-2]
    try:
        tokens = tuple(shlex.split(body))
    except ValueError:
        return None
    if any(t and all(ch in "();<>|&" for ch in t) for t in tokens):
        return None  # a compound pattern cannot be compared segment by segment
    if tokens and tokens[-1] == "*":
        prefix, tokens = True, tokens[:-1]
    if not tokens and not prefix:
        return None
    return tokens, prefix


def _token(pattern: str, word: str, restrict: bool) -> _Tri:
    if pattern == word or ("*" in pattern and fnmatchcase(word, pattern)):
        return "yes"
    if restrict:
        if any(ch in _EXPANDING for ch in word):
            return "maybe"
        if any(ch in _GLOBBING for ch in word) and ("*" in pattern or fnmatchcase(pattern, word)):
            return "maybe"
    return "no"


def _sequence(pattern: tuple[str, ...], candidate: Candidate, prefix: bool, restrict: bool) -> _Tri:
    argv = candidate.argv

    def walk(i: int, j: int) -> _Tri:
        if i == len(pattern):
            return "yes" if prefix or j == len(argv) else "no"
        if pattern[i] == "*":
            found = [walk(i + 1, k) for k in range(j, len(argv) + 1)]
            return "yes" if "yes" in found else "maybe" if "maybe" in found else "no"
        if j == len(argv):
            return "maybe" if candidate.open_ended and restrict else "no"
        head = _token(pattern[i], argv[j], restrict)
        if head == "no":
            return "no"
        tail = walk(i + 1, j + 1)
        return tail if head == "yes" else ("maybe" if tail != "no" else "no")

    return walk(0, 0)


_LONG_TO_SHORT: dict[str, dict[str, str]] = {
    "rm": {"--recursive": "r", "--force": "f", "--dir": "d"},
}


_SHORT_ALIASES: dict[str, dict[str, str]] = {"rm": {"R": "r"}, "cp": {"R": "r"}}


def _option_set(command: str, options: list[str]) -> frozenset[str]:
    out: set[str] = set()
    aliases = _LONG_TO_SHORT.get(command, {})
    letters = _SHORT_ALIASES.get(command, {})
    for option in options:
        if option.startswith("--"):
            name = option.split("=", 1)[0]
            out.add(aliases.get(name, name))
        else:
            out.update(letters.get(ch, ch) for ch in option[1:])
    return frozenset(out)


def loose_prefix(pattern: tuple[str, ...], argv: tuple[str, ...]) -> bool:
    """Prefix match that ignores where options stand and how short flags are spelled.

    ``rm -rf`` covers ``rm -fr x``, ``rm -r -f x`` and ``rm --recursive --force x``;
    ``git reset --hard`` covers ``git reset HEAD --hard``.  Words (non-options) must still
    start the argv in order.  Only restricting reads use it: it can only widen a match.
    """
    words = [t for t in pattern if not t.startswith("-")]
    if not words or not argv:
        return False
    seen = [w for w in argv if not w.startswith("-") or w == "-"]
    if seen[: len(words)] != words:
        return False
    wanted = _option_set(words[0], [t for t in pattern if t.startswith("-") and t != "-"])
    have = _option_set(argv[0], [w for w in argv if w.startswith("-") and w != "-"])
    return wanted <= have


_WORD_PARTS = re.compile(r"[\s=,:;'\"`()|&<>]+")


def _carries(argv: tuple[str, ...], program: str) -> bool:
    """Whether ``argv`` is a program that may run ``program``, named among its arguments.

    Known wrappers are unwrapped by the splitter and inert programs run nothing; any other
    program may be a wrapper nobody taught us (``mytool --run=git push``).
    """
    name = posixpath.basename(argv[0]).casefold()
    if name in INERT_PROGRAMS or name in WRAPPERS:
        return False
    for word in argv[1:]:
        for part in _WORD_PARTS.split(word):
            if part and posixpath.basename(part).casefold() == program:
                return True
    return False


def _carries_input(candidate: Candidate, segment: CommandSegment, program: str) -> bool:
    """Whether text handed to the program on standard input (a here-string) names
    ``program``, for a program that may run what it reads (``mytool <<< 'git push'``)."""
    if not segment.redirects:
        return False  # the common case: nothing is handed over on standard input
    fed = [target for op, target in segment.redirects if op == "<<<"]
    return bool(fed) and _carries((candidate.argv[0], *fed), program)


def match_command(
    pattern: str,
    value: object,
    *,
    direction: Direction = "grant",
    parsed: ParsedCommand | None = None,
) -> MatchOutcome:
    """Match a command pattern (``git push:*``, ``git push *`` or exact) segment by segment.

    Restricting: a hit in any segment (or any unwrapped form of it) matches; otherwise a
    reading that is not conclusive -- or a program that is not known to be inert carrying
    the rule's program among its arguments (``mytool git push``) -- is ``unevaluable``.
    Granting: the reading must be conclusive and every segment, exactly as written and
    without leading assignments, must match.
    """
    if pattern.strip() in MATCH_ALL_SPECIFIERS:
        return "match"
    if parsed is None:
        if isinstance(value, str):
            parsed = split_command(value)
        elif isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
            parsed = split_command([str(v) for v in value])
        else:
            return "unevaluable"
    compiled = _command_pattern(pattern)
    if compiled is None:
        return "unevaluable"
    tokens, prefix = compiled
    if direction == "restrict":
        seen_maybe = False
        # the program the rule names, when it is literal: met among the arguments of a
        # program that may run it, the call cannot be cleared (it asks, never allows)
        program = tokens[0].casefold() if tokens and not _GLOBBING & set(tokens[0]) else None
        for segment in parsed.segments:
            for candidate in segment.candidates:
                hit = _sequence(tokens, candidate, prefix, restrict=True)
                if hit == "yes" or (
                    prefix and "*" not in "".join(tokens) and loose_prefix(tokens, candidate.argv)
                ):
                    return "match"
                seen_maybe = (
                    seen_maybe
                    or hit == "maybe"
                    or (program is not None and _carries(candidate.argv, program))
                    or (program is not None and _carries_input(candidate, segment, program))
                )
        return "unevaluable" if seen_maybe or not parsed.conclusive else "no-match"
    if not parsed.conclusive:
        return "unevaluable"
    ran = [s for s in parsed.segments if s.argv or s.assignments]
    if not ran:
        return "no-match"
    for segment in ran:
        if segment.assignments or not segment.argv:
            return "no-match"
        if _sequence(tokens, Candidate(segment.argv), prefix, restrict=False) != "yes":
            return "no-match"
    return "match"
