"""Programs that read a program: where the program they run comes from.

An interpreter, a shell, a scheduler or a command console runs text it reads from
somewhere.  When that text is in the command's own words (``bash -c 'git push'``) the
splitter reads it; when it is a file named in the words (``python3 build.py``) it is the
documented limit "programs stored in files are not read".  Everything else is a *side
channel*: standard input (a pipe, a here-string, a here-document, a ``<`` redirection, or
whatever the tool was started with), ``-``, ``/dev/stdin``, ``/dev/fd/N``,
``/proc/*/fd/N``, a process substitution, or a path decided at run time.  A program that
arrives on a side channel cannot be judged from the text, so :func:`side_channel` names it
and the splitter marks the segment opaque: a deny or ask rule then asks, an allow rule
grants nothing.

The readers are grouped by how they take their program, not listed one example at a time:

* **consoles** take commands from standard input whatever their arguments (``ed``, ``ex``,
  ``vim``, ``gdb``, ``sqlite3``, ``psql``, ``dc``, ``sftp``...) and **schedulers** hand
  commands to a service that runs them later (``at``, ``batch``, ``crontab``): always opaque;
* **script readers** (shells, ``python``, ``perl``, ``ruby``, ``node``, ``php``, ``lua``,
  ``Rscript``, ``tclsh``...) run their first operand as a script and read standard input
  when there is none;
* **file-option readers** (``awk -f``, ``sed -f``, ``make -f``) read their program from the
  file an option names;
* ``source`` and ``.`` run the file they name in the current shell.
"""

from __future__ import annotations

import re

__all__ = ["CONSOLES", "SCRIPT_READERS", "side_channel", "side_channel_path"]

CONSOLES: frozenset[str] = frozenset(
    {"ed", "red", "ex", "vi", "vim", "nvim", "view", "vimdiff", "gvim", "rvim", "evim"}
    | {"emacs", "emacsclient", "gdb", "lldb", "pdb", "jdb", "sqlite3", "psql", "mysql"}
    | {"mariadb", "duckdb", "dc", "ftp", "sftp", "lftp", "at", "batch", "crontab"}
    | {"atrun", "irb", "ghci", "jshell", "iex", "erl", "julia", "sbcl", "clisp", "guile"}
    | {"racket", "ocaml", "scala", "groovysh", "pwsh", "powershell", "tclsh", "wish"}
    | {"jimsh", "expect", "bc", "gnuplot", "octave", "matlab", "maxima", "gp", "sage"}
)
"""Programs that take commands from standard input (or hand them to a scheduler) whatever
their arguments, and can run a shell command from there: always opaque."""

_SHELL_NAMES = r"sh|bash|zsh|dash|ksh|mksh|ash|fish|csh|tcsh|yash|posh|rbash"
SCRIPT_READERS = re.compile(
    rf"(?:python|pypy)[0-9.]*|{_SHELL_NAMES}|node|nodejs|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*"
    r"|lua[0-9.]*|luajit|Rscript|R|deno|bun|tsx|ts-node|osh|elvish|nu|xonsh"
)
"""Programs whose first operand is a script and which read standard input without one."""

# options of script readers that take the next word as their value (not a script)
_VALUE_OPTIONS = frozenset(
    {"-W", "-X", "-Q", "-I", "-M", "-r", "--require", "--import", "--loader", "-o", "+o"}
    | {"-O", "+O", "--rcfile", "--init-file", "-C", "-d", "-z", "--input-type", "--title"}
    | {"--experimental-loader", "--conditions", "--env-file", "-f", "--file", "--args"}
)
# flags of script readers known to take no value and not to change where the program is read
_FLAGS = frozenset(
    {"-u", "-B", "-E", "-S", "-O", "-OO", "-q", "-b", "-bb", "-P", "-w", "-t", "-T", "-x"}
    | {"-n", "-p", "-a", "-l", "-W", "-e", "--no-warnings", "--trace-warnings", "--norc"}
    | {"--noprofile", "--posix", "--login", "-l", "--enable-source-maps", "--no-deprecation"}
)
# options after which the program is a module or a named entry, not standard input
_MODULE_OPTIONS = frozenset({"-m", "--module"})
# options that only print something and exit
_INFO_OPTIONS = frozenset({"-V", "--version", "-h", "--help", "-v", "-version"})

