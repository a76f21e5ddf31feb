"""The session persistence port.

A :class:`SessionStore` appends events and loads them back.  Its guarantees:

* a crash mid-write loses at most the events being written: ``load`` returns every
  complete event and says what was damaged (:class:`LoadReport`), gaps in the ``seq``
  numbering included (:func:`sequence_problems`);
* an append that fails part-way (disk full, an I/O error, a short write) raises, and that
  writer refuses every later append until the session is opened again -- so no later event
  is confirmed on top of a torn record; every event an ``append`` confirmed loads back;
* a file that is not a session log at all is refused (:class:`NotASessionLogError`), never
  resumed with no events and appended to;
* a writer that is closed leaves no lock file behind;
* one writer per session: a second :meth:`SessionStore.open_writer` on the same session is
  refused with :class:`WriterConflictError` until the first closes (or its process dies);
* events of plugin variants nobody installed are written back unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from agentrig.catalog import CatalogKey
from agentrig.errors import AgentrigError
from agentrig.ids import EntryId
from agentrig.session._events import SessionEvent
from agentrig.session._versions import SESSION_EVENT_CODEC

__all__ = [
    "BrokenWriterError",
    "LoadReport",
    "NotASessionLogError",
    "SESSION_STORES",
    "SessionStore",
    "SessionStoreError",
    "SessionWriter",
    "WriterConflictError",
    "dump_event",
    "parse_event",
    "sequence_problems",
    "stored_version",
]


class SessionStoreError(AgentrigError):
    """A session store could not read or write."""

    code = "session.store"


class WriterConflictError(SessionStoreError):
    """Another writer holds this session."""

    code = "session.writer_conflict"
    category = "user"


class NotASessionLogError(SessionStoreError):
    """The stored file is not a session log (random bytes, another format): refused."""

    code = "session.not_a_log"
    category = "user"


class BrokenWriterError(SessionStoreError):
    """An earlier append of this writer failed; it appends nothing more until reopened."""

    code = "session.writer_broken"


@attrs.frozen(slots=True)
class LoadReport:
    """What ``load`` found: the complete events, and any damage it stepped over."""

    session_id: str
    events: tuple[SessionEvent, ...]
    damaged: bool = False
    detail: str | None = None


@runtime_checkable
class SessionWriter(Protocol):
    """The single writer of one session."""

    async def append(self, events: Sequence[SessionEvent]) -> None: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class SessionStore(Protocol):
    """Durable session logs."""

    async def open_writer(self, session_id: str) -> SessionWriter: ...

    async def load(self, session_id: str) -> LoadReport: ...

    async def exists(self, session_id: str) -> bool: ...

    async def list_sessions(self) -> tuple[str, ...]: ...

    async def aclose(self) -> None: ...


def dump_event(event: SessionEvent) -> str:
    """One event as compact JSON of the current version (``{"v":2,"seq":...}``; unknown
    variants dump their raw data unchanged)."""
    body = json.dumps(event.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))
    return SESSION_EVENT_CODEC.dump(body)


def parse_event(data: str | bytes | dict[str, Any]) -> SessionEvent:
    """Parse one persisted event, migrating an older version to the current one.

    An event without a version is version 1 (written before events were versioned); a
    version newer than this code reads raises :class:`~agentrig.schemas.SchemaTooNewError`.
    """
    return SESSION_EVENT_CODEC.parse(data)


def stored_version(data: str | bytes) -> int | None:
    """The version a stored event names (1 when it names none); None when it is not a JSON
    object or its version is not a positive integer."""
    return SESSION_EVENT_CODEC.version_of(data)


def sequence_problems(events: Sequence[SessionEvent]) -> list[str]:
    """What is wrong with the ``seq`` numbering of loaded events: gaps, repeats, steps back.

    A log numbers its events 1, 2, 3, ...; a gap means events were lost (a damaged record
    the store stepped over, or a record removed by hand).
    """
    problems: list[str] = []
    previous = 0
    for event in events:
        seq = event.seq
        if seq == previous + 1:
            pass
        elif seq > previous + 1:
            missing = (
                f"event {previous + 1} is"
                if seq == previous + 2
                else f"events {previous + 1}-{seq - 1} are"
            )
            problems.append(f"{missing} missing (seq jumps from {previous} to {seq})")
        elif seq == previous:
            problems.append(f"seq {seq} appears twice")
        else:
            problems.append(f"seq steps back from {previous} to {seq}")
        previous = max(previous, seq)
    return problems


SESSION_STORES: CatalogKey[EntryId, SessionStore] = CatalogKey("session_stores")
"""The runtime's session stores by ``[session_stores.<id>]``."""
