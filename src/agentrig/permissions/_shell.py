"""Split a shell command into the simple commands it may run.

Command rules and action blockers both need to know which commands a shell string runs.  A
real shell grammar is out of reach for a permission check, so this splitter aims at one
property instead: whatever it cannot read with confidence, it says so.  The permission
matcher turns "cannot read" into an ask for deny and ask rules and into "no grant" for allow
rules; the action blocker turns it into a block.

How a string is read:

* line continuations are joined, and newlines separate commands like ``;``;
* command substitutions (``$(...)``, backticks, ``$((...))``) and process substitutions
  (``<(...)``, ``>(...)``) are cut out and parsed as commands of their own, even inside
  single quotes (reading too much is safe, reading too little is not); in the outer command
  they leave a ``$``-word, which is opaque wherever it stands as the command name;
* the rest is tokenised by :mod:`shlex` (POSIX mode, ``punctuation_chars``, no comments,
  so quotes and backslashes are removed the way the shell removes them);
* segments split at ``&&``, ``||``, ``;``, ``|``, ``&``, ``|&``, ``;;`` and parentheses;
  redirections and their targets are set aside; leading ``NAME=value`` words are assignments;
  the reserved words ``{ } ! if then else elif fi do done while until`` are skipped;
* wrappers (``sudo``, ``doas``, ``env``, ``timeout``, ``nice``, ``nohup``, ``command``,
  ``builtin``, ``exec``, ``time``, ``xargs``, ``stdbuf``, ``setsid``, ``busybox``) are
  unwrapped when their options are known, ``git``'s global options are stripped, ``find
  -exec`` exposes its command, ``eval`` and ``sh/bash/... -c`` have their program parsed;
* a segment is *opaque* when its command cannot be known from the text: a command name that
  is expanded at run time (``$x``, globs, braces), an unknown wrapper option, a shell
  reading its program from standard input, inline interpreter code (``python -c``,
  ``node -e``, ``awk`` with ``system``), remote or deferred runners (``ssh``, ``su``,
  ``watch``, ``trap``, ``alias``...), ``for``/``case``/``function`` and friends.

Known limits (documented in ``docs/permissions.md``): programs stored in files (a script, a
Makefile, an npm script, a git alias from configuration) are not read.
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
from collections.abc import Sequence

import attrs

from agentrig.permissions._programs import side_channel
from agentrig.permissions._wrappers import (
    ASSIGNMENT,
    WRAPPERS,
    find_exec,
    git_global_options,
    shell_program,
)

__all__ = ["Candidate", "CommandSegment", "ParsedCommand", "split_command"]

_MAX_DEPTH = 6

_OPERATORS = (
    "&>>",
    "<<<",
    "&&",
    "||",
    ";;",
    ";&",
    "|&",
    ">>",
    "<<",
    ">&",
    "<&",
    "&>",
    "<>",
    ">|",
    ";",
    "&",
    "|",
    "(",
    ")",
    "<",
    ">",
)
# redirections that give a command's standard input something to read
_INPUT_REDIRECTS = frozenset({"<", "<<", "<<<", "<&", "<>"})
_SEPARATORS = frozenset({"&&", "||", ";;", ";&", "|&", ";", "&", "|", "(", ")"})
_PUNCTUATION = frozenset("();<>|&")
_SKIPPED_WORDS = frozenset({"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done"})
_SKIPPED_WORDS |= frozenset({"while", "until"})
_OPAQUE_KEYWORDS = frozenset({"for", "case", "esac", "select", "function", "coproc", "[[", "(("})
_OPAQUE_NAME_CHARS = frozenset("$`*?[]{}'\"\\ \t\r\n")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
_OPAQUE_RUNNERS = frozenset(
    {
        "alias",
        "trap",
        "su",
        "runuser",
        "chroot",
        "chrt",
        "flock",
        "watch",
        "strace",
        "ltrace",
        "unbuffer",
        "fakeroot",
        "parallel",
        "script",
        "expect",
        "ssh",
        "nsenter",
        "unshare",
        "firejail",
        "systemd-run",
        "tmux",
        "screen",
        "osascript",
    }
)
_INTERPRETER = re.compile(
    r"(python|pypy)[0-9.]*|node|nodejs|deno|bun|perl|ruby|php|lua|luajit|R|Rscript"
)
_INLINE_CODE_FLAGS = frozenset({"-c", "-e", "-E", "--eval", "-r", "-p", "--print", "eval", "-x"})
_AWK = frozenset({"awk", "gawk", "mawk", "nawk"})


@attrs.frozen(slots=True)
class Candidate:
    """One argv a segment may run; ``open_ended`` when more arguments arrive at run time."""

    argv: tuple[str, ...]
    open_ended: bool = False


@attrs.frozen(slots=True)
class CommandSegment:
    """One simple command: its words as written and every argv it may end up running.

    ``argv`` is literal (quotes removed, assignments and redirections set aside) and is what
    an allow rule must match.  ``candidates`` adds the unwrapped forms (``sudo git push`` also
    runs ``git push``, ``/usr/bin/git`` is also ``git``) that deny and ask rules check.
    ``opaque`` says why the command cannot be known from the text, when it cannot.
    """

    argv: tuple[str, ...]
    candidates: tuple[Candidate, ...]
    assignments: tuple[str, ...] = ()
    redirects: tuple[tuple[str, str], ...] = ()
    opaque: str | None = None
    nested: bool = False


@attrs.frozen(slots=True)
class ParsedCommand:
    """Every segment of a command string, and why the reading is not conclusive, if it is not."""

    text: str
    segments: tuple[CommandSegment, ...]
    problems: tuple[str, ...] = ()

    @property
    def conclusive(self) -> bool:
        return not self.problems and all(s.opaque is None for s in self.segments)

    @property
    def reasons(self) -> tuple[str, ...]:
        """Every reason the reading is not conclusive (empty when it is)."""
        return self.problems + tuple(s.opaque for s in self.segments if s.opaque is not None)


def split_command(command: str | Sequence[str]) -> ParsedCommand:
    """Read a command string (or an argv list, run without a shell) into segments."""
    return _split_text(command if isinstance(command, str) else shlex.join(command))


# Pure and immutable: every rule of a decision reads the same command, so parse it once.
@functools.lru_cache(maxsize=512)
def _split_text(text: str) -> ParsedCommand:
    segments: list[CommandSegment] = []
    problems: list[str] = []
    _parse(text, 0, False, segments, problems)
    return ParsedCommand(text, tuple(segments), tuple(dict.fromkeys(problems)))


def _parse(
    text: str, depth: int, nested: bool, segments: list[CommandSegment], problems: list[str]
) -> None:
    if depth > _MAX_DEPTH:
        problems.append("commands nested too deeply")
        return
    text = text.replace("\\\r\n", "").replace("\\\n", "")
    text, bodies = _cut_substitutions(text, problems)
    for body in bodies:
        _parse(body, depth + 1, True, segments, problems)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", " ; ")
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError as exc:
        problems.append(f"the command does not tokenise ({exc})")
        return
    for words, redirects, problem, piped in _group(tokens):
        if problem:
            problems.append(problem)
        if words or redirects:
            fed = piped or any(op in _INPUT_REDIRECTS for op, _ in redirects)
            segment, scripts = _analyse(tuple(words), tuple(redirects), nested, fed)
            segments.append(segment)
            for script in scripts:
                _parse(script, depth + 1, True, segments, problems)


def _cut_substitutions(text: str, problems: list[str]) -> tuple[str, list[str]]:
    out: list[str] = []
    bodies: list[str] = []
    i, n = 0, len(text)
    while i < n:
        two = text[i : i + 2]
        if two in ("$(", "<(", ">("):
            end = _closing_paren(text, i + 2)
            if end < 0:
                problems.append("an unterminated substitution")
                out.append(text[i:])
                break
            bodies.append(text[i + 2 : end])
            out.append("$__subst__")
            i = end + 1
        elif text[i] == "`":
            end = i + 1
            while end < n and text[end] != "`":
                end += 2 if text[end] == "\\" else 1
            if end >= n:
                problems.append("an unterminated backtick substitution")
                out.append(text[i:])
                break
            bodies.append(text[i + 1 : end])
            out.append("$__subst__")
            i = end + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out), bodies


def _closing_paren(text: str, start: int) -> int:
    depth, quote, i = 1, "", start
    while i < len(text):
        ch = text[i]
        if ch == "\\" and quote != "'":
            i += 2
            continue
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _operators(token: str) -> list[str]:
    ops: list[str] = []
    while token:
        op = next(o for o in _OPERATORS if token.startswith(o))
        ops.append(op)
        token = token[len(op) :]
    return ops


_Group = tuple[list[str], list[tuple[str, str]], str | None, bool]


def _group(tokens: list[str]) -> list[_Group]:
    """Simple commands: words, redirections, a problem, and whether a pipe feeds it."""
    groups: list[_Group] = []
    words: list[str] = []
    redirects: list[tuple[str, str]] = []
    pending: str | None = None
    problem: str | None = None
    piped = False
    for token in tokens:
        if token and all(ch in _PUNCTUATION for ch in token):
            for op in _operators(token):
                if pending is not None:
                    problem = "a redirection without a target"
                    pending = None
                if op in _SEPARATORS:
                    if op == "(" and words:
                        problem = "a function definition or a misplaced '('"
                    groups.append((words, redirects, problem, piped))
                    words, redirects, problem = [], [], None
                    piped = op in ("|", "|&")
                else:
                    if op == "<<":
                        problem = "a here-document"
                    if words and words[-1].isdigit():
                        words.pop()  # a file-descriptor number written before the operator
                    pending = op
        elif pending is not None:
            redirects.append((pending, token))
            pending = None
        else:
            words.append(token)
    if pending is not None:
        problem = "a redirection without a target"
    groups.append((words, redirects, problem, piped))
    return groups


def _analyse(
    words: tuple[str, ...], redirects: tuple[tuple[str, str], ...], nested: bool, fed: bool
) -> tuple[CommandSegment, list[str]]:
    opaque: str | None = None
    while words and words[0] in _SKIPPED_WORDS:
        words = words[1:]
    if words and words[0] in _OPAQUE_KEYWORDS:
        opaque = f"the shell construct {words[0]!r} is not read"
    assignments: list[str] = []
    while words and ASSIGNMENT.match(words[0]):
        assignments.append(words[0])
        words = words[1:]
    candidates: list[Candidate] = []
    scripts: list[str] = []
    if words and opaque is None:
        candidates, opaque, scripts = _unwrap(words, fed)
    elif words:
        candidates = [Candidate(words)]
    segment = CommandSegment(
        argv=words,
        candidates=tuple(dict.fromkeys(candidates)),
        assignments=tuple(assignments),
        redirects=redirects,
        opaque=opaque,
        nested=nested,
    )
    return segment, scripts


def _opaque_name(word: str) -> bool:
    return not word or any(ch in _OPAQUE_NAME_CHARS for ch in word)


def _unwrap(argv: tuple[str, ...], fed: bool) -> tuple[list[Candidate], str | None, list[str]]:
    candidates = [Candidate(argv)]
    scripts: list[str] = []
    open_ended = False
    current = argv
    for _ in range(16):
        name = current[0]
        if _opaque_name(name):
            return candidates, f"the command name {name!r} is decided at run time", scripts
        base = posixpath.basename(name) if "/" in name else name
        if base != name:
            current = (base, *current[1:])
            candidates.append(Candidate(current, open_ended))
        args = current[1:]
        if base in WRAPPERS:
            rest, why = WRAPPERS[base](args)
            if why is not None:
                return candidates, f"{base}: {why}", scripts
            if not rest:
                break
            open_ended = open_ended or base == "xargs"
            current = rest
            candidates.append(Candidate(current, open_ended))
            continue
        if base in _SHELLS:
            script, why = shell_program(args)
            if why is not None:
                return candidates, f"{base}: {why}", scripts
            if script is not None:
                scripts.append(script)
            else:
                why = side_channel(base, args, fed)
                if why is not None:
                    return candidates, why, scripts
        elif base == "eval":
            scripts.append(" ".join(args))
        elif base == "git":
            stripped, why = git_global_options(args)
            if why is not None:
                return candidates, f"git: {why}", scripts
            if stripped != args:
                candidates.append(Candidate(("git", *stripped), open_ended))
        elif base == "find":
            candidates.extend(Candidate(argv, True) for argv in find_exec(args))
        elif base in _OPAQUE_RUNNERS:
            return candidates, f"{base} runs commands that are not visible here", scripts
        elif _INTERPRETER.fullmatch(base) and any(a in _INLINE_CODE_FLAGS for a in args):
            return candidates, f"{base} runs inline code", scripts
        elif base in _AWK and any("system" in a or "|" in a for a in args):
            return candidates, f"{base} may run commands", scripts
        else:
            why = side_channel(base, args, fed or open_ended)
            if why is not None:
                return candidates, why, scripts
        break
    return candidates, None, scripts
