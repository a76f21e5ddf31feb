"""One PostgreSQL connection used from worker threads, and the tables this plugin owns.

psycopg's async API runs on asyncio only, while agentrig runs on asyncio *and* trio (anyio),
so every call goes through psycopg's synchronous API in a worker thread
(``anyio.to_thread``), one call at a time per connection.  A call in flight is not abandoned
when the caller is cancelled: the thread finishes, so a commit is never left half-awaited.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import anyio.to_thread
import psycopg
from psycopg import sql

__all__ = ["Database", "ensure_schema", "table"]

_T = TypeVar("_T")

#: advisory-lock key serialising schema creation across processes (``CREATE TABLE IF NOT
#: EXISTS`` races on the catalog when two processes run it at once)
_SCHEMA_LOCK = 0x4147_5247_0001

_TABLES = (
    """CREATE TABLE IF NOT EXISTS {events} (
        session_id text NOT NULL,
        seq bigint NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (session_id, seq)
    )""",
    """CREATE TABLE IF NOT EXISTS {journal} (
        seq bigserial PRIMARY KEY,
        run_id text NOT NULL,
        kind text NOT NULL,
        key text NOT NULL,
        body text NOT NULL,
        UNIQUE (run_id, kind, key)
    )""",
    "CREATE INDEX IF NOT EXISTS {journal_run} ON {journal} (run_id, seq)",
)


def table(schema: str, name: str) -> sql.Identifier:
    """``"schema"."agentrig_<name>"``, quoted."""
    return sql.Identifier(schema, f"agentrig_{name}")


def ensure_schema(connection: psycopg.Connection[Any], schema: str) -> None:
    """Create this plugin's tables in ``schema`` when missing (safe across processes)."""
    names = {
        "events": table(schema, "session_events"),
        "journal": table(schema, "journal"),
        "journal_run": sql.Identifier("agentrig_journal_run"),
    }
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        connection.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        for statement in _TABLES:
            connection.execute(sql.SQL(statement).format(**names))


class Database:
    """A connection opened lazily by DSN, used by one worker thread at a time."""

    def __init__(self, dsn: str, *, connect_timeout: float) -> None:
        self.dsn = dsn
        self._connect_timeout = connect_timeout
        self._connection: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()

    def connect(self) -> psycopg.Connection[Any]:
        """The open connection (opened on first use; autocommit, explicit transactions)."""
        if self._connection is None or self._connection.closed:
            self._connection = psycopg.connect(
                self.dsn, autocommit=True, connect_timeout=max(1, round(self._connect_timeout))
            )
        return self._connection

    async def run(self, work: Callable[[psycopg.Connection[Any]], _T]) -> _T:
        """Run ``work(connection)`` in a worker thread, holding this connection's lock."""

        def call() -> _T:
            with self._lock:
                return work(self.connect())

        return await anyio.to_thread.run_sync(call)

    async def fetch(self, query: sql.SQL | sql.Composed, params: Sequence[Any] = ()) -> list[Any]:
        """All rows of one query."""

        def work(connection: psycopg.Connection[Any]) -> list[Any]:
            return connection.execute(query, params).fetchall()

        return await self.run(work)

    def drop(self) -> None:
        """Close the connection (the next use reconnects)."""
        if self._connection is not None:
            connection, self._connection = self._connection, None
            connection.close()

    async def aclose(self) -> None:
        await anyio.to_thread.run_sync(self._close_locked)

    def _close_locked(self) -> None:
        with self._lock:
            self.drop()
