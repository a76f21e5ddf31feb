"""agentrig on PostgreSQL: a session store and an execution journal shared by processes.

``[session_stores.<id>] kind = "postgres"`` with ``options.dsn``; the journal is attached in
code (``attach_journal(PostgresJournal(dsn))``).  See ``docs/postgres.md``.
"""

from agentrig_postgres._journal import PostgresJournal
from agentrig_postgres._sessions import PostgresSessionStore, PostgresStoreOptions, factory

__all__ = ["PostgresJournal", "PostgresSessionStore", "PostgresStoreOptions", "factory"]
