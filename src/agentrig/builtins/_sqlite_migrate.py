"""``agentrig migrate`` for the ``sqlite`` session store: one transaction for the database.

The database is first copied (SQLite's online backup, into an owner-only file beside it --
kept if a copy is already there: an interrupted run made it from the same old data), then
every older event is rewritten in one ``BEGIN IMMEDIATE`` ... ``COMMIT`` while the writer
lock of every session being rewritten is held.  A crash rolls the transaction back (the hot
journal is rolled back on the next open); running again rewrites everything.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.builtins._locks import WriterLock
from agentrig.host import OwnerOnlyStore
from agentrig.sealing import CorruptError
from agentrig.session import (
    SESSION_EVENT_VERSION,
    MigrationReport,
    SessionStoreError,
    count_versions,
    dump_event,
    parse_event,
    refuse_newer,
    stored_version,
)

if TYPE_CHECKING:
    from agentrig.builtins._sqlite_store import SqliteSessionStore

__all__ = ["sqlite_migrate", "sqlite_migration_report"]


def _rows(store: SqliteSessionStore) -> list[Any]:
    return store.query("SELECT session_id, seq, body FROM events ORDER BY session_id, seq", ())


def _version(store: SqliteSessionStore, session_id: str, body: str | bytes) -> int | None:
    try:
        return stored_version(store.plaintext(body, session_id))
    except CorruptError:
        return None


async def sqlite_migration_report(store: SqliteSessionStore) -> MigrationReport:
    if not store.path.exists():
        return MigrationReport(())
    by_session: dict[str, list[int | None]] = {}
    for session_id, _seq, body in _rows(store):
        if isinstance(session_id, str):
            by_session.setdefault(session_id, []).append(_version(store, session_id, body))
    return MigrationReport(
        tuple(count_versions(sid, versions) for sid, versions in sorted(by_session.items()))
    )


def _backup(store: SqliteSessionStore, target: Path) -> None:
    owner = OwnerOnlyStore(target.parent)
    if owner.exists(target.name):
        return
    owner.open_append(target.name).close()  # created 0600 before SQLite writes it
    copy = sqlite3.connect(target)
    try:
        store.connection().backup(copy)
    finally:
        copy.close()


def _new_body(store: SqliteSessionStore, session_id: str, body: str | bytes) -> str | bytes | None:
    """The rewritten body of an older event; None to keep it as it is."""
    version = _version(store, session_id, body)
    if version is None or version >= SESSION_EVENT_VERSION:
        return None
    try:
        event = dump_event(parse_event(store.plaintext(body, session_id)))
    except ValueError:  # does not fit its version: damage, kept as it is
        return None
    appender = store.appender(session_id)
    return event if appender is None else appender.seal_record(event.encode("utf-8"))


async def sqlite_migrate(store: SqliteSessionStore, backup: Path | None) -> MigrationReport:
    report = await sqlite_migration_report(store)
    refuse_newer(report, str(store.path))
    if not report.outdated:
        return MigrationReport(report.sessions, applied=True)
    target = backup or store.path.with_name(store.path.name + ".pre-migrate")
    locks = [
        WriterLock(store.lock_path(s.session_id), s.session_id, option=store.OPTION)
        for s in report.outdated
    ]
    try:
        _backup(store, target)
        connection = store.connection()
        try:
            connection.execute("BEGIN IMMEDIATE")
            for session_id, seq, body in _rows(store):
                new = _new_body(store, session_id, body)
                if new is not None:
                    connection.execute(
                        "UPDATE events SET body = ? WHERE session_id = ? AND seq = ?",
                        (new, session_id, seq),
                    )
            connection.execute("COMMIT")
        except sqlite3.Error as exc:
            store.reset()
            raise SessionStoreError(
                f"cannot migrate the session database {store.path}: {exc}; nothing was "
                f"changed (the copy at {target} is the data as it was)"
            ) from exc
    finally:
        for lock in locks:
            lock.release()
    return MigrationReport(report.sessions, applied=True, backup=str(target))
