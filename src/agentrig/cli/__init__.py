"""The ``agentrig`` command.

``main(argv)`` parses the arguments, runs one subcommand and returns its exit code (it never
calls :func:`sys.exit`; the console-script wrapper does).  Exit codes follow the common
convention: ``0`` success, ``1`` the command ran and found a problem (an invalid config, a
failed plugin), ``2`` a usage error (unknown option, missing file), ``130`` interrupted.

The core's subcommands are modules named in :data:`SUBCOMMANDS`; each exposes
``register(subparsers)``, which adds its parser and sets ``handler`` -- a function
``(args) -> int``.  Running a core command imports and registers that command's module
only; ``--help`` (or any other first word) registers them all.  Plugins add theirs through
the ``register_commands`` hook (:class:`Commands`; declared in ``_hookspecs``, as the CLI is
the only layer that fires it); the installed listener plugins are loaded for it with the
environment's plugin switches, and ``--help`` lists their commands too.

Subcommand modules import nothing heavy at module level, so ``agentrig --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, NoReturn, Protocol, cast

from agentrig._lazy import lazy_exports
from agentrig.cli import _collector
from agentrig.cli._common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    Subparsers,
    UsageError,
    set_debug,
    show_traceback,
    version_text,
    warning_line,
)

if TYPE_CHECKING:
    from agentrig.cli._commands import Commands as Commands
    from agentrig.cli._plugin_report import PluginRow as PluginRow
    from agentrig.cli._plugin_report import plugin_report as plugin_report

__all__ = [
    "SUBCOMMANDS",
    "Commands",
    "PluginRow",
    "Subcommand",
    "build_parser",
    "main",
    "plugin_report",
]

# the payload of register_commands, for plugins (``agentrig.plugin`` re-exports it), and the
# plugin report (``agentrig plugins``' rows); imported on first use, so ``agentrig --help``
# loads neither them nor the error tree and attrs they need
_LAZY = {
    "Commands": "agentrig.cli._commands",
    "PluginRow": "agentrig.cli._plugin_report",
    "plugin_report": "agentrig.cli._plugin_report",
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)


class Subcommand(Protocol):
    """A module that contributes one ``agentrig <name>`` subcommand."""

    def register(self, subparsers: Subparsers) -> None:
        """Add the subcommand's parser; set ``handler=(args) -> int`` as its default."""
        ...


SUBCOMMANDS: dict[str, str] = {
    "run": "agentrig.cli._run",
    "chat": "agentrig.cli._chat",
    "sessions": "agentrig.cli._sessions",
    "migrate": "agentrig.cli._migrate",
    "models": "agentrig.cli._models",
    "plugins": "agentrig.cli._plugins",
    "config": "agentrig.cli._config",
    "doctor": "agentrig.cli._doctor",
}
"""The core's subcommands in ``--help`` order: each name and its module (a
:class:`Subcommand`), imported when its parser is built."""

Handler = Callable[[argparse.Namespace], int]


def build_parser(
    *,
    plugin_commands: bool = True,
    environ: Mapping[str, str] | None = None,
    err: IO[str] | None = None,
) -> argparse.ArgumentParser:
    """The top-level parser: every subcommand of :data:`SUBCOMMANDS`, then the plugins' own.

    A plugin that fails to load or to add its commands is reported on ``err`` (default
    stderr) in one line; the other commands still work.  ``plugin_commands=False`` leaves
    the plugins unloaded (what running a core command does: it needs none of theirs).
    """
    return _build(plugin_commands=plugin_commands, environ=environ, err=err)


def _build(
    *,
    plugin_commands: bool = True,
    environ: Mapping[str, str] | None = None,
    err: IO[str] | None = None,
    command: str | None = None,
) -> argparse.ArgumentParser:
    """:func:`build_parser`; with ``command`` (a core command's name), that command's
    parser only -- what running it needs, without the other modules or any plugin."""
    parser = _Parser(
        prog="agentrig",
        description=(
            "agentrig: run an agent of a composition file (run, chat), read and migrate its "
            "stored sessions, and check plugins, configs and the installation; installed "
            "plugins add commands of their own."
        ),
        epilog="Run 'agentrig COMMAND --help' for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=version_text())
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on a failure, also print the full traceback (errors are one line without it)",
    )
    # the subcommands' parsers are _Parser too; to the subcommands they are ArgumentParsers
    subparsers = cast(
        Subparsers, parser.add_subparsers(title="commands", metavar="COMMAND", dest="command")
    )
    for name, module in SUBCOMMANDS.items():
        if command is None or name == command:
            cast(Subcommand, importlib.import_module(module)).register(subparsers)
    if plugin_commands:
        _add_plugin_commands(subparsers, os.environ if environ is None else environ, err)
    return parser


