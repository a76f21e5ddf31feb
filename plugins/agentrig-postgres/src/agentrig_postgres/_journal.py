"""The execution journal on PostgreSQL: one committed transaction per record.

A write is one ``INSERT`` in autocommit mode -- one statement, one transaction -- and returns
only after PostgreSQL committed it (with the server's default ``synchronous_commit = on``
that means it is on the server's disk), so a crash of the process leaves every confirmed
record and nothing half-written.  ``UNIQUE (run_id, kind,
key)`` makes a second write of the same record impossible, even from two processes.
Bodies are what :func:`agentrig.journal.dump_record` writes (their version first) and are
read through :func:`agentrig.journal.parse_record` (older versions migrated, newer refused).

A transient failure (the server restarting, the connection lost) is retried inside the
write or read that met it, for up to ``retry_for`` seconds, so a run outlives a database
restart.  A write whose reply was lost may have committed: the retry finds the record
already there and, when it is the same record, counts it as written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
from psycopg import sql

from agentrig.journal import (
    JOURNAL_RECORD_CODEC,
    ExecutionRecord,
    JournalError,
    JournalWriteError,
    ModelIntent,
    ModelSettlement,
    RecordJournal,
    ToolIntent,
    ToolSettlement,
    dump_record,
    parse_record,
)
from agentrig_postgres._aconn import AnyioConnection
from agentrig_postgres._db import (
    Database,
    ensure_schema,
    missing_database,
    one_line,
    table,
    where,
)

if TYPE_CHECKING:
    from agentrig.journal import RecordCodec
    from agentrig.session import MigrationReport

__all__ = ["PostgresJournal"]

Record = ExecutionRecord | ModelIntent | ModelSettlement | ToolIntent | ToolSettlement


class PostgresJournal(RecordJournal):
    """An execution journal in PostgreSQL (see the module docs)."""

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "public",
        connect_timeout: float = 10.0,
        retry_for: float = 60.0,
    ) -> None:
        super().__init__()
        self.schema = schema
        self._table = table(schema, "journal")
        self._connect_timeout = connect_timeout
        self._db = Database(dsn, connect_timeout=connect_timeout, retry_for=retry_for)
        self._ready = False

    async def _conn(self) -> Database:
        if not self._ready:
            schema = self.schema
            dsn = self._db.dsn
            try:
                await self._db.run(lambda connection: ensure_schema(connection, schema))
            except psycopg.Error as exc:
                await self._db.aclose()
                why = await missing_database(dsn, exc, self._connect_timeout)
                if why is not None:
                    raise JournalError(f"cannot open the journal in {where(dsn)}: {why}") from exc
                try:  # created it: once more
                    await self._db.run(lambda connection: ensure_schema(connection, schema))
                except psycopg.Error as again:
                    raise JournalError(
                        f"cannot open the journal in {where(dsn)}: {one_line(again)}"
                    ) from again
            self._ready = True
        return self._db

    async def _append(self, record: Record) -> None:
        db = await self._conn()
        insert = sql.SQL(
            "INSERT INTO {} (run_id, kind, key, body) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (run_id, kind, key) DO NOTHING RETURNING 1"
        ).format(self._table)
        existing = sql.SQL("SELECT body FROM {} WHERE run_id = %s AND kind = %s AND key = %s")
        body = dump_record(record)
        key = (record.run_id, record.kind, record.key)

        async def work(connection: AnyioConnection) -> None:
            cursor = await connection.execute(insert, (*key, body))
            if await cursor.fetchone() is not None:
                return
            cursor = await connection.execute(existing.format(self._table), key)
            found = await cursor.fetchone()
            if found is None or found[0] != body:  # another process wrote another record
                raise JournalWriteError(
                    f"journal already holds a different {record.kind} {record.run_id}/"
                    f"{record.key} (written by another process)",
                    record=f"{record.kind}:{record.run_id}/{record.key}",
                )
            # the same record: a retry of a write whose reply the lost connection dropped

        try:
            await db.run(work)
        except psycopg.Error as exc:
            raise JournalWriteError(
                f"journal write of {record.kind} {record.run_id}/{record.key} to "
                f"{where(db.dsn)} failed: {one_line(exc)}",
                record=f"{record.kind}:{record.run_id}/{record.key}",
                cause=exc,
            ) from exc

    async def _select(self, condition: sql.SQL, params: tuple[str, ...]) -> list[Record]:
        db = await self._conn()
        query = sql.SQL("SELECT body FROM {} WHERE {} ORDER BY seq").format(self._table, condition)
        try:
            rows = await db.fetch(query, params)
        except psycopg.Error as exc:
            raise JournalError(
                f"cannot read the journal in {where(db.dsn)}: {one_line(exc)}"
            ) from exc
        return [parse_record(body) for (body,) in rows]

    async def _read(self, run_id: str) -> list[Record]:
        return await self._select(sql.SQL("run_id = %s"), (run_id,))

    async def _read_executions(self) -> list[ExecutionRecord]:
        records = await self._select(sql.SQL("kind = %s"), ("execution",))
        return [record for record in records if isinstance(record, ExecutionRecord)]

    # ---- agentrig migrate (agentrig.journal.MigratableJournal) ------------------------------
    @property
    def table(self) -> sql.Identifier:
        """The journal's table (schema-qualified)."""
        return self._table

    async def database(self) -> Database:
        """The journal's connection, its tables created."""
        return await self._conn()

    async def migration_report(
        self, *, codec: RecordCodec = JOURNAL_RECORD_CODEC
    ) -> MigrationReport:
        """How many stored records are older than the current version, per run."""
        from agentrig_postgres._journal_migrate import journal_migration_report

        return await journal_migration_report(self, codec)

    async def migrate(
        self, *, backup: Path | None = None, codec: RecordCodec = JOURNAL_RECORD_CODEC
    ) -> MigrationReport:
        """Rewrite older records at the current version in one transaction, copying each
        changed row to ``agentrig_journal_pre_migrate`` first (``backup`` must be None: the
        copy is that table).  ``codec`` is how records are stored (a test passes a later one)."""
        from agentrig_postgres._journal_migrate import journal_migrate

        return await journal_migrate(self, backup, codec)

    async def _close(self) -> None:
        await self._db.aclose()

    def __repr__(self) -> str:
        return f"<PostgresJournal schema={self.schema}>"
