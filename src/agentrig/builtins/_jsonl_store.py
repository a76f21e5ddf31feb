"""The ``jsonl`` session store: one JSON line per event, one file per session.

A crash can only tear the *last* line; ``load`` returns every complete line before it and
reports the damage (and any gap in the ``seq`` numbering), and the next writer moves the
torn bytes to ``<session>.jsonl.torn`` (so nothing written is lost) before appending.  An
append that fails part-way (disk full, an I/O error, a short write) is cut back to the last
confirmed line and breaks its writer: it refuses every later append until the session is
opened again, so nothing is ever confirmed behind a torn record.  A file with no line
shaped like an event (random bytes, another format) is refused
(:class:`~agentrig.session.NotASessionLogError`), never resumed and appended to.  The
per-session lock file is removed when its writer closes.  Files and directories are created
owner-only (0o600 / 0o700) whatever the umask; a session's file appears with its first
event.  Each batch is written straight to the descriptor;
``durable = true`` also fsyncs each batch.  File I/O runs inline: a small append costs less
than a hop to a worker thread.

The directory and its files go through :class:`~agentrig.host.OwnerOnlyStore`: a session
directory (or file) that already exists with a mode open to group or others, belongs to
another user, or is a symlink is refused with :class:`~agentrig.session.SessionStoreError`,
never adopted.

With ``sealer = "<sealer id>"`` every event is sealed before it is written (kind
``session.event``, bound to the session id; one appender, so one data key, per writer) and
stored as a ``{"sealed": "<base64>"}`` line.  On load a line that does not open (damaged,
moved from another session, not sealed, or sealed while this store has no sealer) is
reported as damage, like a torn line; a locked sealer raises
:class:`~agentrig.sealing.LockedError`.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agentrig.builtins._locks import WriterLock, fix_hint
from agentrig.errors import ConfigError, Issue
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

__all__ = ["JsonlSessionStore", "JsonlStoreOptions", "factory", "sealed_line"]


class JsonlStoreOptions(BaseModel):
    """``[session_stores.<id>] kind = "jsonl"`` options."""

    model_config = ConfigDict(extra="forbid")

    directory: str = ".agentrig/sessions"
    durable: bool = False
    #: seal every event with the ``[sealers.<id>]`` of this id
    sealer: str | None = None


_OPTION = "options.directory of the jsonl session store"

#: The artifact kind of a sealed session event (an ``append`` kind).
SESSION_EVENT = "session.event"
_SEALED_START = b'{"sealed"'


def sealed_line(record: bytes) -> str:
    """A sealed record as its ``{"sealed": "<base64>"}`` line."""
    return '{"sealed":"' + base64.b64encode(record).decode("ascii") + '"}\n'


def _sealed_record(line: bytes) -> bytes | None:
    """The sealed record of a ``{"sealed": "<base64>"}`` line; None for any other line."""
    try:
        document = json.loads(line)
    except ValueError:
        return None
    if not isinstance(document, dict) or document.keys() != {"sealed"}:
        return None
    encoded = document["sealed"]
    if not isinstance(encoded, str):
        return None
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise CorruptError("the sealed record is not valid base64") from None


def _split_complete(raw: bytes) -> tuple[bytes, bytes]:
    """``(complete lines, torn tail)`` of a JSONL file's bytes."""
    cut = raw.rfind(b"\n") + 1
    return raw[:cut], raw[cut:]


# what a line this store wrote begins with (dump_event puts the version first; events of
# version 1 began with ``seq``)
_RECORD_STARTS = (b'{"v":', b'{"seq":', _SEALED_START)


def _is_record(line: bytes) -> bool:
    """Whether ``line`` is shaped like a stored event (not whether it validates)."""
    try:
        document = json.loads(line)
    except ValueError:
        return False
    return isinstance(document, dict) and (
        isinstance(document.get("seq"), int) or document.keys() == {"sealed"}
    )


def _torn_record(torn: bytes) -> bool:
    """Whether ``torn`` can be what a write of a record left when it was cut short."""
    return any(torn.startswith(start) or start.startswith(torn) for start in _RECORD_STARTS)


def _require_log(raw: bytes, path: Path) -> None:
    """Refuse a file that is not a session log: no line of it is shaped like an event.

    A log damaged here and there still has records; random bytes or another format has
    none, and resuming it would start a log of zero events on top of someone's file.
    """
    complete, torn = _split_complete(raw)
    if any(_is_record(line) for line in complete.splitlines() if line.strip()):
        return
    if not complete and (not torn or _torn_record(torn)):
        return  # empty, or only the torn first record of a crash during the first append
    raise NotASessionLogError(
        f"{path} is not a session log: none of its lines is a session event; move the file "
        "away or use another session id"
    )


