"""The session persistence port.

A :class:`SessionStore` appends events and loads them back.  Its guarantees:

* a crash mid-write loses at most the events being written: ``load`` returns every
  complete event and says what was damaged (:class:`LoadReport`);
* one writer per session: a second :meth:`SessionStore.open_writer` on the same session is
  refused with :class:`WriterConflictError` until the first closes (or its process dies);
* events of plugin variants nobody installed are written back unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from agentrig.errors import AgentrigError
from agentrig.session._events import SessionEvent

__all__ = [
    "LoadReport",
    "SessionStore",
    "SessionStoreError",
    "SessionWriter",
    "WriterConflictError",
    "dump_event",
    "parse_event",
]


class SessionStoreError(AgentrigError):
    """A session store could not read or write."""

    code = "session.store"


class WriterConflictError(SessionStoreError):
    """Another writer holds this session."""

    code = "session.writer_conflict"
    category = "user"


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
    """One event as compact JSON (unknown variants dump their raw data unchanged)."""
    return json.dumps(event.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))


def parse_event(data: str | bytes | dict[str, Any]) -> SessionEvent:
    """Parse one persisted event."""
    if isinstance(data, dict):
        return SessionEvent.model_validate(data)
    return SessionEvent.model_validate_json(data)
