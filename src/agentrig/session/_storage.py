"""Where a :class:`~agentrig.session.Session` keeps its events, and the plain reference.

The session validates every payload, numbers it and stamps its time; a storage only keeps
what it is given and reads it back.  Two implement :class:`EventStorage`:
:class:`ListStorage` -- a list of validated envelopes, obviously right -- and the compact
storage of :mod:`agentrig.session._compact`, which keeps the same events in less memory.
The session and agent test suites run against both (``tests/session/conftest.py``), so the
compact one is held to the reference's behaviour.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, overload

from agentrig.llm import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from agentrig.session._events import (
    AssistantMessageEvent,
    ContextCompacted,
    SessionEvent,
    SessionEventData,
    SteeringMessage,
    SystemPrompt,
    ToolResultEvent,
    TraceIds,
    UserMessageEvent,
)

__all__ = [
    "Contribution",
    "EventStorage",
    "ListStorage",
    "TraceKey",
    "contribution",
    "trace_ids",
]

ConversationMessage = UserMessage | AssistantMessage | ToolMessage
Message = SystemMessage | ConversationMessage

#: what an event adds to the derived history: a message, the system prompt, a compaction
#: (its messages replace the first derived ones), or nothing
Contribution = ConversationMessage | SystemPrompt | ContextCompacted | None

#: the span an event was written in: the ``(trace_id, span_id)`` the trace context gave
#: (the same tuple object for every event of one span), ids loaded with it, or None
TraceKey = tuple[str, str] | TraceIds | None

_MESSAGE_EVENTS = (UserMessageEvent, SteeringMessage, ToolResultEvent, AssistantMessageEvent)


def contribution(data: SessionEventData) -> Contribution:
    """The message ``data`` enters into the history, its system prompt or compaction, or
    None."""
    if isinstance(data, _MESSAGE_EVENTS):
        return data.message
    if isinstance(data, SystemPrompt | ContextCompacted):
        return data
    return None  # markers, headers, notices and unknown plugin events: nothing


def trace_ids(key: TraceKey) -> TraceIds | None:
    """The ``TraceIds`` an event written under ``key`` carries."""
    if isinstance(key, tuple):
        return TraceIds(trace_id=key[0], span_id=key[1])
    return key


class EventStorage(Protocol):
    """The events of one session, in order: appended, adopted on load, read back."""

    def __len__(self) -> int: ...

    @property
    def last_seq(self) -> int:
        """The seq of the last event (0 when empty)."""
        ...

    def add(self, seq: int, time: float, data: SessionEventData, trace: TraceKey) -> None:
        """Keep one event; ``data`` is validated and ``seq`` greater than the last."""
        ...

    def snapshot(self) -> Sequence[SessionEvent]:
        """The events so far, as envelopes equal to the appended ones (later ones unseen)."""
        ...

    def contributions(self, start: int, end: int) -> Iterator[Contribution]:
        """What the events at positions ``start`` to ``end`` add to the history, in order."""
        ...


class ListStorage:
    """The reference storage: every event kept as its validated :class:`SessionEvent`."""

    __slots__ = ("_events",)

    def __init__(self) -> None:
        self._events: list[SessionEvent] = []

    def __len__(self) -> int:
        return len(self._events)

    @property
    def last_seq(self) -> int:
        return self._events[-1].seq if self._events else 0

    def add(self, seq: int, time: float, data: SessionEventData, trace: TraceKey) -> None:
        ids = trace_ids(trace)
        if ids is None:  # absent, as in a stored event written without a span
            event = SessionEvent(seq=seq, time=time, data=data)
        else:
            event = SessionEvent(seq=seq, time=time, data=data, trace=ids)
        self._events.append(event)

    def snapshot(self) -> Sequence[SessionEvent]:
        return _Prefix(self._events, len(self._events))

    def contributions(self, start: int, end: int) -> Iterator[Contribution]:
        for event in self._events[start:end]:
            yield contribution(event.data)


class _Prefix(Sequence[SessionEvent]):
    """The first ``n`` items of an append-only list (a snapshot without a copy)."""

    __slots__ = ("_items", "_n")

    def __init__(self, items: list[SessionEvent], n: int) -> None:
        self._items = items
        self._n = n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> SessionEvent: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SessionEvent]: ...
    def __getitem__(self, index: int | slice) -> SessionEvent | Sequence[SessionEvent]:
        if isinstance(index, slice):
            return tuple(self._items[: self._n][index])
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError("event index out of range")
        return self._items[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __repr__(self) -> str:
        return f"<events {self._n}>"