class _Parser(argparse.ArgumentParser):
    """argparse, with its usage errors in the shape of every other error line
    (``agentrig COMMAND: error [cli.usage]: ...``); subcommand parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error [cli.usage]: {message}\n")


def _command_plugins(environ: Mapping[str, str]) -> frozenset[str]:
    """The installed listener plugins that could add a command, found without importing any.

    The core's own entries (its composition steps) never do -- its commands are
    :data:`SUBCOMMANDS` -- and the environment's switches leave others out; when nothing is
    left, ``--help`` needs neither the kernel nor a plugin.
    """
    from importlib.metadata import entry_points

    from agentrig._plugin_env import CORE_DISTRIBUTION, env_plugin_settings

    disabled, autoload = env_plugin_settings(environ)
    if not autoload:
        return frozenset()
    found = entry_points(group="agentrig.plugins")
    return frozenset(
        e.name
        for e in found
        if e.name not in disabled and (e.dist is None or e.dist.name != CORE_DISTRIBUTION)
    )


def _add_plugin_commands(
    subparsers: Subparsers, environ: Mapping[str, str], err: IO[str] | None
) -> None:
    candidates = _command_plugins(environ)
    if not candidates:
        return
    from agentrig.cli._commands import Commands
    from agentrig.cli._common import plugin_index
    from agentrig.errors import HookError
    from agentrig.kernel import HookDispatcher

    out = sys.stderr if err is None else err
    index = plugin_index(environ=environ)
    hooks = HookDispatcher()
    for name in index.autoload_names("plugins"):
        if name not in candidates:
            continue
        try:
            hooks.register(index.load("plugins", name), name)
        except HookError as exc:
            index.fail("plugins", name, str(exc))
            out.write(_not_loaded(name, exc))
        except Exception as exc:
            out.write(_not_loaded(name, exc))
    commands = Commands(subparsers.add_parser, taken=subparsers.choices)
    hooks.notify("register_commands", commands)
    for failure in hooks.failures():
        message = f"plugin {failure.plugin!r} could not add its commands: {failure.info.message}"
        out.write(warning_line(None, failure.info.code, message) + "\n")


def _not_loaded(name: str, exc: Exception) -> str:
    return warning_line(None, "plugin.load_failed", f"plugin {name!r} not loaded: {exc}") + "\n"


#: the commands that compose an agent runtime first (``open_agent_runtime`` resumes the
#: collector once it is composed)
_COMPOSING = ("run", "chat")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``agentrig`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments == ["--version"]:  # no plugin can change the answer: none is loaded
        print(version_text())
        return 0
    first = next((a for a in arguments if not a.startswith("-")), None)
    if argv is None and first in _COMPOSING:  # the program: see _collector
        _collector.pause()
    try:
        return _main(arguments, first)
    finally:
        _collector.resume()


def _main(arguments: list[str], first: str | None) -> int:
    # a core command (a cold `agentrig run`) needs no plugin and no other command's parser;
    # anything else (--help, a plugin's command, a mistake) is parsed with every command
    if first is not None and first in SUBCOMMANDS:
        parser = _build(plugin_commands=False, command=first)
    else:
        parser = build_parser()
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exc:  # --help, --version and usage errors: argparse chose the code
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    set_debug(args.debug)
    try:
        return handler(args)
    except BaseException as raised:  # one line per failure; the traceback only with --debug
        failure = _leaf(raised)
        if isinstance(failure, BrokenPipeError):  # e.g. `agentrig plugins | head`
            return 0
        if isinstance(failure, SystemExit | GeneratorExit) and failure is raised:
            raise
        show_traceback(raised)
        return _report(args.command, failure)


def _leaf(exc: BaseException) -> BaseException:
    """The one exception a group of one (a task group's failure) carries."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _report(command: str, exc: BaseException) -> int:
    """Print ``exc`` as ``agentrig COMMAND: error [code]: ...`` lines; return the exit code."""
    from agentrig.errors import AgentrigError, ConfigError

    prefix = f"agentrig {command}: error"
    if isinstance(exc, KeyboardInterrupt):
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if isinstance(exc, UsageError):
        print(f"{prefix} [{exc.code}]: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    if isinstance(exc, ConfigError) and exc.issues:  # one line per problem, at its key path
        source = f"{exc.source}: " if exc.source else ""
        for issue in exc.issues:
            print(f"{prefix} [{issue.code}]: {_one_line(f'{source}{issue}')}", file=sys.stderr)
        return EXIT_FAILURE
    if isinstance(exc, AgentrigError):  # a plugin command's failure: one line, no traceback
        print(f"{prefix} [{exc.code}]: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_FAILURE
    cause = exc.__context__ if isinstance(exc, SystemExit) else None
    shown = cause if isinstance(cause, Exception) else exc
    message = _one_line(str(shown)) or type(shown).__name__
    if isinstance(shown, OSError):  # the environment said no: a port in use, a full disk ...
        import errno

        name = errno.errorcode.get(shown.errno or 0, "error")
        print(f"{prefix} [os.{name}]: {message}", file=sys.stderr)
        return EXIT_FAILURE
    print(
        f"{prefix} [internal]: {type(shown).__name__}: {message} "
        "(a bug or an unexpected environment; rerun with --debug for the traceback)",
        file=sys.stderr,
    )
    return EXIT_FAILURE


def _one_line(text: str) -> str:
    return " ".join(text.split())
