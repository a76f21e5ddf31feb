"""The ``sqlite`` session store: every session in one SQLite database.

Each ``append`` batch is one transaction, so a crash leaves whole batches or none.  The
database runs in rollback-journal mode so an interrupted transaction is *visible*: a hot
journal found on open means SQLite is about to roll a partial write back, and the next
``load`` reports that damage.  One writer per session is enforced with a crash-released
lock file beside the database.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agentrig.builtins._locks import WriterLock
from agentrig.ids import session_id as _check_session_id
from agentrig.session import LoadReport, SessionEvent, SessionStoreError, dump_event, parse_event

__all__ = ["SqliteSessionStore", "SqliteStoreOptions", "factory"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
"""


class SqliteStoreOptions(BaseModel):
    """``[session_stores.<id>] kind = "sqlite"`` options."""

    model_config = ConfigDict(extra="forbid")

    path: str = ".agentrig/sessions.sqlite3"
    durable: bool = False


class _SqliteWriter:
    def __init__(self, store: SqliteSessionStore, session_id: str, lock: WriterLock) -> None:
        self._store = store
        self._session_id = session_id
        self._lock: WriterLock | None = lock

    async def append(self, events: Sequence[SessionEvent]) -> None:
        if self._lock is None:
            raise SessionStoreError("this session writer is closed")
        rows = [(self._session_id, e.seq, dump_event(e)) for e in events]
        connection = self._store.connection()
        try:
            with connection:  # one transaction per batch
                connection.executemany(
                    "INSERT INTO events (session_id, seq, body) VALUES (?, ?, ?)", rows
                )
        except sqlite3.Error as exc:
            raise SessionStoreError(
                f"cannot append to session {self._session_id!r}: {exc}"
            ) from exc

    async def aclose(self) -> None:
        if self._lock is not None:
            lock, self._lock = self._lock, None
            lock.release()


class SqliteSessionStore:
    """Session logs in one SQLite file."""

    def __init__(self, path: Path, *, durable: bool = False) -> None:
        self.path = path
        self.durable = durable
        self._connection: sqlite3.Connection | None = None
        self._recovered: str | None = None

    def connection(self) -> sqlite3.Connection:
        if self._connection is None:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            journal = self.path.with_name(self.path.name + "-journal")
            if journal.exists() and journal.stat().st_size > 0:
                self._recovered = (
                    "an interrupted transaction was found and rolled back "
                    "(its events were never committed)"
                )
            if not self.path.exists():
                # create owner-only before SQLite opens it with its default (umask) mode
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
                os.close(fd)
            connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=DELETE")
            connection.execute(f"PRAGMA synchronous={'FULL' if self.durable else 'NORMAL'}")
            connection.executescript(_SCHEMA)
            connection.isolation_level = "DEFERRED"
            self._connection = connection
        return self._connection

    def _lock_path(self, session_id: str) -> Path:
        directory = self.path.with_name(self.path.name + ".locks")
        directory.mkdir(mode=0o700, exist_ok=True)
        return directory / f"{session_id}.lock"

    async def open_writer(self, session_id: str) -> _SqliteWriter:
        _check_session_id(session_id)
        self.connection()
        return _SqliteWriter(self, session_id, WriterLock(self._lock_path(session_id), session_id))

    async def load(self, session_id: str) -> LoadReport:
        _check_session_id(session_id)
        try:
            rows = (
                self.connection()
                .execute(
                    "SELECT seq, body FROM events WHERE session_id = ? ORDER BY seq", (session_id,)
                )
                .fetchall()
            )
        except sqlite3.Error as exc:
            raise SessionStoreError(f"cannot read session {session_id!r}: {exc}") from exc
        if not rows:
            raise SessionStoreError(f"no stored session {session_id!r} in {self.path}")
        events: list[SessionEvent] = []
        problems: list[str] = [self._recovered] if self._recovered else []
        for seq, body in rows:
            try:
                events.append(parse_event(body))
            except (ValidationError, ValueError) as exc:
                problems.append(f"event {seq} unreadable: {str(exc).splitlines()[0]}")
        return LoadReport(session_id, tuple(events), bool(problems), "; ".join(problems) or None)

    async def exists(self, session_id: str) -> bool:
        row = (
            self.connection()
            .execute("SELECT 1 FROM events WHERE session_id = ? LIMIT 1", (session_id,))
            .fetchone()
        )
        return row is not None

    async def list_sessions(self) -> tuple[str, ...]:
        rows = self.connection().execute("SELECT DISTINCT session_id FROM events").fetchall()
        return tuple(sorted(r[0] for r in rows))

    async def aclose(self) -> None:
        if self._connection is not None:
            connection, self._connection = self._connection, None
            connection.close()


def factory(spec: dict[str, Any]) -> SqliteSessionStore:
    """Entry point ``sqlite`` of ``agentrig.session_stores``."""
    options = SqliteStoreOptions.model_validate(spec.get("options", {}))
    path = Path(options.path)
    if not path.is_absolute():
        path = Path(spec.get("base_dir", ".")) / path
    return SqliteSessionStore(path, durable=options.durable)


factory.options_model = SqliteStoreOptions  # type: ignore[attr-defined]
