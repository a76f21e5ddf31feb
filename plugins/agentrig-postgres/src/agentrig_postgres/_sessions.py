"""The ``postgres`` session store: session logs in one table, shared by processes and machines.

* Each ``append`` batch is one transaction: a crash (of the process, the connection or the
  server) leaves the whole batch or none of it -- never a torn record.
* One writer per session across processes and machines: a writer holds a session-scoped
  advisory lock on its own connection for as long as it is open.  PostgreSQL releases the
  lock when that connection ends, so a killed process never leaves a stale lock behind (and
  there are no lock files at all).
* A failed append raises, and that writer refuses every later append until the session is
  opened again -- its lock may be gone with its connection, so nothing more is confirmed on
  its behalf.
* Bodies are stored as the exact JSON text agentrig wrote, so events of plugin variants no
  installed plugin knows are written back unchanged.
* ``load`` reports rows it cannot read and gaps in the ``seq`` numbering as damage.
* Appends are pushed: each batch is one statement that inserts the rows and sends a
  ``NOTIFY`` in the same transaction, so :meth:`PostgresSessionStore.follow` (and
  :meth:`PostgresSessionStore.changes`) wake up when a batch commits -- in any process --
  instead of polling.
* Tasks sharing one writer commit in the order they called ``append`` (the connection is
  taken first-in, first-out), so ``seq`` grows in commit order.
* A transient failure (the server restarting, the connection lost) is retried inside the
  call that met it for up to ``retry_for`` seconds.  A writer whose connection was lost
  takes the session's lock again on its new connection (refused with
  ``session.writer_conflict`` if another writer took it meanwhile) and, before sending a
  batch again, checks whether the lost reply was a commit: the same rows already stored
  count as written.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import psycopg
from psycopg import sql
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentrig.ids import session_id as check_session_id
from agentrig.plugin import with_options
from agentrig.session import (
    BrokenWriterError,
    LoadReport,
    MigrationReport,
    NotASessionLogError,
    SessionEvent,
    SessionStoreError,
    WriterConflictError,
    dump_event,
    parse_event,
    sequence_problems,
)
from agentrig_postgres._aconn import AnyioConnection
from agentrig_postgres._db import (
    CHANNEL,
    Database,
    ensure_schema,
    missing_database,
    one_line,
    table,
    where,
)

__all__ = ["PostgresSessionStore", "PostgresStoreOptions", "SessionChanges", "factory"]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


class PostgresStoreOptions(BaseModel):
    """``[session_stores.<id>] kind = "postgres"`` options."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    #: a libpq connection string or URI without a password (``postgresql://user@host/db``);
    #: libpq reads the password from its own sources (``~/.pgpass``, ``PGPASSFILE``)
    dsn: str
    #: the schema that holds the ``agentrig_*`` tables (created when missing)
    db_schema: str = Field("public", alias="schema", pattern=_IDENTIFIER.pattern)
    #: seconds to wait for a connection
    connect_timeout: float = Field(10.0, gt=0)
    #: seconds a transient failure (server restarting, connection lost, serialization
    #: failure, deadlock) is retried by the call that met it before it fails; 0: never
    retry_for: float = Field(60.0, ge=0)


async def _nothing(connection: AnyioConnection) -> None:
    """No work: connecting (and ``on_connect``) is the point."""


def _lock_key(schema: str, session_id: str) -> str:
    return f"agentrig.session:{schema}:{session_id}"


