"""agentrig on PostgreSQL: a session store and an execution journal shared by processes.

``[session_stores.<id>] kind = "postgres"`` with ``options.dsn``; the journal is attached in
code (``attach_journal(PostgresJournal(dsn))``).  The store announces each committed batch, so
``PostgresSessionStore.follow`` / ``changes`` follow a session without polling.  Everything
runs on asyncio and trio (psycopg's async connection, waiting through anyio).  See
``docs/postgres.md``.
"""

from agentrig_postgres._db import CHANNEL
from agentrig_postgres._journal import PostgresJournal
from agentrig_postgres._sessions import (
    PostgresSessionStore,
    PostgresStoreOptions,
    SessionChanges,
    factory,
)

__all__ = [
    "CHANNEL",
    "PostgresJournal",
    "PostgresSessionStore",
    "PostgresStoreOptions",
    "SessionChanges",
    "factory",
]
