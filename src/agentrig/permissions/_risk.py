"""Judgements about a call's effect, made from its declared argument alone.

Three questions the evaluator asks besides "which rule matches":

* does a command tool's call only run built-in read-only commands inside the workspace
  (then it is decided as ``inspect``, so looking around never prompts);
* is it a removal whose loss would be catastrophic (it always asks);
* is it a write into a location that widens what later turns, child sessions or the user's
  shell trust (it always asks).

Only what the declared argument shows is judged: a shell command that writes into a
trust-widening location is the path-containment seam's concern, not this gate's.

No I/O here: paths are canonicalised through the ``PathResolver`` port the caller passes.
"""

from __future__ import annotations

import itertools
import posixpath
import re
from collections.abc import Callable

from agentrig.permissions._match import canonical_path, match_path
from agentrig.permissions._shell import ParsedCommand
from agentrig.permissions._types import GlobExpander, PathResolver

__all__ = [
    "DEFAULT_TRUST_WIDENING_PATHS",
    "READ_ONLY_COMMANDS",
    "READ_ONLY_GIT_SUBCOMMANDS",
    "catastrophic_command",
    "catastrophic_path",
    "expand_braces",
    "is_read_only_command",
    "trust_widening_path",
]

READ_ONLY_COMMANDS: frozenset[str] = frozenset(
    {
        "ls",
        "cat",
        "pwd",
        "grep",
        "egrep",
        "fgrep",
        "head",
        "tail",
        "wc",
        "echo",
        "true",
        "false",
        "stat",
        "du",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "which",
        "whoami",
        "id",
        "uname",
        "cut",
        "nl",
    }
)
"""Commands decided as ``inspect`` when every word they name stays inside the workspace."""

READ_ONLY_GIT_SUBCOMMANDS: frozenset[str] = frozenset(
    {"status", "log", "diff", "show", "blame", "ls-files", "rev-parse"}
)
"""``git`` subcommands decided as ``inspect`` (with no global options before them)."""

_FORBIDDEN_OPTIONS = ("--output", "--files0-from", "--ext-diff", "--pre")
_PLAIN_OPTION = re.compile(r"--?[A-Za-z0-9][A-Za-z0-9-]*")
_VALUED_OPTION = re.compile(r"--[A-Za-z0-9][A-Za-z0-9-]*=(.*)", re.DOTALL)
_OUTPUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})

DEFAULT_TRUST_WIDENING_PATHS: tuple[str, ...] = (
    # the workspace's own trust: version control, agentrig and editor/agent configuration
    "**/.git/**",
    ".agentrig/",
    "agentrig.toml",
    "agentrig.yaml",
    "agentrig.yml",
    "agentrig.json",
    ".mcp.json",
    # skills folders of the agents agentrig reads skills for (.claude/ and .agentrig/ above)
    "**/.agents/skills/",
    "**/.codex/skills/",
    ".envrc",
    ".githooks/",
    ".husky/",
    ".pre-commit-config.yaml",
    ".vscode/",
    ".idea/",
    ".claude/",
    # the user's shell, login and tool configuration
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.profile",
    "~/.zshrc",
    "~/.zshenv",
    "~/.zprofile",
    "~/.zlogin",
    "~/.config/fish/",
    "~/.ssh/",
    "~/.gitconfig",
    "~/.config/git/",
    "~/.agentrig/",
    "~/.claude/",
    "~/.agents/skills/",
    "~/.codex/skills/",
    "~/.config/agentrig/",
    "~/.local/bin/",
    "~/.npmrc",
    "~/.config/autostart/",
    "~/.config/systemd/",
    "~/Library/LaunchAgents/",
    # machine-wide configuration
    "//etc/",
)
"""Path patterns (in the rule grammar) a write into which always asks."""


def _inside(path: str, root: str) -> bool:
    # both are canonical already (the port's answers); compared component by component,
    # never as string prefixes (agentrig.host's rule: /srv/ab is not inside /srv/a)
    if not posixpath.isabs(root):
        return False
    root_parts = [p for p in posixpath.normpath(root).split("/") if p]
    parts = [p for p in posixpath.normpath(path).split("/") if p]
    return parts[: len(root_parts)] == root_parts


