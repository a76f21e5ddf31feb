"""The append-only session log and its incremental projection to messages.

The log is the single source of truth; message history is *derived* from it.  The
projection consumes only events it has not seen yet, so deriving the request for a step
costs O(new events), not O(log).  :meth:`Session.derive_messages` returns a
:class:`MessagesView` -- an immutable view of the first *n* derived messages, cheap to make
because the underlying list is only ever appended to.  The projection also keeps a running
character count of what it derived (:func:`message_chars`), so a view knows the size of the
history it covers (:attr:`MessagesView.chars`) without walking it.
"""

from __future__ import annotations

import json
import time
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, MutableSequence, Sequence
from typing import Any, cast, overload

from agentrig._construct import (
    construct_trusted,
    instance_of,
    share_fields_set,
    share_held_fields_sets,
    shared_fields_set,
)
from agentrig.errors import AgentrigError
from agentrig.ids import SessionId
from agentrig.llm import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    UserMessage,
)
from agentrig.session._events import (
    AssistantMessageEvent,
    ContextCompacted,
    RequestHeader,
    SessionEvent,
    SessionEventData,
    SteeringMessage,
    StepEnd,
    StepStart,
    SystemPrompt,
    ToolCallEvent,
    ToolResultEvent,
    TraceIds,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
)

__all__ = [
    "INTERRUPTED_NOTE",
    "EventsView",
    "MessagesView",
    "Session",
    "SessionLogError",
    "message_chars",
]

ConversationMessage = UserMessage | AssistantMessage | ToolMessage
Message = SystemMessage | ConversationMessage

INTERRUPTED_NOTE = "[This response was interrupted before it finished.]"
"""Appended (for the model only) to an interrupted assistant message's text.  Neutral
mechanism text; override per session with ``Session(interrupted_note=...)``."""


# events whose message enters the projection as it is
_PLAIN_MESSAGE_EVENTS = (UserMessageEvent, SteeringMessage, ToolResultEvent)
# events that carry no message (the loop's step markers, request headers, turn ends)
_WITHOUT_MESSAGE = frozenset((StepStart, StepEnd, RequestHeader, TurnEnd))


class SessionLogError(AgentrigError):
    """The log was used against its contract (e.g. a non-monotonic seq on load)."""

    code = "session.log"


# json.dumps with any keyword builds a new encoder per call; one shared encoder is half the cost
_ENCODE_LOOSE = json.JSONEncoder(default=str).encode


def message_chars(message: Message) -> int:
    """The characters a message adds to a request, as the context guard estimates them:
    its text blocks, plus the JSON of each tool call's arguments."""
    # exact classes first: isinstance on pydantic's ABC-based metaclass is slow when false
    if type(message) in _CONVERSATION:
        content = cast("ConversationMessage", message).content
    elif isinstance(message, SystemMessage):
        return len(message.text)
    else:
        content = message.content
    chars = 0
    for block in content:
        if type(block) is TextBlock:
            chars += len(block.text)
        elif isinstance(block, ToolCallBlock):  # no text: a failed getattr on a model is slow
            chars += len(_ENCODE_LOOSE(block.arguments))
        else:
            chars += len(getattr(block, "text", "") or "")
    return chars


_CONVERSATION = frozenset((UserMessage, AssistantMessage, ToolMessage))


class MessagesView(Sequence[Message]):
    """An immutable view: the system head (if any) then the first ``n`` derived messages.

    ``chars`` is the sum of :func:`message_chars` over the viewed messages (head included)
    when the session supplied it, else computed on first use.
    """

    __slots__ = ("_chars", "_head", "_items", "_n")

    def __init__(
        self,
        head: SystemMessage | None,
        items: list[Message],
        n: int,
        chars: int | None = None,
    ) -> None:
        self._head = head
        self._items = items
        self._n = n
        self._chars = chars

    @property
    def chars(self) -> int:
        """The estimated size of the viewed history in characters (O(1) from a session)."""
        if self._chars is None:
            self._chars = sum(message_chars(m) for m in self)
        return self._chars

    def __len__(self) -> int:
        return self._n + (1 if self._head is not None else 0)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            return tuple(self)[index]
        length = len(self)
        if index < 0:
            index += length
        if not 0 <= index < length:
            raise IndexError("message index out of range")
        if self._head is not None:
            if index == 0:
                return self._head
            index -= 1
        return self._items[index]

    def __iter__(self) -> Iterator[Message]:
        if self._head is not None:
            yield self._head
        items = self._items
        for i in range(self._n):
            yield items[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._head, self._n, id(self._items)))

    def __repr__(self) -> str:
        return f"<MessagesView {len(self)} messages>"