class _PostgresWriter:
    """The single writer of one session: its own connection, holding the session's lock."""

    def __init__(self, store: PostgresSessionStore, session_id: str, db: Database) -> None:
        self._store = store
        self._session_id = session_id
        self._db: Database | None = db
        self._broken: str | None = None

    async def append(self, events: Sequence[SessionEvent]) -> None:
        db = self._db
        if db is None:
            raise SessionStoreError("this session writer is closed")
        if self._broken is not None:
            raise BrokenWriterError(
                f"session {self._session_id!r}: an earlier append failed ({self._broken}); "
                "this writer appends nothing more -- open the session again to continue"
            )
        if not events:
            return
        seqs = [event.seq for event in events]
        bodies = [dump_event(event) for event in events]
        payload = f"{self._store.schema} {self._session_id} {seqs[-1]}"
        params = (self._session_id, seqs, bodies, CHANNEL, payload)
        attempts = 0

        async def work(connection: AnyioConnection) -> None:
            nonlocal attempts
            attempts += 1
            if attempts > 1 and await self._stored(connection, seqs, bodies):
                return  # the lost reply was a commit
            await connection.execute(self._store.append_statement, params)

        try:
            # the first await: the connection is taken in the order appends were called
            await db.run(work)
        except SessionStoreError as exc:  # the lock went to another writer meanwhile
            self._broken = str(exc)
            raise
        except psycopg.Error as exc:
            self._broken = one_line(exc)
            # a refused statement stored nothing; a lost connection may have lost the reply
            # to a commit, so only a load can tell
            fate = (
                "may or may not be stored (the connection failed; load the session to see)"
                if isinstance(exc, psycopg.OperationalError)
                else "was not stored"
            )
            raise SessionStoreError(
                f"cannot append to session {self._session_id!r} in {self._store.where()}: "
                f"{self._broken}; the batch of "
                f"{len(events)} event(s) {fate}"
            ) from exc
        except BaseException:
            if attempts:  # cancelled while waiting to send it again: its fate is unknown
                self._broken = "cancelled while waiting for the database to come back"
            raise

    async def _stored(
        self, connection: AnyioConnection, seqs: list[int], bodies: list[str]
    ) -> bool:
        """Whether a batch sent before the connection was lost is stored (whole: one
        transaction); rows of another body under its numbers are another writer's."""
        query = sql.SQL(
            "SELECT seq, body FROM {} WHERE session_id = %s AND seq = ANY(%s::bigint[])"
        ).format(self._store.events_table)
        cursor = await connection.execute(query, (self._session_id, seqs))
        found: dict[int, str] = dict(await cursor.fetchall())
        if not found:
            return False
        if found != dict(zip(seqs, bodies, strict=True)):
            raise SessionStoreError(
                f"session {self._session_id!r}: events {min(found)}-{max(found)} were "
                "written by another writer while this one reconnected"
            )
        return True

    async def aclose(self) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            # Release the lock on the server before closing: a closed connection releases it
            # too, but only once the server has noticed, so the next writer could be refused.
            if db.connected:
                with contextlib.suppress(psycopg.Error):
                    await db.execute(sql.SQL("SELECT pg_advisory_unlock_all()"))
            await db.aclose()


class SessionChanges:
    """Commits to one session's log, announced by PostgreSQL (``LISTEN``/``NOTIFY``)."""

    def __init__(self, connection: AnyioConnection, schema: str, session_id: str) -> None:
        self._connection = connection
        self._prefix = f"{schema} {session_id} "
        self.session_id = session_id
        #: how many commits to this session were announced so far
        self.announced = 0
        #: the last ``seq`` an announced commit wrote (0 before the first)
        self.last_seq = 0

    async def next(self) -> int:
        """Wait for the next commit to this session; the last ``seq`` it wrote.

        Bound the wait with ``anyio.move_on_after`` / ``fail_after``.
        """
        try:
            while True:
                found = False
                async with contextlib.aclosing(self._connection.notifies(stop_after=1)) as notes:
                    async for note in notes:
                        if note.payload.startswith(self._prefix):
                            found = True
                            self.announced += 1
                            self.last_seq = max(self.last_seq, int(note.payload.rsplit(" ", 1)[1]))
                if found:
                    return self.last_seq
        except psycopg.Error as exc:
            raise SessionStoreError(f"following session {self.session_id!r} failed: {exc}") from exc