def _word_inside(
    word: str,
    root: str,
    roots: tuple[str, ...],
    home: str,
    resolve: PathResolver,
    expand: GlobExpander | None = None,
) -> bool:
    # a relative word is read from the workspace root (where the command runs), and the
    # resolved path must lie inside one of the roots -- and so must every path a glob or a
    # brace in it expands to (through a symlink inside the workspace, "cat dir/*" can reach
    # what "cat dir/link/x" spelled out cannot)
    if any(ch in word for ch in "$`"):
        return False
    words = expand_braces(word)
    if words is None:
        return False
    for one in words:
        path = canonical_path(one, root=root, home=home, resolve=resolve)
        if path is None or not any(_inside(path, r) for r in roots):
            return False
        if _GLOB_CHARS & set(one):
            written = _absolute(one, root, home)
            matches = None if expand is None or written is None else expand(written)
            if matches is None:
                return False  # what the glob reaches cannot be told: not read-only
            for match in matches:
                reached = canonical_path(match, root=root, home=home, resolve=resolve)
                if reached is None or not any(_inside(reached, r) for r in roots):
                    return False
    return True


_GLOB_CHARS = frozenset("*?[")


def _absolute(word: str, root: str, home: str) -> str | None:
    if word == "~" or word.startswith("~/"):
        word = home + word[1:]
    elif word.startswith("~"):
        return None
    return posixpath.normpath(posixpath.join(root, word))


