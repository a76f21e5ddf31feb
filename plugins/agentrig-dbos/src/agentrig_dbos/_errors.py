"""Errors of the DBOS plugin (all derive from :class:`agentrig.errors.AgentrigError`).

::

    AgentrigError
     └── DurableError                  dbos.error             system
          ├── DurableBackendError      dbos.asyncio_only      user    (opened on trio)
          ├── DurableSetupError        dbos.setup             user    (not usable as configured)
          └── UnknownRunError          dbos.unknown_run       user    (no durable run by that id)
"""

from __future__ import annotations

from agentrig.errors import AgentrigError, Category

__all__ = ["DurableBackendError", "DurableError", "DurableSetupError", "UnknownRunError"]


class DurableError(AgentrigError):
    """A durable run could not be started, awaited or answered."""

    code = "dbos.error"
    category: Category = "system"


class DurableBackendError(DurableError):
    """Durable runs need asyncio: DBOS runs its workflows on an asyncio event loop."""

    code = "dbos.asyncio_only"
    category = "user"


class DurableSetupError(DurableError):
    """The composition cannot run durable runs as configured (names what to change)."""

    code = "dbos.setup"
    category = "user"


class UnknownRunError(DurableError):
    """No durable run has that id in the system database."""

    code = "dbos.unknown_run"
    category = "user"