class PostgresSessionStore:
    """Session logs in PostgreSQL (see the module docs)."""

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "public",
        connect_timeout: float = 10.0,
        retry_for: float = 60.0,
    ) -> None:
        if not _IDENTIFIER.match(schema):
            raise SessionStoreError(f"schema {schema!r} is not a plain SQL identifier")
        self.dsn = dsn
        self.schema = schema
        self.connect_timeout = connect_timeout
        self.retry_for = retry_for
        self.events_table = table(schema, "session_events")
        #: one batch: its rows and its NOTIFY, one statement and so one transaction
        self.append_statement = sql.SQL(
            "WITH written AS (INSERT INTO {} (session_id, seq, body) "
            "SELECT %s, batch.seq, batch.body FROM unnest(%s::bigint[], %s::text[]) "
            "AS batch(seq, body) RETURNING 1) "
            "SELECT pg_notify(%s, %s) FROM (SELECT count(*) FROM written) AS done"
        ).format(self.events_table)
        self._db = Database(dsn, connect_timeout=connect_timeout, retry_for=retry_for)
        self._ready = False

    def _where(self) -> str:
        """The database as an error message may name it (no password)."""
        return where(self.dsn)

    async def _prepared(self, db: Database) -> None:
        schema = self.schema
        await db.run(lambda connection: ensure_schema(connection, schema))

    async def _ensure(self) -> Database:
        if not self._ready:
            try:
                await self._prepared(self._db)
            except psycopg.Error as exc:
                await self._db.aclose()
                why = await missing_database(self.dsn, exc, self.connect_timeout)
                if why is not None:
                    raise SessionStoreError(f"cannot use {self._where()}: {why}") from exc
                try:
                    await self._prepared(self._db)  # created it: once more
                except psycopg.Error as again:
                    raise SessionStoreError(
                        f"cannot use {self._where()}: {one_line(again)}"
                    ) from again
            self._ready = True
        return self._db

    async def open_writer(self, session_id: str) -> _PostgresWriter:
        check_session_id(session_id)
        await self._ensure()
        key = _lock_key(self.schema, session_id)

        async def take_lock(connection: AnyioConnection) -> None:
            # on every connection of the writer: after a reconnect the lock is taken again
            lock = "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))"
            row = await (await connection.execute(lock, (key,))).fetchone()
            if row is None or not row[0]:
                raise WriterConflictError(
                    f"session {session_id!r} in {self._where()} already has a writer "
                    "(another process or runtime holds it); close that one first"
                )

        db = Database(
            self.dsn,
            connect_timeout=self.connect_timeout,
            retry_for=self.retry_for,
            on_connect=take_lock,
            reached=True,  # the store's own connection reached the server
        )
        try:
            await db.run(_nothing)
        except psycopg.Error as exc:
            await db.aclose()
            raise SessionStoreError(
                f"cannot open session {session_id!r} in {self._where()}: {one_line(exc)}"
            ) from exc
        except BaseException:
            await db.aclose()
            raise
        return _PostgresWriter(self, session_id, db)

    async def _rows(self, session_id: str, after_seq: int = 0) -> list[Any]:
        db = await self._ensure()
        query = sql.SQL(
            "SELECT seq, body FROM {} WHERE session_id = %s AND seq > %s ORDER BY seq"
        ).format(self.events_table)
        try:
            return await db.fetch(query, (session_id, after_seq))
        except psycopg.Error as exc:
            raise SessionStoreError(
                f"cannot read session {session_id!r} in {self._where()}: {one_line(exc)}"
            ) from exc

    async def load(self, session_id: str) -> LoadReport:
        check_session_id(session_id)
        rows = await self._rows(session_id)
        if not rows:
            raise SessionStoreError(f"no stored session {session_id!r} in {self._where()}")
        events: list[SessionEvent] = []
        problems: list[str] = []
        for seq, body in rows:
            try:
                events.append(parse_event(body))
            except (ValidationError, ValueError) as exc:
                problems.append(f"event {seq} unreadable: {str(exc).splitlines()[0]}")
        if not events:
            raise NotASessionLogError(
                f"session {session_id!r} in {self._where()} holds no readable event "
                f"({problems[-1]}); delete its rows or use another session id"
            )
        problems.extend(sequence_problems(events))
        return LoadReport(session_id, tuple(events), bool(problems), "; ".join(problems) or None)

    @contextlib.asynccontextmanager
    async def changes(self, session_id: str) -> AsyncIterator[SessionChanges]:
        """Listen for commits to ``session_id`` (from any process) while the block runs.

        Appends committed after the block started are announced; read the log after
        entering it, then :meth:`SessionChanges.next` wakes on every later commit.
        """
        check_session_id(session_id)
        await self._ensure()
        try:
            with anyio.CancelScope(shield=True):
                connection = await self._db.connect()
                try:
                    await connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
                except BaseException:
                    await connection.close()
                    raise
        except psycopg.Error as exc:
            raise SessionStoreError(
                f"cannot follow session {session_id!r} in {self._where()}: {exc}"
            ) from exc
        try:
            yield SessionChanges(connection, self.schema, session_id)
        finally:
            with anyio.CancelScope(shield=True):
                await connection.close()

    async def follow(
        self, session_id: str, after_seq: int = 0
    ) -> AsyncGenerator[SessionEvent, None]:
        """Every event of ``session_id`` after ``after_seq``, then each as it commits.

        Never ends by itself: the caller stops iterating (or is cancelled).  Nothing polls --
        PostgreSQL's ``NOTIFY`` wakes the follower when a batch commits.
        """
        async with self.changes(session_id) as changes:
            while True:
                for seq, body in await self._rows(session_id, after_seq):
                    try:
                        event = parse_event(body)
                    except (ValidationError, ValueError) as exc:
                        raise SessionStoreError(
                            f"session {session_id!r}: event {seq} is unreadable "
                            f"({str(exc).splitlines()[0]})"
                        ) from exc
                    yield event
                    after_seq = seq
                await changes.next()

    async def exists(self, session_id: str) -> bool:
        db = await self._ensure()
        query = sql.SQL("SELECT 1 FROM {} WHERE session_id = %s LIMIT 1").format(self.events_table)
        return bool(await db.fetch(query, (session_id,)))

    # ---- agentrig migrate (agentrig.session.MigratableStore) -----------------------------
    async def database(self) -> Database:
        """The store's shared connection, its tables created."""
        return await self._ensure()

    def where(self) -> str:
        """The database as a message may name it (no password)."""
        return self._where()

    def lock_key(self, session_id: str) -> str:
        """The advisory-lock key a writer of ``session_id`` holds."""
        return _lock_key(self.schema, session_id)

    async def migration_report(self) -> MigrationReport:
        """How many stored events are older than the current version, per session."""
        from agentrig_postgres._migrate import postgres_migration_report

        return await postgres_migration_report(self)

    async def migrate(self, *, backup: Path | None = None) -> MigrationReport:
        """Rewrite older events at the current version in one transaction (changed rows are
        copied to ``agentrig_session_events_pre_migrate`` first; ``backup`` is refused)."""
        from agentrig_postgres._migrate import postgres_migrate

        return await postgres_migrate(self, backup)

    async def list_sessions(self) -> tuple[str, ...]:
        db = await self._ensure()
        query = sql.SQL("SELECT DISTINCT session_id FROM {} ORDER BY session_id").format(
            self.events_table
        )
        return tuple(str(row[0]) for row in await db.fetch(query))

    async def aclose(self) -> None:
        await self._db.aclose()


@with_options(PostgresStoreOptions)
def factory(spec: dict[str, Any]) -> PostgresSessionStore:
    """Entry point ``postgres`` of ``agentrig.session_stores``."""
    options = PostgresStoreOptions.model_validate(spec.get("options", {}))
    return PostgresSessionStore(
        options.dsn,
        schema=options.db_schema,
        connect_timeout=options.connect_timeout,
        retry_for=options.retry_for,
    )
