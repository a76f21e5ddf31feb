"""One PostgreSQL connection shared by tasks, and the tables this plugin owns.

The connection is psycopg's async connection on anyio (:mod:`agentrig_postgres._aconn`), so
the stores run on asyncio and trio without worker threads.  Calls take the connection in
the order they were made (anyio's lock is first-in, first-out, and it is the first thing a
call waits for), so two tasks appending to one session commit in the order they called.  A
call in flight is shielded from cancellation: it finishes, so a commit is never left
half-sent, and the caller's cancellation is delivered right after it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio
from psycopg import sql

from agentrig_postgres._aconn import AnyioConnection

__all__ = ["CHANNEL", "Database", "ensure_schema", "table"]

_T = TypeVar("_T")

#: the NOTIFY channel every session append announces itself on (payload: schema, session
#: id and last seq, space-separated)
CHANNEL = "agentrig_session_events"

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


async def ensure_schema(connection: AnyioConnection, schema: str) -> None:
    """Create this plugin's tables in ``schema`` when missing (safe across processes)."""
    names = {
        "events": table(schema, "session_events"),
        "journal": table(schema, "journal"),
        "journal_run": sql.Identifier("agentrig_journal_run"),
    }
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        await connection.execute(
            sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))
        )
        for statement in _TABLES:
            await connection.execute(sql.SQL(statement).format(**names))


class Database:
    """A connection opened lazily by DSN, used by one call at a time (see the module docs)."""

    def __init__(self, dsn: str, *, connect_timeout: float) -> None:
        self.dsn = dsn
        self._connect_timeout = connect_timeout
        self._connection: AnyioConnection | None = None
        self._lock = anyio.Lock(fast_acquire=True)

    @property
    def connected(self) -> bool:
        """Whether a connection is open (a broken one counts as closed)."""
        return self._connection is not None and not self._connection.closed

    async def connect(self) -> AnyioConnection:
        """A new connection of this database's DSN (autocommit; the caller closes it)."""
        return await AnyioConnection.open(self.dsn, connect_timeout=self._connect_timeout)

    async def run(self, work: Callable[[AnyioConnection], Awaitable[_T]]) -> _T:
        """``await work(connection)`` holding the connection, shielded (see the module docs)."""
        with anyio.CancelScope(shield=True):
            async with self._lock:
                if self._connection is None or self._connection.closed:
                    self._connection = await self.connect()
                result = await work(self._connection)
        return result

    async def fetch(self, query: sql.SQL | sql.Composed, params: Sequence[Any] = ()) -> list[Any]:
        """All rows of one query."""

        async def work(connection: AnyioConnection) -> list[Any]:
            cursor = await connection.execute(query, params)
            return await cursor.fetchall()

        return await self.run(work)

    async def execute(self, query: sql.SQL | sql.Composed, params: Sequence[Any] = ()) -> None:
        """Run one statement (in autocommit mode: its own transaction)."""

        async def work(connection: AnyioConnection) -> None:
            await connection.execute(query, params)

        await self.run(work)

    async def aclose(self) -> None:
        """Close the connection (a later call reconnects)."""
        with anyio.CancelScope(shield=True):
            async with self._lock:
                if self._connection is not None:
                    connection, self._connection = self._connection, None
                    await connection.close()
