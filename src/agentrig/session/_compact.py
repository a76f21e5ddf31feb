"""The compact event storage: the same events as :class:`~agentrig.session._storage.ListStorage`,
in a fraction of its memory (what each trick buys: ``benchmarks/README.md``, "Session log").

An idle agent keeps its whole log, so what one event costs is paid by every retained run.
Instead of a validated envelope per event (~260 bytes before its payload) it keeps columns:

* seqs in a list; times as C doubles;
* the producing span as runs (the position where a span's events begin and its ids);
* the payload as: a packed tuple ``(class, fields-set, *field values)`` for the payloads
  that carry a message or a tool call (their messages stay the objects the derived history
  holds); else the payload as it is (payloads repeated across steps and sessions -- step
  markers, request headers, system prompts -- arrive shared: :mod:`._shared`).

Envelopes and packed payloads are rebuilt when read, with pydantic's public
``model_construct`` (the values were validated when appended), equal to the appended ones.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator, MutableSequence, Sequence
from typing import Any, overload

from agentrig.session._events import (
    AssistantMessageEvent,
    RequestHeader,
    SessionEvent,
    SessionEventData,
    SteeringMessage,
    StepEnd,
    StepStart,
    ToolCallEvent,
    ToolResultEvent,
    TraceIds,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
)
from agentrig.session._storage import Contribution, TraceKey, contribution, trace_ids

__all__ = ["CompactStorage", "envelope"]

_ENVELOPE_FIELDS: set[str] = {"seq", "time", "data"}
_TRACED_FIELDS: set[str] = {"seq", "time", "data", "trace"}

_PACKED: tuple[type[SessionEventData], ...] = (
    TurnStart,
    UserMessageEvent,
    SteeringMessage,
    AssistantMessageEvent,
    ToolCallEvent,
    ToolResultEvent,
)
_PACKED_TYPES = frozenset(_PACKED)
_FIELDS: dict[type[SessionEventData], tuple[str, ...]] = {
    cls: tuple(cls.model_fields) for cls in _PACKED
}
# where a packed payload holds its ``message`` (absent: it carries none)
_MESSAGE_AT: dict[type[SessionEventData], int] = {
    cls: 2 + fields.index("message") for cls, fields in _FIELDS.items() if "message" in fields
}
# payloads that carry no message: nothing to project
_WITHOUT_MESSAGE = frozenset((StepStart, StepEnd, RequestHeader, TurnEnd))

# (class, fields set) -> one set shared by the packed payloads of that shape (a set per
# payload is 216 bytes); a frozen payload never changes it and pydantic copies it for
# ``model_copy``.  Bounded by the packed classes' field combinations.
_FIELD_SETS: dict[tuple[type[SessionEventData], frozenset[str]], set[str]] = {}
# class -> the one of its shared sets it was last packed with (one of ``_FIELD_SETS``' values)
_LAST_SET: dict[type[SessionEventData], set[str]] = {}

Packed = tuple[Any, ...]
Stored = SessionEventData | Packed


def envelope(seq: int, time: float, data: SessionEventData, trace: TraceIds | None) -> SessionEvent:
    """The envelope of an appended event, built without validating its parts again."""
    if trace is None:
        return SessionEvent.model_construct(_ENVELOPE_FIELDS, seq=seq, time=time, data=data)
    fields = _TRACED_FIELDS
    return SessionEvent.model_construct(fields, seq=seq, time=time, data=data, trace=trace)


def _shared_set(cls: type[SessionEventData], names: set[str]) -> set[str]:
    """The shared set equal to ``names`` (a shape other than the class's last one)."""
    key = (cls, frozenset(names))
    shared = _FIELD_SETS.get(key)
    if shared is None:
        shared = _FIELD_SETS[key] = set(names)
    _LAST_SET[cls] = shared
    return shared


def _payload(stored: Stored) -> SessionEventData:
    """The payload ``stored`` keeps (rebuilt, equal to the appended one, when packed)."""
    if isinstance(stored, tuple):
        cls: type[SessionEventData] = stored[0]
        return cls.model_construct(stored[1], **dict(zip(_FIELDS[cls], stored[2:], strict=True)))
    return stored


class _Runs:
    """Which span wrote which events: the positions where runs start, and each run's ids
    (built into ``TraceIds`` when an event of the run is first read)."""

    __slots__ = ("keys", "starts")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.keys: list[TraceKey] = []

    def trace_at(self, i: int) -> TraceIds | None:
        if not self.starts or i < self.starts[0]:
            return None
        run = bisect_right(self.starts, i) - 1
        key = self.keys[run]
        if isinstance(key, tuple):
            key = self.keys[run] = trace_ids(key)
        return key


class CompactStorage:
    """The events of one session kept as columns (see the module docs)."""

    __slots__ = ("_data", "_key", "_runs", "_seqs", "_times")

    def __init__(self) -> None:
        self._seqs: list[int] = []
        # unix times as C doubles (exact for a float); a list once a time is not a float
        self._times: MutableSequence[float] = array("d")
        self._data: list[Stored] = []
        self._runs: _Runs | None = None  # made by the first traced event
        self._key: TraceKey = None  # the last run's

    def __len__(self) -> int:
        return len(self._data)

    @property
    def last_seq(self) -> int:
        return self._seqs[-1] if self._seqs else 0

    def add(self, seq: int, time: float, data: SessionEventData, trace: TraceKey) -> None:
        if trace is not self._key and trace != self._key:  # one span writes several events
            self._key = trace
            runs = self._runs
            if runs is None:
                runs = self._runs = _Runs()
            runs.starts.append(len(self._data))
            runs.keys.append(trace)
        self._seqs.append(seq)
        times = self._times
        if type(time) is not float and isinstance(times, array):
            self._times = times = list(times)  # kept exactly as given (an int stays an int)
        times.append(time)
        cls = type(data)
        if cls in _PACKED_TYPES:
            state = data.__dict__
            if tuple(state) == _FIELDS[cls]:  # every field, in order (as pydantic keeps them)
                names = data.model_fields_set
                last = _LAST_SET.get(cls)  # the shape the class came in last time (a set
                if last != names:  # compare: no frozenset built and hashed per event)
                    last = _shared_set(cls, names)
                self._data.append((cls, last, *state.values()))
                return
        self._data.append(data)  # else the payload as it is

    def snapshot(self) -> Sequence[SessionEvent]:
        return EventsView(self._seqs, self._times, self._data, self._runs, len(self._data))

    def contributions(self, start: int, end: int) -> Iterator[Contribution]:
        data = self._data
        for i in range(start, end):
            stored: Any = data[i]
            kind = type(stored)
            if kind is tuple:  # packed: the message is a field
                at = _MESSAGE_AT.get(stored[0])
                yield None if at is None else stored[at]
            elif kind in _WITHOUT_MESSAGE:  # by exact class: no isinstance chain on models
                yield None
            else:
                yield contribution(stored)


class EventsView(Sequence[SessionEvent]):
    """A snapshot of the first ``n`` events; envelopes are built as they are read (equal,
    not identical, to the ones :meth:`Session.append` returned).

    It compares by content with any sequence and so, like a list, is unhashable.
    """

    __slots__ = ("_data", "_n", "_runs", "_seqs", "_times")

    def __init__(
        self,
        seqs: Sequence[int],
        times: MutableSequence[float],
        data: list[Stored],
        runs: _Runs | None,
        n: int,
    ) -> None:
        self._seqs = seqs
        self._times = times
        self._data = data
        self._runs = runs  # append-only: later runs start at or after n
        self._n = n

    def _event(self, i: int) -> SessionEvent:
        trace = None if self._runs is None else self._runs.trace_at(i)
        return envelope(self._seqs[i], self._times[i], _payload(self._data[i]), trace)

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> SessionEvent: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SessionEvent]: ...
    def __getitem__(self, index: int | slice) -> SessionEvent | Sequence[SessionEvent]:
        if isinstance(index, slice):
            return tuple(self._event(i) for i in range(*index.indices(self._n)))
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError("event index out of range")
        return self._event(index)

    def __iter__(self) -> Iterator[SessionEvent]:
        event = self._event
        for i in range(self._n):
            yield event(i)

    def __reversed__(self) -> Iterator[SessionEvent]:
        event = self._event
        for i in range(self._n - 1, -1, -1):
            yield event(i)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __repr__(self) -> str:
        return f"<EventsView {self._n} events>"
