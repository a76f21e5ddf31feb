"""The ``sqlite`` session store: every session in one SQLite database.

Each ``append`` batch is one transaction, so a crash leaves whole batches or none.  The
database runs in rollback-journal mode so an interrupted transaction is *visible*: a hot
journal found on open means SQLite is about to roll a partial write back, and the next
``load`` reports that damage.  One writer per session is enforced with a crash-released
lock file beside the database (removed when the writer closes).

A failed append (disk full, an I/O error) is rolled back by SQLite; the writer then refuses
every later append until the session is opened again, and the store reconnects, so a hot
journal left by the failure is rolled back and reported.  A file that is not a SQLite
database, or a database of something else (another ``application_id``, other tables), is
refused with :class:`~agentrig.session.NotASessionLogError` -- never given an ``events``
table.  Gaps in a session's ``seq`` numbering are reported on load.

The database's directory, the database file and the lock directory go through
:class:`~agentrig.host.OwnerOnlyStore`: created owner-only (0o700 / 0o600) before SQLite
opens anything, and refused with :class:`~agentrig.session.SessionStoreError` when one
already exists with a mode open to group or others, another owner, or as a symlink.  SQLite
gives its ``-journal`` file the database's mode.

With ``sealer = "<sealer id>"`` each event's row holds the sealed record as a BLOB (kind
``session.event``, bound to the session id; one appender per writer).  A row that does not
open is reported as damage; a locked sealer raises :class:`~agentrig.sealing.LockedError`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agentrig.builtins._jsonl_store import SESSION_EVENT, sealer_option
from agentrig.builtins._locks import WriterLock, fix_hint
from agentrig.host import HostError, OwnerOnlyStore
from agentrig.ids import session_id as _check_session_id
from agentrig.kernel import with_options
from agentrig.sealing import Appender, CorruptError, LockedError, Sealer
from agentrig.session import (
    BrokenWriterError,
    LoadReport,
    MigrationReport,
    NotASessionLogError,
    SessionEvent,
    SessionStoreError,
    dump_event,
    parse_event,
    sequence_problems,
)

__all__ = ["SqliteSessionStore", "SqliteStoreOptions", "factory"]

_OPTION = "options.path of the sqlite session store"

#: ``PRAGMA application_id`` of a session database ("AGRG"): a database of anything else is
#: refused rather than given an ``events`` table.
APPLICATION_ID = 0x41475247

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
    #: seal every event with the ``[sealers.<id>]`` of this id
    sealer: str | None = None


class _SqliteWriter:
    def __init__(
        self,
        store: SqliteSessionStore,
        session_id: str,
        lock: WriterLock,
        appender: Appender | None = None,
    ) -> None:
        self._store = store
        self._session_id = session_id
        self._lock: WriterLock | None = lock
        self._appender = appender
        self._broken: str | None = None

    async def append(self, events: Sequence[SessionEvent]) -> None:
        if self._lock is None:
            raise SessionStoreError("this session writer is closed")
        if self._broken is not None:
            raise BrokenWriterError(
                f"session {self._session_id!r} in {self._store.path}: an earlier append "
                f"failed ({self._broken}); this writer appends nothing more -- open the "
                "session again to continue"
            )
        rows: list[tuple[str, int, str | bytes]]
        if self._appender is None:
            rows = [(self._session_id, e.seq, dump_event(e)) for e in events]
        else:
            seal = self._appender.seal_record
            rows = [(self._session_id, e.seq, seal(dump_event(e).encode("utf-8"))) for e in events]
        connection = self._store.connection()
        try:
            with connection:  # one transaction per batch
                connection.executemany(
                    "INSERT INTO events (session_id, seq, body) VALUES (?, ?, ?)", rows
                )
        except sqlite3.Error as exc:
            # SQLite rolled the batch back (or left a hot journal the next connection rolls
            # back); either way nothing of it is confirmed, and nothing more is until the
            # session is opened again on a fresh connection.
            self._broken = str(exc)
            self._store.reset()
            raise SessionStoreError(
                f"cannot append to session {self._session_id!r} in {self._store.path}: {exc}; "
                f"the batch of {len(events)} event(s) was not stored"
            ) from exc

    async def aclose(self) -> None:
        if self._lock is not None:
            lock, self._lock = self._lock, None
            lock.release()


class SqliteSessionStore:
    """Session logs in one SQLite file."""

    def __init__(self, path: Path, *, durable: bool = False, sealer: Sealer | None = None) -> None:
        self.path = path
        self.durable = durable
        self.sealer = sealer
        self._connection: sqlite3.Connection | None = None
        self._recovered: str | None = None
        self._owner: OwnerOnlyStore | None = None

    def _store(self) -> OwnerOnlyStore:
        """The database's directory, owner-only (created 0o700, or verified)."""
        if self._owner is None:
            try:
                self._owner = OwnerOnlyStore(self.path.parent)
            except (HostError, OSError) as exc:
                raise SessionStoreError(
                    f"the session database's directory {self.path.parent} cannot be used: {exc}"
                    + fix_hint(exc, self.path.parent, _OPTION)
                ) from exc
        return self._owner

    def connection(self) -> sqlite3.Connection:
        if self._connection is None:
            owner = self._store()
            try:
                # created 0o600 before SQLite opens it with its default (umask) mode, or
                # verified owner-only (not a symlink, not wider) if it is already there
                owner.open_append(self.path.name).close()
            except (HostError, OSError) as exc:
                raise SessionStoreError(
                    f"the session database {self.path} cannot be used: {exc}"
                    + fix_hint(exc, self.path.parent, _OPTION)
                ) from exc
            journal = self.path.with_name(self.path.name + "-journal")
            if journal.exists() and journal.stat().st_size > 0:
                self._recovered = (
                    "an interrupted transaction was found and rolled back "
                    "(its events were never committed)"
                )
            connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            try:
                self._prepare(connection)
            except BaseException:
                connection.close()
                raise
            connection.isolation_level = "DEFERRED"
            self._connection = connection
        return self._connection

    def _prepare(self, connection: sqlite3.Connection) -> None:
        """Journal mode, sync level and schema -- on a session database, and nothing else."""
        try:
            connection.execute("PRAGMA journal_mode=DELETE")
            connection.execute(f"PRAGMA synchronous={'FULL' if self.durable else 'NORMAL'}")
            (application,) = connection.execute("PRAGMA application_id").fetchone()
            tables = {
                row[0]
                for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            # garbage over the header can still open, then fail to decode a table name
            raise NotASessionLogError(
                f"{self.path} is not a SQLite database ({exc}); move it away or point "
                "options.path of the sqlite session store at another file"
            ) from exc
        if application != APPLICATION_ID and not (application == 0 and tables <= {"events"}):
            raise NotASessionLogError(
                f"{self.path} is a SQLite database of something else (application id "
                f"{application:#x}, tables: {', '.join(sorted(tables)) or 'none'}); move it away "
                "or point options.path of the sqlite session store at another file"
            )
        try:
            connection.executescript(_SCHEMA)
            if application != APPLICATION_ID:
                connection.execute(f"PRAGMA application_id={APPLICATION_ID}")
        except sqlite3.Error as exc:
            raise SessionStoreError(
                f"cannot prepare the session database {self.path}: {exc}; check that the "
                "file and its directory are writable"
            ) from exc

    def reset(self) -> None:
        """Drop the connection after a failed write; the next use reconnects (and recovers)."""
        if self._connection is not None:
            connection, self._connection = self._connection, None
            connection.close()

    def _lock_path(self, session_id: str) -> Path:
        try:
            directory = self._store().ensure_dir(self.path.name + ".locks")
        except (HostError, OSError) as exc:
            raise SessionStoreError(
                f"the session lock directory cannot be used: {exc}"
                + fix_hint(exc, self.path.parent, _OPTION)
            ) from exc
        return directory / f"{session_id}.lock"

    async def open_writer(self, session_id: str) -> _SqliteWriter:
        _check_session_id(session_id)
        self.connection()
        lock = WriterLock(self._lock_path(session_id), session_id, option=_OPTION)
        appender = (
            None if self.sealer is None else self.sealer.open_appender(SESSION_EVENT, session_id)
        )
        return _SqliteWriter(self, session_id, lock, appender)

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
        except (sqlite3.Error, UnicodeDecodeError) as exc:  # garbage text in a row
            raise SessionStoreError(
                f"cannot read session {session_id!r} from {self.path}: {exc}"
            ) from exc
        if not rows:
            raise SessionStoreError(f"no stored session {session_id!r} in {self.path}")
        events: list[SessionEvent] = []
        problems: list[str] = [self._recovered] if self._recovered else []
        for seq, body in rows:
            try:
                events.append(self._decode(body, session_id))
            except CorruptError as exc:
                problems.append(f"event {seq}: {exc}")
            except (ValidationError, ValueError) as exc:
                problems.append(f"event {seq} unreadable: {str(exc).splitlines()[0]}")
        if not events:
            raise NotASessionLogError(
                f"session {session_id!r} in {self.path} holds no readable event "
                f"({problems[-1]}); delete its rows or use another session id"
            )
        problems.extend(sequence_problems(events))
        return LoadReport(session_id, tuple(events), bool(problems), "; ".join(problems) or None)

    def _decode(self, body: str | bytes, session_id: str) -> SessionEvent:
        try:
            return parse_event(self.plaintext(body, session_id))
        except LockedError as exc:
            raise LockedError(
                f"session {session_id!r} is sealed and cannot be read now: {exc}"
            ) from None

    # ---- agentrig migrate (agentrig.session.MigratableStore) -----------------------------
    OPTION = _OPTION

    def plaintext(self, body: str | bytes, session_id: str) -> str | bytes:
        """A row's event JSON (opened when sealed); CorruptError when it is not one."""
        if self.sealer is None:
            if isinstance(body, bytes):
                raise CorruptError(
                    "sealed, but this store has no sealer configured (options.sealer)"
                )
            return body
        if not isinstance(body, bytes):
            raise CorruptError("not sealed, though this store seals every event")
        return self.sealer.open(SESSION_EVENT, session_id, body)

    def appender(self, session_id: str) -> Appender | None:
        """A sealing appender for ``session_id`` (None without a sealer)."""
        return None if self.sealer is None else self.sealer.open_appender(SESSION_EVENT, session_id)

    def lock_path(self, session_id: str) -> Path:
        """The writer-lock file of ``session_id``."""
        return self._lock_path(session_id)

    def query(self, sql: str, parameters: tuple[str, ...]) -> list[Any]:
        """Rows of a read-only query (a damaged database raises SessionStoreError)."""
        return self._query(sql, parameters)

    async def migration_report(self) -> MigrationReport:
        """How many stored events are older than the current version, per session."""
        from agentrig.builtins._sqlite_migrate import sqlite_migration_report

        return await sqlite_migration_report(self)

    async def migrate(self, *, backup: Path | None = None) -> MigrationReport:
        """Rewrite older events at the current version in one transaction (the database
        is copied to ``backup`` first, default ``<path>.pre-migrate``)."""
        from agentrig.builtins._sqlite_migrate import sqlite_migrate

        return await sqlite_migrate(self, backup)

    async def exists(self, session_id: str) -> bool:
        rows = self._query("SELECT 1 FROM events WHERE session_id = ? LIMIT 1", (session_id,))
        return bool(rows)

    async def list_sessions(self) -> tuple[str, ...]:
        rows = self._query("SELECT DISTINCT session_id FROM events", ())
        # garbage over the file can leave ids of another storage class (blob, int, NULL):
        # those rows cannot be a session's, so they are not listed
        return tuple(sorted(r[0] for r in rows if isinstance(r[0], str)))

    def _query(self, sql: str, parameters: tuple[str, ...]) -> list[Any]:
        try:
            return self.connection().execute(sql, parameters).fetchall()
        except (sqlite3.Error, UnicodeDecodeError) as exc:  # garbage text in a row
            raise SessionStoreError(
                f"cannot read the session database {self.path}: {exc}; if it is damaged, "
                "move it away (its readable sessions can be copied out with sqlite3 .recover)"
            ) from exc

    async def aclose(self) -> None:
        self.reset()


@with_options(SqliteStoreOptions)
def factory(spec: dict[str, Any]) -> SqliteSessionStore:
    """Entry point ``sqlite`` of ``agentrig.session_stores``."""
    options = SqliteStoreOptions.model_validate(spec.get("options", {}))
    path = Path(options.path)
    if not path.is_absolute():
        path = Path(spec.get("base_dir", ".")) / path
    return SqliteSessionStore(
        path, durable=options.durable, sealer=sealer_option(spec, options.sealer)
    )