# The log keeps each event as three columns -- seq, time, data -- and builds the
# ``SessionEvent`` envelope when it is read (a pydantic instance with its ``__dict__`` is
# ~260 bytes; the session of a finished 6-call run holds ~40 events).
_ENVELOPE_FIELDS: set[str] = {"seq", "time", "data"}
_TRACED_FIELDS: set[str] = {"seq", "time", "data", "trace"}

# event payloads repeated verbatim across steps, runs and agents: equal ones are shared
_INTERNED_CLASSES: tuple[type[SessionEventData], ...] = (
    StepStart,
    StepEnd,
    RequestHeader,
    TurnEnd,
    SystemPrompt,
)
_INTERNED_TYPES = frozenset(_INTERNED_CLASSES)
_INTERNED: dict[tuple[Any, ...], SessionEventData] = {}
_INTERNED_MAX = 4096

# payloads kept packed -- ``(class, fields-set, *field values)`` -- and rebuilt when read;
# the messages they carry stay objects (the derived history shares them)
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

# payloads that are just their message (the fields-set {"message"}, the type tag): the log
# keeps the message itself, the object the derived history holds, and nothing around it
_BARE: dict[type[Any], type[SessionEventData]] = {
    AssistantMessage: AssistantMessageEvent,
    UserMessage: UserMessageEvent,
}
_BARE_OF: dict[type[SessionEventData], type[Any]] = {v: k for k, v in _BARE.items()}
_BARE_TYPES: dict[type[SessionEventData], str] = {
    cls: cls.model_fields["type"].default for cls in _BARE_OF
}
_BARE_FIELDS: set[str] = {"message"}

Packed = tuple[Any, ...]
#: what a run of events keeps of the span that produced them: its ids as the trace context
#: gave them (built into a ``TraceIds`` only when an event is read), a loaded ``TraceIds``,
#: or None (no span)
TraceKey = tuple[str, str] | TraceIds | None
#: the TraceIds of recent spans, shared by every session (a turn's span and its calls' spans
#: write alternately): built once per span, when an event of it is first read
_TRACE_IDS: dict[tuple[str, str], TraceIds] = {}
_TRACE_IDS_MAX = 512
Stored = SessionEventData | Packed | AssistantMessage | UserMessage


def _trace_of(key: TraceKey) -> TraceIds | None:
    """The ``TraceIds`` an event of a run keyed ``key`` carries."""
    if not isinstance(key, tuple):  # no span, or loaded as it is
        return key
    trace = _TRACE_IDS.get(key)
    if trace is None:
        if len(_TRACE_IDS) >= _TRACE_IDS_MAX:
            _TRACE_IDS.clear()
        trace = construct_trusted(TraceIds, {"trace_id": key[0], "span_id": key[1]})
        _TRACE_IDS[key] = trace
    return trace


def _envelope(
    seq: int, time: float, data: SessionEventData, trace: TraceIds | None = None
) -> SessionEvent:
    state = {"seq": seq, "time": time, "data": data, "trace": trace}
    return instance_of(SessionEvent, state, _ENVELOPE_FIELDS if trace is None else _TRACED_FIELDS)


def _store(data: SessionEventData) -> Stored:
    """What the log keeps for ``data``: a shared equal payload, a packed tuple, or ``data``."""
    cls = type(data)
    if cls in _INTERNED_TYPES:
        try:
            key = (cls, *data.__dict__.values())
            shared = _INTERNED.get(key)
        except TypeError:  # an unhashable value (an error dict): kept as it is
            shared = None
            key = ()
        if shared is not None:
            return shared
        if key:
            if len(_INTERNED) >= _INTERNED_MAX:
                _INTERNED.clear()
            _INTERNED[key] = data
    share_fields_set(data)
    if cls in _PACKED_TYPES:
        state = data.__dict__
        if tuple(state) == _FIELDS[cls]:  # every field, in order (as pydantic keeps them)
            fields_set = data.__pydantic_fields_set__
            bare = _BARE_OF.get(cls)
            if bare is not None:
                message: AssistantMessage | UserMessage = state["message"]
                if (
                    type(message) is bare
                    and fields_set == _BARE_FIELDS
                    and state["type"] == _BARE_TYPES[cls]
                ):
                    return message
            return (cls, fields_set, *state.values())
    return data


