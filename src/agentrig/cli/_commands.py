"""The payload of ``register_commands`` (:mod:`agentrig.cli._hookspecs`): how a plugin adds
``agentrig`` subcommands.

``handler(args) -> int`` runs the command and returns its exit code; an
:class:`~agentrig.errors.AgentrigError` it raises is shown as one ``error [code]: ...`` line.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import final

from agentrig.errors import DuplicateIdError

__all__ = ["CommandHandler", "Commands"]

CommandHandler = Callable[[argparse.Namespace], int]
"""Runs one subcommand with its parsed arguments; returns the exit code."""


@final
class Commands:
    """Adds subcommands to the ``agentrig`` parser; a name can be taken only once."""

    __slots__ = ("_add_parser", "_taken")

    def __init__(
        self, add_parser: Callable[..., argparse.ArgumentParser], taken: Iterable[str]
    ) -> None:
        self._add_parser = add_parser
        self._taken = set(taken)

    def add(
        self,
        name: str,
        *,
        help: str,
        handler: CommandHandler,
        description: str | None = None,
    ) -> argparse.ArgumentParser:
        """Add ``agentrig <name>``; returns its parser for the command's own arguments."""
        if name in self._taken:
            raise DuplicateIdError(
                f"command {name!r} already exists; a plugin cannot replace an agentrig command"
            )
        parser = self._add_parser(name, help=help, description=description or help)
        parser.set_defaults(handler=handler)
        self._taken.add(name)
        return parser
