"""``agentrig migrate`` for the ``postgres`` session store: one transaction.

Every older event is rewritten at the current version in one transaction that first copies
each row it changes into ``agentrig_session_events_pre_migrate`` (same columns; a row
already copied by an earlier, interrupted run is kept) and holds a transaction-scoped
advisory lock on every session it rewrites -- a session with an open writer is refused.  A
crash, a lost connection or a refusal rolls everything back; running again completes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

from agentrig.session import (
    SESSION_EVENT_VERSION,
    MigrationReport,
    SessionStoreError,
    WriterConflictError,
    count_versions,
    dump_event,
    parse_event,
    refuse_newer,
    stored_version,
)
from agentrig_postgres._aconn import AnyioConnection
from agentrig_postgres._db import Database, table

if TYPE_CHECKING:
    from agentrig_postgres._sessions import PostgresSessionStore

__all__ = ["BACKUP_TABLE", "postgres_migrate", "postgres_migration_report"]

#: where the rows a migration changed are copied (in the store's schema)
BACKUP_TABLE = "session_events_pre_migrate"


async def _all_rows(store: PostgresSessionStore) -> list[Any]:
    query = sql.SQL("SELECT session_id, seq, body FROM {} ORDER BY session_id, seq")
    db = await store.database()
    return await db.fetch(query.format(store.events_table))


def _report(rows: list[Any]) -> MigrationReport:
    by_session: dict[str, list[int | None]] = {}
    for session_id, _seq, body in rows:
        by_session.setdefault(session_id, []).append(stored_version(body))
    return MigrationReport(
        tuple(count_versions(sid, versions) for sid, versions in sorted(by_session.items()))
    )


async def postgres_migration_report(store: PostgresSessionStore) -> MigrationReport:
    return _report(await _all_rows(store))


def _new_body(body: str) -> str | None:
    version = stored_version(body)
    if version is None or version >= SESSION_EVENT_VERSION:
        return None
    try:
        return dump_event(parse_event(body))
    except ValueError:  # does not fit its version: damage, kept as it is
        return None


async def _rewrite(
    store: PostgresSessionStore, connection: AnyioConnection, report: MigrationReport
) -> None:
    events = store.events_table
    backup = table(store.schema, BACKUP_TABLE)
    async with connection.transaction():
        for session in report.outdated:
            key = store.lock_key(session.session_id)
            cursor = await connection.execute(
                "SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))", (key,)
            )
            row = await cursor.fetchone()
            if row is None or not row[0]:
                raise WriterConflictError(
                    f"session {session.session_id!r} has a writer; close it and migrate again "
                    "(nothing was changed)"
                )
        await connection.execute(
            sql.SQL("CREATE TABLE IF NOT EXISTS {} (LIKE {} INCLUDING ALL)").format(backup, events)
        )
        cursor = await connection.execute(
            sql.SQL("SELECT session_id, seq, body FROM {} ORDER BY session_id, seq").format(events)
        )
        for session_id, seq, body in await cursor.fetchall():
            new = _new_body(body)
            if new is None:
                continue
            await connection.execute(
                sql.SQL(
                    "INSERT INTO {} (session_id, seq, body) VALUES (%s, %s, %s) "
                    "ON CONFLICT DO NOTHING"
                ).format(backup),
                (session_id, seq, body),
            )
            await connection.execute(
                sql.SQL("UPDATE {} SET body = %s WHERE session_id = %s AND seq = %s").format(
                    events
                ),
                (new, session_id, seq),
            )


async def postgres_migrate(store: PostgresSessionStore, backup: Path | None) -> MigrationReport:
    if backup is not None:
        raise SessionStoreError(
            f"the postgres session store keeps its copy in the table agentrig_{BACKUP_TABLE} "
            f"of schema {store.schema}; a backup path ({backup}) does not apply to it"
        )
    report = await postgres_migration_report(store)
    refuse_newer(report, store.where())
    if not report.outdated:
        return MigrationReport(report.sessions, applied=True)
    db = Database(store.dsn, connect_timeout=store.connect_timeout)
    try:
        await db.run(lambda connection: _rewrite(store, connection, report))
    except psycopg.Error as exc:
        raise SessionStoreError(
            f"cannot migrate the sessions in {store.where()}: {exc}; nothing was changed"
        ) from exc
    finally:
        await db.aclose()
    return MigrationReport(
        report.sessions, applied=True, backup=f"table {store.schema}.agentrig_{BACKUP_TABLE}"
    )