# the fields after ``type`` of the payloads push_trusted() keeps without building them, and
# their type tags
_TRUSTED_FIELDS: dict[type[SessionEventData], tuple[str, ...]] = {
    cls: tuple(name for name in cls.model_fields if name != "type")
    for cls in (*_PACKED, *_INTERNED_CLASSES)
}
_TAGS: dict[type[SessionEventData], str] = {
    cls: cls.model_fields["type"].default for cls in _TRUSTED_FIELDS
}


def _stored_trusted(cls: type[SessionEventData], fields: dict[str, Any]) -> Stored | None:
    """What :func:`_store` keeps for ``cls(**fields)``, without building it: None when it
    must be built (not every field given in order, an interned payload not seen yet)."""
    names = tuple(fields)
    if _TRUSTED_FIELDS.get(cls) != names:
        return None
    values = fields.values()
    if cls in _INTERNED_TYPES:
        try:
            return _INTERNED.get((cls, _TAGS[cls], *values))
        except TypeError:  # an unhashable value: built and kept as it is
            return None
    share_held_fields_sets(values)  # what share_fields_set(payload) does to what it holds
    bare = _BARE_OF.get(cls)
    if bare is not None and type(fields["message"]) is bare:
        message: AssistantMessage | UserMessage = fields["message"]
        return message
    return (cls, shared_fields_set(cls, names), _TAGS[cls], *values)


def _payload(stored: Stored) -> SessionEventData:
    """The payload ``stored`` keeps (rebuilt, equal to the appended one, when packed)."""
    if isinstance(stored, tuple):
        cls: type[SessionEventData] = stored[0]
        return instance_of(cls, dict(zip(_FIELDS[cls], stored[2:], strict=True)), stored[1])
    event = _BARE.get(type(stored))
    if event is not None:
        state = {"type": _BARE_TYPES[event], "message": stored}
        return instance_of(event, state, _BARE_FIELDS)
    return cast("SessionEventData", stored)


class EventsView(Sequence[SessionEvent]):
    """A snapshot of the first ``n`` events of a log; envelopes are built as they are read
    (equal, not identical, to the ones :meth:`Session.append` returned).

    It compares by content with any sequence and so, like a list, is unhashable: a hash
    consistent with that equality would have to hash every event (and payloads carrying
    dicts have none).
    """

    __slots__ = ("_data", "_n", "_runs", "_seqs", "_times")

    def __init__(
        self,
        seqs: Sequence[int],
        times: MutableSequence[float],
        data: list[Stored],
        runs: tuple[list[int], list[TraceKey]] | None,
        n: int,
    ) -> None:
        self._seqs = seqs
        self._times = times
        self._data = data
        self._runs = runs  # the session's trace runs (append-only: later ones start >= n)
        self._n = n

    def _event(self, i: int) -> SessionEvent:
        runs = self._runs
        trace = None
        if runs is not None and i >= runs[0][0]:
            trace = _trace_of(runs[1][bisect_right(runs[0], i) - 1])
        return _envelope(self._seqs[i], self._times[i], _payload(self._data[i]), trace)

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> SessionEvent: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SessionEvent]: ...
    def __getitem__(self, index: int | slice) -> SessionEvent | Sequence[SessionEvent]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._n)))
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


def _annotate(message: AssistantMessage, note: str) -> AssistantMessage:
    if not note:
        return message
    return message.model_copy(update={"content": (*message.content, TextBlock(text=note))})