class _JsonlWriter:
    """Appends whole batches through the raw descriptor (no user-space buffer).

    A batch is confirmed only once every byte is written (and, when durable, flushed).  If
    anything fails part-way the file is cut back to the last confirmed record boundary and
    the writer is *broken*: it refuses every later append (:class:`BrokenWriterError`), so
    no event is ever confirmed behind a torn record.  Opening the session again repairs
    whatever the cut could not (the torn tail goes to ``<session>.jsonl.torn``).
    """

    def __init__(
        self,
        owner: OwnerOnlyStore,
        path: Path,
        lock: WriterLock,
        durable: bool,
        appender: Appender | None = None,
    ) -> None:
        self._owner = owner
        self._path = path
        self._lock: WriterLock | None = lock
        self._durable = durable
        self._appender = appender
        self._file: IO[bytes] | None = None
        self._end = 0  # the file's length at the last confirmed record boundary
        self._broken: str | None = None

    def _open(self) -> IO[bytes]:
        # The file is created (owner-only) by the first append, so a writer that never
        # wrote leaves no empty session behind.
        try:
            created = not self._owner.exists(self._path.name)
            file = self._owner.open_append(self._path.name)
        except (HostError, OSError) as exc:
            raise SessionStoreError(
                f"cannot open session file {self._path}: {exc}"
                + fix_hint(exc, self._path.parent, _OPTION)
            ) from exc
        self._end = os.fstat(file.fileno()).st_size
        if created and self._durable:
            _fsync_dir(self._path.parent)
        return file

    def _payload(self, events: Sequence[SessionEvent]) -> bytes:
        if self._appender is None:
            return "".join(dump_event(e) + "\n" for e in events).encode("utf-8")
        seal = self._appender.seal_record
        return "".join(sealed_line(seal(dump_event(e).encode("utf-8"))) for e in events).encode(
            "ascii"
        )

    async def append(self, events: Sequence[SessionEvent]) -> None:
        if self._lock is None:
            raise SessionStoreError("this session writer is closed")
        if self._broken is not None:
            raise BrokenWriterError(
                f"session file {self._path}: an earlier append failed ({self._broken}); this "
                "writer appends nothing more -- open the session again to continue"
            )
        if not events:
            return
        payload = self._payload(events)
        if self._file is None:
            self._file = self._open()
        fd = self._file.fileno()
        try:
            _write_all(fd, payload)
            if self._durable:
                os.fsync(fd)
        except OSError as exc:
            self._broken = exc.strerror or str(exc)
            repaired = self._cut_back(fd)
            raise SessionStoreError(
                f"cannot append to session file {self._path}: {self._broken}; the batch of "
                f"{len(events)} event(s) was not stored"
                + (
                    ""
                    if repaired
                    else " and the file may end in a torn record (opening the session "
                    "again sets it aside)"
                )
            ) from exc
        self._end += len(payload)

    def _cut_back(self, fd: int) -> bool:
        """Truncate to the last confirmed boundary; False when even that failed."""
        try:
            os.ftruncate(fd, self._end)
        except OSError:
            return False
        return True

    async def aclose(self) -> None:
        if self._lock is not None:
            lock, self._lock = self._lock, None
            file, self._file = self._file, None
            try:
                if file is not None:
                    file.close()
            finally:
                lock.release()


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte; a short write is continued, an error raised."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class JsonlSessionStore:
    """Session logs as ``<directory>/<session-id>.jsonl`` files."""

    def __init__(
        self, directory: Path, *, durable: bool = False, sealer: Sealer | None = None
    ) -> None:
        self.directory = directory
        self.durable = durable
        self.sealer = sealer
        self._owner: OwnerOnlyStore | None = None

    def _path(self, session_id: str) -> Path:
        return self.directory / f"{_check_session_id(session_id)}.jsonl"

    def _store(self) -> OwnerOnlyStore:
        """The owner-only directory (created 0o700, or verified: never adopted if wider)."""
        if self._owner is None:
            try:
                self._owner = OwnerOnlyStore(self.directory)
            except (HostError, OSError) as exc:
                raise SessionStoreError(
                    f"the session directory {self.directory} cannot be used: {exc}"
                    + fix_hint(exc, self.directory, _OPTION)
                ) from exc
        return self._owner

    def _existing_store(self) -> OwnerOnlyStore | None:
        """The owner-only directory, or None when it was never created (nothing stored)."""
        if self._owner is None and not os.path.lexists(self.directory):
            return None
        return self._store()

    async def open_writer(self, session_id: str) -> _JsonlWriter:
        path = self._path(session_id)
        owner = self._store()
        lock = WriterLock(path.with_suffix(".lock"), session_id, option=_OPTION)
        try:
            try:
                raw = owner.read_bytes(path.name)
            except FileNotFoundError:
                raw = b""
            _require_log(raw, path)
            _complete, torn = _split_complete(raw)
            if torn:
                # keep the torn bytes aside (owner-only), then cut the file back to
                # whole lines
                with owner.open_append(path.name + ".torn") as aside:
                    aside.write(torn)
                with owner.open_append(path.name) as file:
                    os.ftruncate(file.fileno(), len(raw) - len(torn))
            appender = (
                None
                if self.sealer is None
                else self.sealer.open_appender(SESSION_EVENT, session_id)
            )
            return _JsonlWriter(owner, path, lock, self.durable, appender)
        except (HostError, OSError) as exc:
            lock.release()
            raise SessionStoreError(
                f"cannot open session {session_id!r}: {exc}"
                + fix_hint(exc, self.directory, _OPTION)
            ) from exc
        except BaseException:
            lock.release()
            raise

    async def load(self, session_id: str) -> LoadReport:
        path = self._path(session_id)
        missing = SessionStoreError(f"no stored session {session_id!r} in {self.directory}")
        owner = self._existing_store()
        if owner is None:
            raise missing
        try:
            raw = owner.read_bytes(path.name)
        except FileNotFoundError:
            raise missing from None
        except (HostError, OSError) as exc:
            raise SessionStoreError(
                f"cannot read session {session_id!r}: {exc}"
                + fix_hint(exc, self.directory, _OPTION)
            ) from exc
        complete, torn = _split_complete(raw)
        events: list[SessionEvent] = []
        problems: list[str] = []
        if torn:
            problems.append(f"torn final line ({len(torn)} bytes at offset {len(complete)})")
        for number, line in enumerate(complete.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                events.append(self._decode(line, session_id))
            except CorruptError as exc:
                problems.append(f"line {number}: {exc}")
            except (ValidationError, ValueError) as exc:
                problems.append(f"line {number} unreadable: {str(exc).splitlines()[0]}")
        if not events:
            _require_log(raw, path)
        if not events and complete.strip():
            raise NotASessionLogError(
                f"{path} holds no readable session event ({problems[-1]}); move the file "
                "away or use another session id"
            )
        problems.extend(sequence_problems(events))
        return LoadReport(
            session_id=session_id,
            events=tuple(events),
            damaged=bool(problems),
            detail="; ".join(problems) or None,
        )

    def _decode(self, line: bytes, session_id: str) -> SessionEvent:
        try:
            return parse_event(self.plaintext(line, session_id))
        except LockedError as exc:
            raise LockedError(
                f"session {session_id!r} is sealed and cannot be read now: {exc}"
            ) from None

    # ---- agentrig migrate (agentrig.session.MigratableStore) -----------------------------
    OPTION = _OPTION

    def existing_owner(self) -> OwnerOnlyStore | None:
        """The owner-only directory, or None when nothing was ever stored."""
        return self._existing_store()

    def plaintext(self, line: bytes, session_id: str) -> bytes:
        """A stored line's event JSON (opened when sealed); CorruptError when it is not."""
        if self.sealer is None:
            if line.startswith(_SEALED_START) and _sealed_record(line) is not None:
                raise CorruptError(
                    "sealed, but this store has no sealer configured (options.sealer)"
                )
            return line
        record = _sealed_record(line)
        if record is None:
            raise CorruptError("not sealed, though this store seals every event")
        return self.sealer.open(SESSION_EVENT, session_id, record)

    def appender(self, session_id: str) -> Appender | None:
        """A sealing appender for ``session_id`` (None without a sealer)."""
        return None if self.sealer is None else self.sealer.open_appender(SESSION_EVENT, session_id)

    async def migration_report(self) -> MigrationReport:
        """How many stored events are older than the current version, per session."""
        from agentrig.builtins._jsonl_migrate import jsonl_migration_report

        return await jsonl_migration_report(self)

    async def migrate(self, *, backup: Path | None = None) -> MigrationReport:
        """Rewrite older events at the current version (old files kept in ``backup``,
        default ``<directory>.pre-migrate``)."""
        from agentrig.builtins._jsonl_migrate import jsonl_migrate

        return await jsonl_migrate(self, backup)

    async def exists(self, session_id: str) -> bool:
        path = self._path(session_id)
        owner = self._existing_store()
        if owner is None:
            return False
        try:
            return owner.exists(path.name)
        except HostError as exc:
            raise SessionStoreError(f"cannot look up session {session_id!r}: {exc}") from exc

    async def list_sessions(self) -> tuple[str, ...]:
        if not self.directory.is_dir():
            return ()
        return tuple(sorted(p.stem for p in self.directory.glob("*.jsonl")))

    async def aclose(self) -> None:
        return None


@with_options(JsonlStoreOptions)
def factory(spec: dict[str, Any]) -> JsonlSessionStore:
    """Entry point ``jsonl`` of ``agentrig.session_stores``."""
    options = JsonlStoreOptions.model_validate(spec.get("options", {}))
    directory = Path(options.directory)
    if not directory.is_absolute():
        directory = Path(spec.get("base_dir", ".")) / directory
    return JsonlSessionStore(
        directory, durable=options.durable, sealer=sealer_option(spec, options.sealer)
    )


def sealer_option(spec: dict[str, Any], name: str | None) -> Sealer | None:
    """The sealer a store's ``sealer`` option names, from ``spec["sealers"]``."""
    if name is None:
        return None
    sealers: dict[str, Sealer] = spec.get("sealers") or {}
    sealer = sealers.get(name)
    if sealer is None:
        known = ", ".join(sorted(sealers)) or "none configured"
        raise ConfigError(
            [
                Issue(
                    "config.unknown_id",
                    f"unknown sealer {name!r} (configured sealers: {known})",
                    ("session_stores", str(spec.get("id", "?")), "options", "sealer"),
                )
            ]
        )
    return sealer
