"""The ``jsonl`` session store: one JSON line per event, one file per session.

A crash can only tear the *last* line; ``load`` returns every complete line before it and
reports the damage, and the next writer moves the torn bytes to ``<session>.jsonl.torn``
(so nothing written is lost) before appending.  Writes are buffered and flushed per batch;
``durable = true`` also fsyncs each batch.  File I/O runs inline: a small append costs less
than a hop to a worker thread.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agentrig.builtins._locks import WriterLock
from agentrig.ids import session_id as _check_session_id
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


def _split_complete(raw: bytes) -> tuple[bytes, bytes]:
    """``(complete lines, torn tail)`` of a JSONL file's bytes."""
    cut = raw.rfind(b"\n") + 1
    return raw[:cut], raw[cut:]


class _JsonlWriter:
    def __init__(self, path: Path, lock: WriterLock, durable: bool) -> None:
        self._lock = lock
        self._durable = durable
        self._file: IO[bytes] | None = open(path, "ab")  # noqa: SIM115 - held open by design

    async def append(self, events: Sequence[SessionEvent]) -> None:
        if self._file is None:
            raise SessionStoreError("this session writer is closed")
        payload = "".join(dump_event(e) + "\n" for e in events).encode("utf-8")
        self._file.write(payload)
        self._file.flush()
        if self._durable:
            os.fsync(self._file.fileno())

    async def aclose(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            try:
                file.close()
            finally:
                self._lock.release()


class JsonlSessionStore:
    """Session logs as ``<directory>/<session-id>.jsonl`` files."""

    def __init__(self, directory: Path, *, durable: bool = False) -> None:
        self.directory = directory
        self.durable = durable

    def _path(self, session_id: str) -> Path:
        return self.directory / f"{_check_session_id(session_id)}.jsonl"

    def _ensure_dir(self) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)

    async def open_writer(self, session_id: str) -> _JsonlWriter:
        self._ensure_dir()
        path = self._path(session_id)
        lock = WriterLock(path.with_suffix(".lock"), session_id)
        try:
            if path.exists():
                raw = path.read_bytes()
                _complete, torn = _split_complete(raw)
                if torn:
                    # keep the torn bytes aside, then cut the file back to whole lines
                    with open(path.with_suffix(".jsonl.torn"), "ab") as aside:  # noqa: ASYNC230
                        aside.write(torn)
                    with open(path, "r+b") as file:  # noqa: ASYNC230
                        file.truncate(len(raw) - len(torn))
            else:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
                os.close(fd)
            return _JsonlWriter(path, lock, self.durable)
        except BaseException:
            lock.release()
            raise

    async def load(self, session_id: str) -> LoadReport:
        path = self._path(session_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise SessionStoreError(
                f"no stored session {session_id!r} in {self.directory}"
            ) from None
        except OSError as exc:
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
                events.append(parse_event(line))
            except (ValidationError, ValueError) as exc:
                problems.append(f"line {number} unreadable: {str(exc).splitlines()[0]}")
        return LoadReport(
            session_id=session_id,
            events=tuple(events),
            damaged=bool(problems),
            detail="; ".join(problems) or None,
        )

    async def exists(self, session_id: str) -> bool:
        return self._path(session_id).exists()

    async def list_sessions(self) -> tuple[str, ...]:
        if not self.directory.is_dir():
            return ()
        return tuple(sorted(p.stem for p in self.directory.glob("*.jsonl")))

    async def aclose(self) -> None:
        return None


def factory(spec: dict[str, Any]) -> JsonlSessionStore:
    """Entry point ``jsonl`` of ``agentrig.session_stores``."""
    options = JsonlStoreOptions.model_validate(spec.get("options", {}))
    directory = Path(options.directory)
    if not directory.is_absolute():
        directory = Path(spec.get("base_dir", ".")) / directory
    return JsonlSessionStore(directory, durable=options.durable)


factory.options_model = JsonlStoreOptions  # type: ignore[attr-defined]
