"""The execution journal on PostgreSQL: one committed transaction per record.

A write is one ``INSERT`` in autocommit mode -- one statement, one transaction -- and returns
only after PostgreSQL committed it (with the server's default ``synchronous_commit = on``
that means it is on the server's disk), so a crash of the process leaves every confirmed
record and nothing half-written.  ``UNIQUE (run_id, kind,
key)`` makes a second write of the same record impossible, even from two processes.
Bodies are what :func:`agentrig.journal.dump_record` writes (their version first) and are
read through :func:`agentrig.journal.parse_record` (older versions migrated, newer refused).
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from agentrig.journal import (
    ExecutionRecord,
    JournalError,
    ModelIntent,
    ModelSettlement,
    RecordJournal,
    ToolIntent,
    ToolSettlement,
    dump_record,
    parse_record,
)
from agentrig_postgres._db import Database, ensure_schema, table

__all__ = ["PostgresJournal"]

Record = ExecutionRecord | ModelIntent | ModelSettlement | ToolIntent | ToolSettlement


class PostgresJournal(RecordJournal):
    """An execution journal in PostgreSQL (see the module docs)."""

    def __init__(self, dsn: str, *, schema: str = "public", connect_timeout: float = 10.0) -> None:
        super().__init__()
        self.schema = schema
        self._table = table(schema, "journal")
        self._db = Database(dsn, connect_timeout=connect_timeout)
        self._ready = False

    async def _conn(self) -> Database:
        if not self._ready:
            schema = self.schema
            try:
                await self._db.run(lambda connection: ensure_schema(connection, schema))
            except psycopg.Error as exc:
                await self._db.aclose()
                raise JournalError(f"cannot open the PostgreSQL journal: {exc}") from exc
            self._ready = True
        return self._db

    async def _append(self, record: Record) -> None:
        db = await self._conn()
        insert = sql.SQL("INSERT INTO {} (run_id, kind, key, body) VALUES (%s, %s, %s, %s)").format(
            self._table
        )
        params = (record.run_id, record.kind, record.key, dump_record(record))
        await db.execute(insert, params)

    async def _select(self, where: sql.SQL, params: tuple[str, ...]) -> list[Record]:
        db = await self._conn()
        query = sql.SQL("SELECT body FROM {} WHERE {} ORDER BY seq").format(self._table, where)
        rows = await db.fetch(query, params)
        return [parse_record(body) for (body,) in rows]

    async def _read(self, run_id: str) -> list[Record]:
        return await self._select(sql.SQL("run_id = %s"), (run_id,))

    async def _read_executions(self) -> list[ExecutionRecord]:
        records = await self._select(sql.SQL("kind = %s"), ("execution",))
        return [record for record in records if isinstance(record, ExecutionRecord)]

    async def _close(self) -> None:
        await self._db.aclose()

    def __repr__(self) -> str:
        return f"<PostgresJournal schema={self.schema}>"