class Session:
    """An append-only event log with an incrementally maintained message projection."""

    # the trace ids of the events, as runs: the positions where runs start and what each
    # keeps of its span (TraceKey); a run begins only when the producing span changes.
    # Class defaults until a first run: an untraced session keeps nothing for them.
    _trace_runs: tuple[list[int], list[TraceKey]] | None = None
    _trace_key: TraceKey = None  # the last run's

    def __init__(
        self,
        session_id: SessionId,
        *,
        clock: Callable[[], float] = time.time,
        interrupted_note: str = INTERRUPTED_NOTE,
    ) -> None:
        self.id: SessionId = session_id
        # the log, column by column (see _envelope)
        # seqs: only the first while they run on without a gap (always, but for a loaded
        # log with gaps), a range standing for them; else one by one
        self._first_seq = 1
        self._seqs: list[int] | None = None
        # unix times as C doubles (exact for a float); a list once a time is not a float
        self._times: MutableSequence[float] = array("d")
        self._data: list[Stored] = []
        self._clock = clock
        self._interrupted_note = interrupted_note
        self._messages: list[Message] = []
        self._projected = 0
        self._chars = 0  # message_chars() of self._messages, kept by the projection
        #: the latest provider-reported usage at a completed response (its total tokens) and
        #: ``_chars`` just after that response; None before one (or since a compaction)
        self._report: tuple[int, int] | None = None
        self._system: SystemMessage | None = None
        self._listeners: list[Callable[[SessionEvent], None]] = []
        #: ``(trace_id, span_id)`` of the current span, when a tracing plugin is active: each
        #: appended event carries them (``SessionEvent.trace``)
        self.trace_ids: Callable[[], tuple[str, str] | None] | None = None

    # ---- the log ---------------------------------------------------------------------------
    @property
    def events(self) -> Sequence[SessionEvent]:
        """The events so far: a read-only snapshot (later appends do not show in it)."""
        n = len(self._data)
        first = self._first_seq
        seqs = range(first, first + n) if self._seqs is None else self._seqs
        return EventsView(seqs, self._times, self._data, self._trace_runs, n)

    def __len__(self) -> int:
        return len(self._data)

    @property
    def last_seq(self) -> int:
        if self._seqs is not None:
            return self._seqs[-1]
        n = len(self._data)
        return self._first_seq + n - 1 if n else 0

    def append(self, data: SessionEventData) -> SessionEvent:
        """Append one event (the only way the log grows); listeners see it at once."""
        seq, now = self._push(data)
        # ``data`` is an already-validated family member and seq/time are ours: the
        # envelope is built without re-validating them on this hot path
        event = _envelope(seq, now, data, _trace_of(self._trace_key))
        for listener in self._listeners:
            listener(event)
        return event

    def push(self, data: SessionEventData) -> None:
        """:meth:`append` for a writer that does not take the event back: its envelope is
        built only when a listener is there to see it (the loop appends several per step)."""
        seq, now = self._push(data)
        if self._listeners:
            event = _envelope(seq, now, data, _trace_of(self._trace_key))
            for listener in self._listeners:
                listener(event)

    def push_trusted(self, cls: type[SessionEventData], /, **fields: Any) -> None:
        """:meth:`push` of ``cls(**fields)`` for a writer that vouches for the values' types
        (the loop, logging its own events): the log keeps what it would keep for the
        validated payload, without building it (built, equal to it, only for a listener).

        Given other than every field after ``type`` in order, or an interned payload not
        seen yet, the payload is validated and pushed as :meth:`push` does.
        """
        stored = _stored_trusted(cls, fields)
        if stored is None:
            self.push(cls(**fields))
            return
        seq, now = self._push_stored(stored)
        if self._listeners:
            event = _envelope(seq, now, _payload(stored), _trace_of(self._trace_key))
            for listener in self._listeners:
                listener(event)

    def _push(self, data: SessionEventData) -> tuple[int, float]:
        """Store ``data``; its seq and time (its trace ids: the last run's)."""
        if not isinstance(data, SessionEventData):
            raise SessionLogError(f"cannot append {type(data).__name__}: not a session event")
        return self._push_stored(_store(data))

    def _push_stored(self, stored: Stored) -> tuple[int, float]:
        seqs = self._seqs
        n = len(self._data)
        seq = seqs[-1] + 1 if seqs is not None else self._first_seq + n
        now = self._clock()
        trace_ids = self.trace_ids
        if trace_ids is not None:
            ids = trace_ids()
            # one span writes several events (the same ids object): a run per span change
            if ids is not self._trace_key:
                runs = self._trace_runs
                if runs is None:
                    self._start_run(n, ids)
                else:  # _start_run, inline (the loop's spans alternate: several per step)
                    self._trace_key = ids
                    runs[0].append(n)
                    runs[1].append(ids)
        elif self._trace_key is not None:
            self._start_run(n, None)
        self._keep_time(now)
        if seqs is not None:
            seqs.append(seq)
        self._data.append(stored)
        return seq, now

    def _start_run(self, n: int, key: TraceKey) -> None:
        """The events from position ``n`` on carry ``key``'s trace ids (until the next run)."""
        self._trace_key = key
        runs = self._trace_runs
        if runs is None:
            self._trace_runs = runs = ([], [])
        runs[0].append(n)
        runs[1].append(key)

    def load(self, events: Sequence[SessionEvent]) -> None:
        """Adopt persisted events (for resume); the log must be empty, seqs increasing."""
        if self._data:
            raise SessionLogError("load() needs an empty session log")
        previous = 0
        for event in events:
            if event.seq <= previous:
                raise SessionLogError(
                    f"session {self.id}: seq {event.seq} after {previous} is not increasing"
                )
            previous = event.seq
        for event in events:
            n = len(self._data)
            trace = event.trace
            if trace is not self._trace_key and trace != self._trace_key:
                self._start_run(n, trace)
            self._keep_time(event.time)
            seqs, first = self._seqs, self._first_seq
            if seqs is not None:
                seqs.append(event.seq)
            elif not n:
                self._first_seq = event.seq
            elif event.seq != first + n:  # a gap: kept one by one from here on
                self._seqs = [*range(first, first + n), event.seq]
            self._data.append(_store(event.data))

    def _keep_time(self, value: float) -> None:
        times = self._times
        if type(value) is not float and isinstance(times, array):
            self._times = times = list(times)  # kept exactly as given (an int stays an int)
        times.append(value)

    def subscribe(self, listener: Callable[[SessionEvent], None]) -> Callable[[], None]:
        """Call ``listener(event)`` for every appended event; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    # ---- the projection ------------------------------------------------------------------
    @property
    def system_prompt(self) -> str | None:
        self._project()
        return self._system.text if self._system is not None else None

    def _project(self) -> None:
        events = self._data
        end = len(events)
        if self._projected == end:
            return
        messages = self._messages
        note = self._interrupted_note
        chars = self._chars
        for i in range(self._projected, end):
            data: Any = events[i]
            message: Any
            kind = type(data)
            reply = False  # an assistant message: its usage may be the latest report
            if kind is AssistantMessage:  # kept bare (see _store)
                message = _annotate(data, note) if data.interrupted else data
                reply = True
            elif kind is UserMessage:
                message = data
            elif kind is tuple:  # packed (see _store): the message is a field
                at = _MESSAGE_AT.get(data[0])
                if at is None:
                    continue
                message = data[at]
                if data[0] is AssistantMessageEvent:
                    reply = True
                    if message.interrupted:
                        message = _annotate(message, note)
            elif kind in _WITHOUT_MESSAGE:  # by exact class: no isinstance chain on models
                continue
            elif isinstance(data, _PLAIN_MESSAGE_EVENTS):
                message = data.message
            elif isinstance(data, AssistantMessageEvent):
                message = data.message
                reply = True
                if message.interrupted:
                    message = _annotate(message, note)
            else:
                if isinstance(data, SystemPrompt):
                    # One head message: a later prompt replaces the earlier one in place.
                    self._system = SystemMessage(text=data.text)
                elif isinstance(data, ContextCompacted):
                    messages, chars = self._compacted(data)
                continue
            messages.append(message)
            chars += message_chars(message)
            if reply and message.usage is not None and not message.interrupted:
                # the provider's count at a completed response: what the history held then
                self._report = (message.usage.total, chars)
        self._chars = chars
        self._projected = end

    def _compacted(self, data: ContextCompacted) -> tuple[list[Message], int]:
        """Apply a compaction: its messages replace the first ``replaced`` derived ones.

        A new list (views made before keep the old one); the provider's last report counted
        the longer history, so until the next reply the size is an estimate again.
        """
        kept = self._messages[data.replaced :]
        messages: list[Message] = [*data.messages, *kept]
        self._messages = messages
        self._report = None
        return messages, sum(message_chars(m) for m in messages)

    def derive_messages(self) -> MessagesView:
        """The model-facing history: system head, then user/assistant/tool messages.

        Interrupted assistant messages carry the interruption note; events of unknown
        plugin variants contribute nothing.
        """
        self._project()
        system = self._system
        chars = self._chars + (len(system.text) if system is not None else 0)
        return MessagesView(system, self._messages, len(self._messages), chars)

    def context_basis(self) -> tuple[int | None, int]:
        """The latest provider-reported usage at a completed response (total tokens; None
        when none since the start or the last compaction), and the characters of the
        messages derived after it (all of them without a report), system head excluded."""
        self._project()
        report = self._report
        if report is None:
            return None, self._chars
        return report[0], self._chars - report[1]

    def find(self, predicate: Callable[[SessionEvent], bool]) -> list[SessionEvent]:
        return [e for e in self.events if predicate(e)]
