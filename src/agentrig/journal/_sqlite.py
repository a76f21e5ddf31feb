"""The SQLite journal backend: one owner-only file, WAL, ``synchronous=FULL``.

Each record is its own ``BEGIN IMMEDIATE`` ... ``COMMIT`` transaction, so a write returns
only once it is durable, and a crash (even SIGKILL) leaves every committed record and
nothing half-written.  ``UNIQUE(run_id, kind, key)`` makes a second write of the same record
impossible even if two processes were to share the file against the port's contract.

The file is created owner-only (0600) in an owner-only directory (0700, created if missing)
through the host's owner-only store (:func:`agentrig._seams.owner_only_files`), before
SQLite opens it; SQLite gives its ``-wal`` and ``-shm`` companions the database file's mode.
An existing file or directory that is not owner-only is refused, never adopted.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.to_thread

from agentrig._seams import owner_only_files
from agentrig.journal._errors import JournalError
from agentrig.journal._migrate import RecordCodec
from agentrig.journal._port import RecordJournal
from agentrig.journal._records import (
    JOURNAL_RECORD_CODEC,
    ExecutionRecord,
    JournalRecordType,
    dump_record,
    parse_record,
)
from agentrig.journal._sqlite_migrate import migrate_rows, report_rows
from agentrig.session import MigrationReport

__all__ = ["SqliteJournal"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (run_id, kind, key)
);
CREATE INDEX IF NOT EXISTS journal_run ON journal (run_id, seq);
CREATE INDEX IF NOT EXISTS journal_kind ON journal (kind, seq);
"""


def _new_owner_file(path: Path) -> bool:
    """Create ``path`` empty and owner-only (0600, in an owner-only directory); False when it
    exists already."""
    store = owner_only_files(path.parent)
    if store.exists(path.name):
        return False
    store.open_append(path.name).close()
    return True


class SqliteJournal(RecordJournal):
    """An execution journal in one SQLite database file (see the module docs)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = Path(path)
        try:
            store = owner_only_files(self.path.parent)
            store.open_append(self.path.name).close()  # created 0600, or verified owner-only
            self.path = store.path(self.path.name)
            connection = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False, timeout=30
            )
        except (OSError, sqlite3.Error) as exc:
            raise JournalError(f"cannot open the journal {self.path}: {exc}") from exc
        try:
            self._prepare(connection)
        except BaseException:
            connection.close()
            raise
        self._connection: sqlite3.Connection | None = connection
        self._thread_lock = threading.Lock()

    def _prepare(self, connection: sqlite3.Connection) -> None:
        # Another process (a worker) may hold the journal while this one opens it; switching
        # to WAL and creating the schema can then be refused at once with "database is
        # locked" (SQLite skips the busy handler where waiting could deadlock), so those
        # steps are retried for a while before giving up.
        connection.execute("PRAGMA busy_timeout=30000")
        deadline = time.monotonic() + 30
        while True:
            try:
                mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise JournalError(f"{self.path}: SQLite refused WAL mode (got {mode!r})")
                connection.execute("PRAGMA synchronous=FULL")
                connection.executescript(_SCHEMA)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise JournalError(f"cannot open the journal {self.path}: {exc}") from exc
                time.sleep(0.05)

    # ---- agentrig migrate (agentrig.journal.MigratableJournal) ------------------------------
    async def migration_report(
        self, *, codec: RecordCodec = JOURNAL_RECORD_CODEC
    ) -> MigrationReport:
        """How many stored records are older than the current version, per run."""
        return await anyio.to_thread.run_sync(self._locked, report_rows, codec)

    async def migrate(
        self, *, backup: Path | None = None, codec: RecordCodec = JOURNAL_RECORD_CODEC
    ) -> MigrationReport:
        """Rewrite older records at the current version in one transaction (the database is
        copied to ``backup`` first, default ``<path>.pre-migrate``).  ``codec`` is how
        records are stored (a test passes one with a later version)."""
        run = functools.partial(
            migrate_rows, path=self.path, backup=backup, codec=codec, new_file=_new_owner_file
        )
        return await anyio.to_thread.run_sync(self._locked, run)

    def _locked(self, work: Callable[..., MigrationReport], *args: Any) -> MigrationReport:
        with self._thread_lock:
            return work(self._conn(), *args)

    def pragma(self, name: str) -> object:
        """Read one PRAGMA (for checks: ``journal_mode``, ``synchronous``)."""
        with self._thread_lock:
            return self._conn().execute(f"PRAGMA {name}").fetchone()[0]

    def _conn(self) -> sqlite3.Connection:
        if self._connection is None:
            raise JournalError(f"the journal {self.path} is closed")
        return self._connection

    # ---- primitives (each runs in a worker thread) ------------------------------------------
    # Only SQLite runs in the worker thread; records are dumped and parsed on the caller's
    # thread (pydantic may import lazily, and imports belong on one thread).
    def _append_sync(self, record: JournalRecordType, body: str) -> None:
        with self._thread_lock:
            connection = self._conn()
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.execute(
                    "INSERT INTO journal (run_id, kind, key, body) VALUES (?, ?, ?, ?)",
                    (record.run_id, record.kind, record.key, body),
                )
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

    def _select_sync(self, sql: str, parameters: tuple[str, ...]) -> list[str]:
        with self._thread_lock:
            rows = self._conn().execute(sql, parameters).fetchall()
        return [str(body) for (body,) in rows]

    async def _append(self, record: JournalRecordType) -> None:
        await anyio.to_thread.run_sync(self._append_sync, record, dump_record(record))

    async def _read(self, run_id: str) -> list[JournalRecordType]:
        bodies = await anyio.to_thread.run_sync(
            self._select_sync, "SELECT body FROM journal WHERE run_id = ? ORDER BY seq", (run_id,)
        )
        return [parse_record(body) for body in bodies]

    async def _read_executions(self) -> list[ExecutionRecord]:
        bodies = await anyio.to_thread.run_sync(
            self._select_sync, "SELECT body FROM journal WHERE kind = 'execution' ORDER BY seq", ()
        )
        out: list[ExecutionRecord] = []
        for body in bodies:
            record = parse_record(body)
            if isinstance(record, ExecutionRecord):
                out.append(record)
        return out

    async def _close(self) -> None:
        with self._thread_lock:
            connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def __repr__(self) -> str:
        return f"<SqliteJournal {self.path}>"
