"""The ``jsonl`` session store: one JSON line per event, one file per session.

A crash can only tear the *last* line; ``load`` returns every complete line before it and
reports the damage, and the next writer moves the torn bytes to ``<session>.jsonl.torn``
(so nothing written is lost) before appending.  Files and directories are created
owner-only (0o600 / 0o700) whatever the umask; a session's file appears with its first
event.  Writes are buffered and flushed per batch;
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

from agentrig.builtins._locks import WriterLock
from agentrig.errors import ConfigError, Issue
from agentrig.host import HostError, OwnerOnlyStore
from agentrig.ids import session_id as _check_session_id
from agentrig.kernel import with_options
from agentrig.sealing import Appender, CorruptError, LockedError, Sealer
from agentrig.session import (
    LoadReport,
    SessionEvent,
    SessionStoreError,
    dump_event,
    parse_event,
)

__all__ = ["JsonlSessionStore", "JsonlStoreOptions", "factory"]


class JsonlStoreOptions(BaseModel):
    """``[session_stores.<id>] kind = "jsonl"`` options."""

    model_config = ConfigDict(extra="forbid")

    directory: str = ".agentrig/sessions"
    durable: bool = False
    #: seal every event with the ``[sealers.<id>]`` of this id
    sealer: str | None = None


#: The artifact kind of a sealed session event (an ``append`` kind).
SESSION_EVENT = "session.event"
_SEALED_START = b'{"sealed"'


def _sealed_line(record: bytes) -> str:
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


class _JsonlWriter:
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

    def _open(self) -> IO[bytes]:
        # The file is created (owner-only) by the first append, so a writer that never
        # wrote leaves no empty session behind.
        try:
            created = not self._owner.exists(self._path.name)
            file = self._owner.open_append(self._path.name)
        except HostError as exc:
            raise SessionStoreError(f"cannot open session file: {exc}") from exc
        if created and self._durable:
            _fsync_dir(self._path.parent)
        return file

    async def append(self, events: Sequence[SessionEvent]) -> None:
        if self._lock is None:
            raise SessionStoreError("this session writer is closed")
        if not events:
            return
        if self._file is None:
            self._file = self._open()
        if self._appender is None:
            payload = "".join(dump_event(e) + "\n" for e in events).encode("utf-8")
        else:
            seal = self._appender.seal_record
            payload = "".join(
                _sealed_line(seal(dump_event(e).encode("utf-8"))) for e in events
            ).encode("ascii")
        self._file.write(payload)
        self._file.flush()
        if self._durable:
            os.fsync(self._file.fileno())

    async def aclose(self) -> None:
        if self._lock is not None:
            lock, self._lock = self._lock, None
            file, self._file = self._file, None
            try:
                if file is not None:
                    file.close()
            finally:
                lock.release()


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
        lock = WriterLock(path.with_suffix(".lock"), session_id)
        try:
            try:
                raw = owner.read_bytes(path.name)
            except FileNotFoundError:
                raw = b""
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
        except HostError as exc:
            lock.release()
            raise SessionStoreError(f"cannot open session {session_id!r}: {exc}") from exc
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
            raise SessionStoreError(f"cannot read session {session_id!r}: {exc}") from exc
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
        return LoadReport(
            session_id=session_id,
            events=tuple(events),
            damaged=bool(problems),
            detail="; ".join(problems) or None,
        )

    def _decode(self, line: bytes, session_id: str) -> SessionEvent:
        if self.sealer is None:
            if line.startswith(_SEALED_START) and _sealed_record(line) is not None:
                raise CorruptError(
                    "sealed, but this store has no sealer configured (options.sealer)"
                )
            return parse_event(line)
        record = _sealed_record(line)
        if record is None:
            raise CorruptError("not sealed, though this store seals every event")
        try:
            plaintext = self.sealer.open(SESSION_EVENT, session_id, record)
        except LockedError as exc:
            raise LockedError(
                f"session {session_id!r} is sealed and cannot be read now: {exc}"
            ) from None
        return parse_event(plaintext)

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
