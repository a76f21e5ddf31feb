"""The ``agentrig`` command.

``main(argv)`` parses the arguments, runs one subcommand and returns its exit code (it never
calls :func:`sys.exit`; the console-script wrapper does).  Exit codes follow the common
convention: ``0`` success, ``1`` the command ran and found a problem (an invalid config, a
failed plugin), ``2`` a usage error (unknown option, missing file), ``130`` interrupted.

Subcommands are modules listed in :data:`SUBCOMMANDS`; each exposes ``register(subparsers)``,
which adds its parser and sets ``handler`` -- a function ``(args) -> int``.  Adding one is an
import and a line::

    from agentrig.cli import _run
    SUBCOMMANDS = (..., _run)

Subcommand modules import nothing heavy at module level, so ``agentrig --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Protocol

from agentrig.cli import _chat, _config, _doctor, _plugins, _run
from agentrig.cli._common import (
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    Subparsers,
    UsageError,
    version_text,
)

__all__ = ["SUBCOMMANDS", "Subcommand", "build_parser", "main"]


class Subcommand(Protocol):
    """A module that contributes one ``agentrig <name>`` subcommand."""

    def register(self, subparsers: Subparsers) -> None:
        """Add the subcommand's parser; set ``handler=(args) -> int`` as its default."""
        ...


SUBCOMMANDS: tuple[Subcommand, ...] = (_run, _chat, _plugins, _config, _doctor)
"""The subcommands, in ``--help`` order."""

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand of :data:`SUBCOMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="agentrig",
        description="agentrig: list plugins, check compositions and diagnose an installation.",
        epilog="Run 'agentrig COMMAND --help' for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=version_text())
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command")
    for command in SUBCOMMANDS:
        command.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``agentrig`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # --help, --version and usage errors: argparse chose the code
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return handler(args)
    except UsageError as exc:
        code = f" [{exc.code}]" if exc.code else ""
        print(f"agentrig {args.command}: error{code}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `agentrig plugins | head`
        return 0
