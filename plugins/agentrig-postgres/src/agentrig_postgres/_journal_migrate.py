"""``agentrig migrate`` for the PostgreSQL journal: one transaction, a copy table.

Every older record is rewritten at the current version in one transaction that first
copies each row it changes into ``agentrig_journal_pre_migrate`` (same columns; a row an
earlier, interrupted run already copied is kept).  A crash, a lost connection or a refusal
rolls everything back (PostgreSQL ends a transaction whose client vanished); running again
completes it.  Writers appending meanwhile only insert new rows, which are current.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

from agentrig.journal import JournalError, journal_report, rewritten_record
from agentrig.session import MigrationReport, refuse_newer
from agentrig_postgres._aconn import AnyioConnection
from agentrig_postgres._db import one_line, table, where

if TYPE_CHECKING:
    from agentrig.journal import RecordCodec
    from agentrig_postgres._journal import PostgresJournal

__all__ = ["JOURNAL_BACKUP_TABLE", "journal_migrate", "journal_migration_report"]

#: where the rows a migration changed are copied (in the journal's schema)
JOURNAL_BACKUP_TABLE = "journal_pre_migrate"


async def journal_migration_report(journal: PostgresJournal, codec: RecordCodec) -> MigrationReport:
    db = await journal.database()
    query = sql.SQL("SELECT run_id, body FROM {} ORDER BY seq").format(journal.table)
    try:
        rows: list[Any] = await db.fetch(query)
    except psycopg.Error as exc:
        raise JournalError(f"cannot read the journal in {where(db.dsn)}: {one_line(exc)}") from exc
    return journal_report(((run_id, body) for run_id, body in rows), codec)


async def _rewrite(
    journal: PostgresJournal, connection: AnyioConnection, codec: RecordCodec
) -> None:
    backup = table(journal.schema, JOURNAL_BACKUP_TABLE)
    async with connection.transaction():
        await connection.execute(
            sql.SQL("CREATE TABLE IF NOT EXISTS {} (LIKE {} INCLUDING ALL)").format(
                backup, journal.table
            )
        )
        cursor = await connection.execute(
            sql.SQL("SELECT seq, run_id, kind, key, body FROM {} ORDER BY seq").format(
                journal.table
            )
        )
        for seq, run_id, kind, key, body in await cursor.fetchall():
            new = rewritten_record(body, codec)
            if new is None:
                continue
            await connection.execute(
                sql.SQL(
                    "INSERT INTO {} (seq, run_id, kind, key, body) VALUES (%s, %s, %s, %s, %s) "
                    "ON CONFLICT DO NOTHING"
                ).format(backup),
                (seq, run_id, kind, key, body),
            )
            await connection.execute(
                sql.SQL("UPDATE {} SET body = %s WHERE seq = %s").format(journal.table),
                (new, seq),
            )


async def journal_migrate(
    journal: PostgresJournal, backup: Path | None, codec: RecordCodec
) -> MigrationReport:
    db = await journal.database()
    if backup is not None:
        raise JournalError(
            f"the PostgreSQL journal keeps its copy in the table agentrig_{JOURNAL_BACKUP_TABLE} "
            f"of schema {journal.schema}; a backup path ({backup}) does not apply to it"
        )
    report = await journal_migration_report(journal, codec)
    refuse_newer(report, where(db.dsn))
    if not report.outdated:
        return report.done(None)
    try:
        await db.run(lambda connection: _rewrite(journal, connection, codec))
    except psycopg.Error as exc:
        raise JournalError(
            f"cannot migrate the journal in {where(db.dsn)}: {one_line(exc)}; nothing was changed"
        ) from exc
    return report.done(f"table {journal.schema}.agentrig_{JOURNAL_BACKUP_TABLE}")