def expand_braces(word: str, limit: int = 256) -> list[str] | None:
    """The words bash's brace expansion makes of ``word`` (``a{b,c}d`` -> ``abd acd``,
    nested too), or ``None`` when it cannot be told here (a sequence ``{1..9}``, more than
    ``limit`` words).  A brace without a comma is literal, as in bash."""
    start = word.find("{")
    if start < 0:
        return [word]
    depth, commas, end = 0, [], -1
    for i in range(start, len(word)):
        ch = word[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                end = i
                break
        elif ch == "," and depth == 1:
            commas.append(i)
    if end < 0:
        return [word] if "}" not in word[start:] else None
    body = word[start + 1 : end]
    if not commas:
        if ".." in body:
            return None  # a sequence expression
        rest = expand_braces(word[end + 1 :], limit)
        return None if rest is None else [word[: end + 1] + r for r in rest]
    bounds = [start, *commas, end]
    out: list[str] = []
    for a, b in itertools.pairwise(bounds):
        expanded = expand_braces(word[:start] + word[a + 1 : b] + word[end + 1 :], limit)
        if expanded is None:
            return None
        out.extend(expanded)
        if len(out) > limit:
            return None
    return out


def is_read_only_command(
    parsed: ParsedCommand,
    *,
    root: str,
    home: str,
    resolve: PathResolver,
    roots: tuple[str, ...] = (),
    expand: GlobExpander | None = None,
) -> bool:
    """Whether every segment runs a listed read-only command naming only paths inside the
    workspace ``root`` or one of the extra ``roots`` (relative words are read from ``root``,
    the command's working directory).

    A word with a glob or a brace counts by every path it can reach (``expand`` answers the
    glob; without it such a word is not read-only), and a reader that follows symlinks
    below its arguments (``grep -R``, ``ls -L``, ``du -L``) is not read-only.
    """
    inside = (root, *roots)
    if not parsed.conclusive:
        return False
    ran = [s for s in parsed.segments if s.argv or s.assignments or s.redirects]
    if not ran:
        return False

    def within(word: str) -> bool:
        return _word_inside(word, root, inside, home, resolve, expand)

    for segment in ran:
        if segment.assignments or not segment.argv:
            return False
        words = _reader_words(segment.argv)
        if words is None or not all(_word_read_only(word, within) for word in words):
            return False
        if not all(_redirect_read_only(op, target, within) for op, target in segment.redirects):
            return False
    return True


def _reader_words(argv: tuple[str, ...]) -> tuple[str, ...] | None:
    """The words after a listed read-only command (None: not one, or it follows links)."""
    if argv[0] == "git":
        if len(argv) < 2 or argv[1] not in READ_ONLY_GIT_SUBCOMMANDS:
            return None
        return argv[2:]
    if argv[0] in READ_ONLY_COMMANDS and not _follows_links(argv[0], argv[1:]):
        return argv[1:]
    return None


def _word_read_only(word: str, within: Callable[[str], bool]) -> bool:
    """Whether one word of a reader keeps it read-only: a known option, or a path inside."""
    if word.startswith(_FORBIDDEN_OPTIONS):
        return False
    if word == "-":
        return True
    if not word.startswith("-"):
        return within(word)
    valued = _VALUED_OPTION.fullmatch(word)
    if valued is not None:
        return not valued.group(1) or within(valued.group(1))
    return _PLAIN_OPTION.fullmatch(word) is not None


def _redirect_read_only(op: str, target: str, within: Callable[[str], bool]) -> bool:
    if op in _OUTPUT_REDIRECTS:
        return target == "/dev/null"
    if op in (">&", "<&"):
        return target.isdigit() or target == "-"
    return op != "<" or within(target)


# readers that follow symlinks met below their arguments: what they reach is not told by
# the words (option letters, and long options that mean the same)
_FOLLOWING: dict[str, tuple[str, frozenset[str]]] = {
    "grep": ("R", frozenset({"--dereference-recursive"})),
    "ls": ("L", frozenset({"--dereference"})),
    "du": ("L", frozenset({"--dereference"})),
}
_FOLLOWING["egrep"] = _FOLLOWING["fgrep"] = _FOLLOWING["grep"]


def _follows_links(command: str, words: tuple[str, ...]) -> bool:
    found = _FOLLOWING.get(command)
    if found is None:
        return False
    letter, long_names = found
    for word in words:
        if word == "--":
            break
        if word.startswith("--"):
            if word.split("=", 1)[0] in long_names:
                return True
        elif word.startswith("-") and letter in word[1:]:
            return True
    return False


def _protected(root: str, home: str) -> set[str]:
    protected = {"/", root, home}
    for base in (root, home):
        current = base
        while current not in ("/", ""):
            current = posixpath.dirname(current)
            protected.add(current)
    return protected


def _top_level(path: str) -> bool:
    return path.count("/") == 1


def catastrophic_path(value: str, *, root: str, home: str, resolve: PathResolver) -> bool:
    """Whether a change aimed at ``value`` would hit ``/``, home, the workspace or an ancestor."""
    path = canonical_path(value, root=root, home=home, resolve=resolve)
    if path is None:
        return False
    return path in _protected(root, home) or _top_level(path)


def _catastrophic_target(
    word: str, root: str, home: str, protected: set[str], resolve: PathResolver
) -> bool:
    if any(ch in word for ch in "$`{"):
        return True  # decided at run time: it could be any of them
    head, _, last = word.rstrip("/").rpartition("/") if "/" in word else ("", "", word)
    if any(ch in last for ch in "*?[") and set(last) <= set("*.?"):
        parent = canonical_path(
            head or (word[:1] if word.startswith("/") else "."),
            root=root,
            home=home,
            resolve=resolve,
        )
        return parent is not None and parent in protected
    path = canonical_path(word, root=root, home=home, resolve=resolve)
    return path is not None and (path in protected or _top_level(path))


def catastrophic_command(
    parsed: ParsedCommand, *, root: str, home: str, resolve: PathResolver
) -> bool:
    """Whether any segment recursively removes ``/``, home, the workspace or an ancestor.

    Covers ``rm`` with ``-r``/``-R``/``--recursive`` (any spelling the splitter unwraps) and
    ``find ... -delete``; a target that is expanded at run time counts as catastrophic.
    """
    protected = _protected(root, home)
    for segment in parsed.segments:
        for candidate in segment.candidates:
            argv = candidate.argv
            if argv and argv[0] == "rm":
                recursive, targets, options_done = False, [], False
                for word in argv[1:]:
                    if not options_done and word == "--":
                        options_done = True
                    elif not options_done and word.startswith("--"):
                        recursive = recursive or word in ("--recursive", "--no-preserve-root")
                    elif not options_done and word.startswith("-") and len(word) > 1:
                        recursive = recursive or "r" in word or "R" in word
                    else:
                        targets.append(word)
                if recursive and any(
                    _catastrophic_target(t, root, home, protected, resolve) for t in targets
                ):
                    return True
            if argv and argv[0] == "find" and "-delete" in argv:
                starts = [w for w in argv[1:] if not w.startswith(("-", "(", "!"))][:1]
                if any(
                    _catastrophic_target(t, root, home, protected, resolve) for t in starts or ["."]
                ):
                    return True
    return False


def trust_widening_path(
    value: str, *, root: str, home: str, patterns: tuple[str, ...] | None, resolve: PathResolver
) -> bool:
    """Whether a write to ``value`` lands in one of the trust-widening locations."""
    listed = DEFAULT_TRUST_WIDENING_PATHS if patterns is None else patterns
    for pattern in listed:
        outcome = match_path(
            pattern, value, root=root, home=home, resolve=resolve, direction="restrict"
        )
        if outcome != "no-match":
            return True
    return False


def canonical_root(root: str, resolve: PathResolver) -> str:
    """The workspace root with symlinks resolved through ``resolve`` (``..`` folded by text
    when the port cannot answer).

    Asked on every call, never remembered: a root whose symlink is re-pointed while the
    process runs is judged where it points now, as the rules and argument paths resolved
    beside it are (a remembered root once let an edit into a denied place pass as an edit
    of the place the root used to point to).
    """
    resolved = resolve(root)
    if resolved is None:
        # every path check under it will then be unevaluable (the port cannot read it)
        return posixpath.normpath(root)
    return resolved
