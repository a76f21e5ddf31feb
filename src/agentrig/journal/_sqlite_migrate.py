"""``agentrig migrate`` for the SQLite journal: a copy first, then one transaction.

The database is copied with SQLite's online backup into an owner-only file (kept if a copy
is already there: an interrupted run made it from the same old data), then every older
record is rewritten in one ``BEGIN IMMEDIATE`` ... ``COMMIT``.  A crash rolls the
transaction back (the WAL's uncommitted frames are ignored on the next open), so the
journal is either as it was or wholly rewritten; running again completes.  A worker
writing meanwhile waits for the transaction (the journal's busy timeout).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentrig.journal._errors import JournalError
from agentrig.journal._migrate import RecordCodec, journal_report, rewritten_record
from agentrig.session import MigrationReport, refuse_newer

__all__ = ["backup_database", "migrate_rows", "report_rows"]

_ROWS = "SELECT run_id, body FROM journal ORDER BY seq"


def report_rows(connection: sqlite3.Connection, codec: RecordCodec) -> MigrationReport:
    rows: list[Any] = connection.execute(_ROWS).fetchall()
    return journal_report(((run_id, body) for run_id, body in rows), codec)


def backup_database(connection: sqlite3.Connection, target: Path) -> None:
    """Copy the database into ``target``, an empty owner-only file made by the caller."""
    copy = sqlite3.connect(target)
    try:
        connection.backup(copy)
    finally:
        copy.close()


def migrate_rows(
    connection: sqlite3.Connection,
    path: Path,
    backup: Path | None,
    codec: RecordCodec,
    *,
    new_file: Callable[[Path], bool],
) -> MigrationReport:
    """Back up, then rewrite every older record in one transaction (see the module docs)."""
    report = report_rows(connection, codec)
    refuse_newer(report, str(path))
    if not report.outdated:
        return report.done(None)
    target = backup or path.with_name(path.name + ".pre-migrate")
    try:
        if new_file(target):  # an existing copy is kept: made from the same old data
            backup_database(connection, target)
        connection.execute("BEGIN IMMEDIATE")
        try:
            rows = connection.execute("SELECT seq, body FROM journal ORDER BY seq").fetchall()
            for seq, body in rows:
                new = rewritten_record(body, codec)
                if new is not None:
                    connection.execute("UPDATE journal SET body = ? WHERE seq = ?", (new, seq))
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
    except (OSError, sqlite3.Error) as exc:
        raise JournalError(
            f"cannot migrate the journal {path}: {exc}; nothing was changed "
            f"(the copy at {target}, if made, is the data as it was)"
        ) from exc
    return report.done(str(target))
