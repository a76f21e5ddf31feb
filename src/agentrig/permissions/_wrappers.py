"""How wrappers hand a command on, so the splitter can see the command they run.

``sudo git push`` runs ``git push``; ``bash -c 'git push'`` too; ``git -C . push`` is a
push.  Each function here skips one wrapper's options and returns the wrapped argv, or says
why it cannot (an option it does not know, which may change what runs).  Unknown options
are never guessed: the splitter marks the segment opaque instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = [
    "ASSIGNMENT",
    "INERT_PROGRAMS",
    "WRAPPERS",
    "find_exec",
    "git_global_options",
    "shell_program",
]

ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")

INERT_PROGRAMS: frozenset[str] = frozenset(
    {"ls", "cat", "pwd", "grep", "egrep", "fgrep", "head", "tail", "wc", "echo", "printf"}
    | {"true", "false", "test", "[", "stat", "du", "basename", "dirname", "realpath"}
    | {"readlink", "which", "whoami", "id", "uname", "cut", "nl", "sleep", "cd"}
    | {"mkdir", "rmdir", "touch", "cp", "mv", "rm", "ln", "chmod"}
)
"""Programs known never to run a word of their arguments as a command.

Any other program may be a wrapper nobody taught the splitter (``mytool git push``), so a
deny or ask rule treats the program it names, appearing among that program's arguments,
as a possible match (see ``_match.match_command``).  Keep this list short: a program that
can run a command (``sort --compress-program``, ``tar --to-command``, GNU ``sed``'s ``e``)
does not belong here.
"""


def find_exec(args: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The commands ``find -exec``/``-execdir``/``-ok``/``-okdir`` run (arguments follow)."""
    found: list[tuple[str, ...]] = []
    for i, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            tail: list[str] = []
            for word in args[i + 1 :]:
                if word in (";", "+"):
                    break
                tail.append(word)
            if tail:
                found.append(tuple(tail))
    return found


_OptResult = tuple[tuple[str, ...], str | None]


def _options(
    args: tuple[str, ...],
    *,
    short_value: str = "",
    short_flags: str = "",
    short_optional: str = "",
    long_value: frozenset[str] = frozenset(),
    long_flags: frozenset[str] = frozenset(),
    digits: bool = False,
) -> _OptResult:
    """Skip a wrapper's options; the result is the wrapped argv or why it cannot be read."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return args[i + 1 :], None
        if arg.startswith("--"):
            name = arg[2:].split("=", 1)[0]
            if "=" in arg and (name in long_value or name in long_flags):
                i += 1
            elif name in long_value:
                i += 2
            elif name in long_flags:
                i += 1
            else:
                return (), f"unknown option {arg!r}"
            continue
        if arg.startswith("-") and len(arg) > 1:
            if digits and arg[1:].isdigit():
                i += 1
                continue
            step = 1
            for pos, ch in enumerate(arg[1:], start=1):
                if ch in short_value:
                    step = 1 if pos + 1 < len(arg) else 2
                    break
                if ch in short_optional:
                    break
                if ch not in short_flags:
                    return (), f"unknown option {arg!r}"
            i += step
            continue
        return args[i:], None
    return (), None


def _skip_assignments(result: _OptResult) -> _OptResult:
    rest, why = result
    while rest and ASSIGNMENT.match(rest[0]):
        rest = rest[1:]
    return rest, why


def _sudo(args: tuple[str, ...]) -> _OptResult:
    return _skip_assignments(
        _options(
            args,
            short_value="CDghpRrTtUu",
            short_flags="AbBEeHiKklNnPSsVv",
            long_value=frozenset(
                {"user", "group", "host", "prompt", "chdir", "chroot", "role", "type"}
                | {"command-timeout", "other-user", "close-from"}
            ),
            long_flags=frozenset(
                {"preserve-env", "login", "shell", "non-interactive", "stdin", "background"}
                | {"edit", "askpass", "preserve-groups", "set-home", "remove-timestamp"}
                | {"reset-timestamp", "list", "validate", "version", "help", "bell", "no-update"}
            ),
        )
    )


def _doas(args: tuple[str, ...]) -> _OptResult:
    return _options(args, short_value="uC", short_flags="nsL")


def _env(args: tuple[str, ...]) -> _OptResult:
    if any(a == "-S" or a.startswith(("-S", "--split-string")) for a in args):
        return (), "-S splits a string into a command"
    return _skip_assignments(
        _options(
            args,
            short_value="uCP",
            short_flags="i0v",
            long_value=frozenset({"unset", "chdir"}),
            long_flags=frozenset({"ignore-environment", "null", "debug"}),
        )
    )


def _timeout(args: tuple[str, ...]) -> _OptResult:
    rest, why = _options(
        args,
        short_value="sk",
        short_flags="v",
        long_value=frozenset({"signal", "kill-after"}),
        long_flags=frozenset({"preserve-status", "foreground", "verbose"}),
    )
    return rest[1:], why  # the first word left is the duration


def _nice(args: tuple[str, ...]) -> _OptResult:
    return _options(args, short_value="n", long_value=frozenset({"adjustment"}), digits=True)


def _no_options(args: tuple[str, ...]) -> _OptResult:
    return _options(args)


def _command(args: tuple[str, ...]) -> _OptResult:
    return _options(args, short_flags="pvV")


def _exec(args: tuple[str, ...]) -> _OptResult:
    return _options(args, short_value="a", short_flags="cl")


def _time(args: tuple[str, ...]) -> _OptResult:
    return _options(
        args,
        short_value="fo",
        short_flags="pavq",
        long_value=frozenset({"format", "output"}),
        long_flags=frozenset({"append", "verbose", "portability", "quiet"}),
    )


def _xargs(args: tuple[str, ...]) -> _OptResult:
    return _options(
        args,
        short_value="adEILnPs",
        short_flags="0oprtx",
        short_optional="eil",
        long_value=frozenset(
            {"arg-file", "delimiter", "max-lines", "max-args", "max-procs", "max-chars"}
            | {"process-slot-var"}
        ),
        long_flags=frozenset(
            {"null", "open-tty", "interactive", "no-run-if-empty", "show-limits", "verbose"}
            | {"exit", "eof", "replace"}
        ),
    )


def _stdbuf(args: tuple[str, ...]) -> _OptResult:
    return _options(args, short_value="ioe", long_value=frozenset({"input", "output", "error"}))


def _setsid(args: tuple[str, ...]) -> _OptResult:
    return _options(args, short_flags="cfw", long_flags=frozenset({"ctty", "fork", "wait"}))


WRAPPERS: dict[str, Callable[[tuple[str, ...]], _OptResult]] = {
    "sudo": _sudo,
    "doas": _doas,
    "env": _env,
    "timeout": _timeout,
    "nice": _nice,
    "nohup": _no_options,
    "builtin": _no_options,
    "busybox": _no_options,
    "command": _command,
    "exec": _exec,
    "time": _time,
    "xargs": _xargs,
    "stdbuf": _stdbuf,
    "setsid": _setsid,
}


def shell_program(args: tuple[str, ...]) -> tuple[str | None, str | None]:
    """The program a shell is handed with ``-c``, or why it cannot be seen."""
    has_c = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg in ("--rcfile", "--init-file"):
            i += 2
            continue
        if arg.startswith("--"):
            i += 1
            continue
        if arg in ("-o", "+o", "-O", "+O"):
            i += 2
            continue
        if len(arg) > 1 and arg[0] in "-+":
            has_c = has_c or "c" in arg[1:]
            i += 1
            continue
        break
    rest = args[i:]
    if has_c:
        if not rest:
            return None, "-c without a program"
        return rest[0], None
    if rest:
        return None, None  # a script file: its contents are not read (documented limit)
    return None, "the shell reads its program from standard input"


_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_GIT_VALUE_OPTIONS |= frozenset({"--super-prefix", "--config-env", "--list-cmds"})
_GIT_FLAGS = frozenset(
    {"-p", "-P", "--paginate", "--no-pager", "--bare", "--no-replace-objects"}
    | {"--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs"}
    | {"--no-optional-locks", "--no-lazy-fetch", "--no-advice", "--exec-path"}
)


def git_global_options(args: tuple[str, ...]) -> tuple[tuple[str, ...], str | None]:
    """``git``'s arguments from the subcommand on, or why they cannot be told."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        name = arg.split("=", 1)[0]
        value: str | None = arg.split("=", 1)[1] if "=" in arg else None
        if name in _GIT_VALUE_OPTIONS:
            if value is None:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            if name == "--config-env" or (name == "-c" and value.lower().startswith("alias.")):
                return args, "a command-line alias renames the subcommand"
        elif arg.startswith("-C") and len(arg) > 2:
            pass  # -C<dir>
        elif arg.startswith("-c") and len(arg) > 2:
            if arg[2:].lower().startswith("alias."):
                return args, "a command-line alias renames the subcommand"
        elif name not in _GIT_FLAGS:
            return args, f"unknown global option {arg!r}"
        i += 1
    return args[i:], None