_FILE_OPTIONS: dict[str, tuple[frozenset[str], str]] = {
    "awk": (frozenset({"-f", "--file"}), "its program"),
    "sed": (frozenset({"-f", "--file"}), "its script"),
    "make": (frozenset({"-f", "--file", "--makefile"}), "its makefile"),
}
for _alias, _name in (("gawk", "awk"), ("mawk", "awk"), ("nawk", "awk"), ("gsed", "sed")):
    _FILE_OPTIONS[_alias] = _FILE_OPTIONS[_name]
_FILE_OPTIONS["gmake"] = _FILE_OPTIONS["make"]

_FD_PATH = re.compile(r"/(?:dev/(?:stdin|fd/.*|tcp/.*|udp/.*)|proc/[^/]+/fd/.*)")


def side_channel_path(word: str) -> bool:
    """Whether a program named by ``word`` arrives on a side channel: ``-``, standard input
    or another descriptor, or a path decided at run time (an expansion, a substitution)."""
    if word == "-" or any(ch in word for ch in "$`"):
        return True
    return _FD_PATH.fullmatch(word) is not None


def _option_value(args: tuple[str, ...], i: int, names: frozenset[str]) -> str | None:
    """The value of option ``args[i]`` when it is one of ``names`` (``-f x``, ``-fx``,
    ``--file=x``)."""
    arg = args[i]
    for name in names:
        if arg == name:
            return args[i + 1] if i + 1 < len(args) else ""
        if name.startswith("--") and arg.startswith(name + "="):
            return arg[len(name) + 1 :]
        if not name.startswith("--") and arg.startswith(name) and len(arg) > len(name):
            return arg[len(name) :]
    return None


def _script_reader(base: str, args: tuple[str, ...], fed: bool) -> str | None:
    stdin = f"{base} reads its program from standard input"
    shell = re.fullmatch(_SHELL_NAMES, base) is not None
    i = 0
    unknown = False
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg in _INFO_OPTIONS and i == 0:
            return None
        if arg in _MODULE_OPTIONS or (arg.startswith("-m") and base.startswith(("python", "pypy"))):
            return None  # a module found by name: a stored program
        if arg in ("-i", "--interactive") or (shell and _short_flags(arg, "s", "i")):
            return stdin  # interactive, or a shell told to read standard input
        script = _option_value(args, i, frozenset({"-f", "--file"}))
        if script is not None and not shell:
            # php -f FILE, bun --file...: the option names the script
            return (
                f"{base} reads its program from {script!r}, a side channel"
                if (side_channel_path(script))
                else None
            )
        if arg in _VALUE_OPTIONS:
            i += 2
            continue
        if arg != "-" and arg.startswith(("-", "+")):
            unknown = unknown or arg not in _FLAGS
            i += 1
            continue
        break
    if i >= len(args):
        return stdin
    if side_channel_path(args[i]):
        return f"{base} reads its program from {args[i]!r}, a side channel"
    if fed and unknown:
        return f"{base} is handed input and not all of its options are known"
    return None


def _short_flags(arg: str, *letters: str) -> bool:
    """Whether ``arg`` is a cluster of short flags (``-xs``) holding one of ``letters``."""
    if len(arg) < 2 or arg[0] not in "-+" or arg[1] in "-+":
        return False
    return any(letter in arg[1:] for letter in letters)


def side_channel(base: str, args: tuple[str, ...], fed: bool) -> str | None:
    """Why the program ``base`` runs arrives on a side channel (None when it does not).

    ``fed`` says the command's standard input is given something (a pipe, a here-string, a
    ``<`` redirection).  ``base`` is the program's name without its directory.
    """
    if base in CONSOLES:
        return f"{base} takes commands that are not visible here"
    if base in ("source", "."):
        if not args or side_channel_path(args[0]):
            return f"{base} runs a program from a side channel"
        return None
    found = _FILE_OPTIONS.get(base)
    if found is not None:
        options, what = found
        for i in range(len(args)):
            value = _option_value(args, i, options)
            if value is not None and side_channel_path(value):
                return f"{base} reads {what} from {value!r}, a side channel"
        return None
    if SCRIPT_READERS.fullmatch(base):
        return _script_reader(base, args, fed)
    return None
