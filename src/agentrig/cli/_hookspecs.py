# mypy: disable-error-code="empty-body"
# (hook specifications are signatures with docstrings; pluggy never calls their bodies)
"""The command line's hook: ``register_commands``, fired while the ``agentrig`` parser is built.

Only the CLI fires it, so the CLI declares it.  This module reaches pluggy as a spec module of
every plugin manager through the core distribution's ``agentrig.seams`` entry point
``cli_hookspecs`` (:func:`agentrig.kernel._dispatch.spec_modules`), so a plugin implementing
the hook is accepted wherever it registers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig.kernel import Mode, declare_hook

if TYPE_CHECKING:
    from agentrig.cli._commands import Commands

__all__ = ["register_commands"]


@declare_hook(Mode.NOTIFY)
def register_commands(payload: Commands) -> None:
    """Add ``agentrig`` subcommands with ``payload.add(name, help=..., handler=...)``.

    Called when the command line is built, with the installed listener plugins loaded
    (the environment's plugin switches apply).  Notify: a failing plugin is reported on
    stderr and its commands are left out; the others still register.
    """
