"""One PostgreSQL connection shared by tasks, and the tables this plugin owns.

The connection is psycopg's async connection on anyio (:mod:`agentrig_postgres._aconn`), so
the stores run on asyncio and trio without worker threads.  Calls take the connection in
the order they were made (anyio's lock is first-in, first-out, and it is the first thing a
call waits for), so two tasks appending to one session commit in the order they called.  A
call in flight is shielded from cancellation: it finishes, so a commit is never left
half-sent, and the caller's cancellation is delivered right after it.

A call that meets a transient failure (:mod:`agentrig_postgres._retry`: the server
restarting, the connection lost, a serialization failure) reconnects and runs its work
again, pausing between attempts, for up to ``retry_for`` seconds; the pauses can be
cancelled.  Until a database was reached once, a server that does not answer is waited
for at most ``connect_timeout`` seconds: a wrong address fails soon, a restart is waited
out.  Work is therefore written to be run again: reads are, and writes check what a lost
reply may already have committed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio
import psycopg
from psycopg import sql

from agentrig_postgres._aconn import AnyioConnection
from agentrig_postgres._retry import Backoff, is_transient

__all__ = [
    "CHANNEL",
    "Database",
    "DatabaseUnavailable",
    "ensure_schema",
    "missing_database",
    "one_line",
    "table",
    "where",
]

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


def one_line(exc: BaseException) -> str:
    """A database error as one line (libpq's messages run over several)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def where(dsn: str) -> str:
    """The database a DSN names, as a message may show it (no password)."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.Error:
        return "the configured database"
    host = info.get("host") or "localhost"
    return f"database {info.get('dbname') or '?'} on {host}:{info.get('port') or 5432}"


def _missing(exc: BaseException) -> bool:
    text = str(exc)
    return "database" in text and "does not exist" in text


async def missing_database(dsn: str, exc: BaseException, connect_timeout: float) -> str | None:
    """After ``exc``: when it says the DSN's database does not exist, create it (as DBOS
    creates its own) and return None -- or, when the role may not, a sentence saying how.
    Any other failure: the failure, as one line."""
    if not _missing(exc):
        return one_line(exc)
    info = psycopg.conninfo.conninfo_to_dict(dsn)
    name = str(info.get("dbname") or "")
    maintenance = psycopg.conninfo.make_conninfo(dsn, dbname="postgres")
    try:
        connection = await AnyioConnection.open(maintenance, connect_timeout=connect_timeout)
    except psycopg.Error as failed:
        reason = one_line(failed)
    else:
        try:
            await connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            return None
        except psycopg.errors.DuplicateDatabase:
            return None  # another process created it first
        except psycopg.Error as failed:
            reason = one_line(failed)
        finally:
            await connection.close()
    user = info.get("user") or "the connecting role"
    return (
        f"{where(dsn)} does not exist and could not be created ({reason}); create it "
        f"(createdb -O {user} {name}) or let {user} create databases (CREATEDB)"
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


class DatabaseUnavailable(psycopg.OperationalError):
    """A transient failure that did not pass within the call's ``retry_for`` seconds."""


class Database:
    """A connection opened lazily by DSN, used by one call at a time (see the module docs).

    ``on_connect`` runs on every new connection before any work (a session writer takes
    its lock there again after a reconnect); ``reached`` says the server answered before
    (through another connection of the same store).
    """

    def __init__(
        self,
        dsn: str,
        *,
        connect_timeout: float,
        retry_for: float = 0.0,
        on_connect: Callable[[AnyioConnection], Awaitable[None]] | None = None,
        reached: bool = False,
    ) -> None:
        self.dsn = dsn
        self.retry_for = retry_for
        self._connect_timeout = connect_timeout
        self._on_connect = on_connect
        #: whether a connection of this database ever succeeded
        self.reached = reached
        self._connection: AnyioConnection | None = None
        self._lock = anyio.Lock(fast_acquire=True)
        #: how many times a call of this database reconnected after a transient failure
        self.retries = 0

    @property
    def connected(self) -> bool:
        """Whether a connection is open (a broken one counts as closed)."""
        return self._connection is not None and not self._connection.closed

    async def connect(self) -> AnyioConnection:
        """A new connection of this database's DSN (autocommit; the caller closes it)."""
        return await AnyioConnection.open(self.dsn, connect_timeout=self._connect_timeout)

    async def run(self, work: Callable[[AnyioConnection], Awaitable[_T]]) -> _T:
        """``await work(connection)`` holding the connection, shielded, again after a
        transient failure (see the module docs)."""
        with anyio.CancelScope(shield=True):
            await self._lock.acquire()  # shielded: a call made is carried out (module docs)
        try:
            retry_for = (
                self.retry_for if self.reached else min(self.retry_for, self._connect_timeout)
            )
            backoff = Backoff(retry_for)
            while True:
                try:
                    with anyio.CancelScope(shield=True):
                        if self._connection is None or self._connection.closed:
                            self._connection = None
                            connection = await self.connect()
                            self.reached = True
                            try:
                                if self._on_connect is not None:
                                    await self._on_connect(connection)
                            except BaseException:
                                await connection.close()
                                raise
                            self._connection = connection
                        return await work(self._connection)
                except psycopg.Error as exc:
                    if not is_transient(exc):
                        raise
                    await self._drop()
                    pause = backoff.next_pause(anyio.current_time())
                    if pause is None:
                        if retry_for <= 0:
                            raise
                        raise DatabaseUnavailable(
                            f"{one_line(exc)} (still failing after {retry_for:g} s of retries)"
                        ) from exc
                    self.retries += 1
                    wait: float = pause
                await anyio.sleep(wait)  # cancellable: the failed attempt left nothing open
        finally:
            self._lock.release()

    async def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None and not connection.closed:
            with anyio.CancelScope(shield=True):
                with contextlib.suppress(psycopg.Error, OSError):
                    await connection.close()

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
