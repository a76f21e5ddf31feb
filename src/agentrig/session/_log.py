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
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

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
from agentrig.session._compact import CompactStorage, envelope
from agentrig.session._events import (
    CORE_EVENTS,
    ContextCompacted,
    SessionEvent,
    SessionEventData,
    SystemPrompt,
    TraceIds,
)
from agentrig.session._shared import shared
from agentrig.session._storage import EventStorage, TraceKey, trace_ids

__all__ = [
    "INTERRUPTED_NOTE",
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


class SessionLogError(AgentrigError):
    """The log was used against its contract (e.g. a non-monotonic seq on load)."""

    code = "session.log"


# json.dumps with any keyword builds a new encoder per call; one shared encoder is half the cost
_ENCODE_LOOSE = json.JSONEncoder(default=str).encode


def message_chars(message: Message) -> int:
    """The characters a message adds to a request, as the context guard estimates them:
    its text blocks, plus the JSON of each tool call's arguments."""
    # exact classes first: isinstance on pydantic's metaclass is slow when false (and
    # typing.cast is a call: the exact class read, the name is typed Any instead)
    held: Any = message
    if type(held) in _CONVERSATION:
        content = held.content
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
_CORE_EVENTS = frozenset(CORE_EVENTS)  # exact classes first (see message_chars)


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


def _annotate(message: AssistantMessage, note: str) -> AssistantMessage:
    if not note:
        return message
    return message.model_copy(update={"content": (*message.content, TextBlock(text=note))})


#: the storage a session gets when none is given (tests swap in the reference one)
default_storage: Callable[[], EventStorage] = CompactStorage


class Session:
    """An append-only event log with an incrementally maintained message projection.

    Every payload is validated when it is built and checked to be a session event when
    appended, whoever writes it; ``storage`` keeps the events (default: the compact one).
    """

    def __init__(
        self,
        session_id: SessionId,
        *,
        clock: Callable[[], float] = time.time,
        interrupted_note: str = INTERRUPTED_NOTE,
        storage: EventStorage | None = None,
    ) -> None:
        self.id: SessionId = session_id
        self._log: EventStorage = default_storage() if storage is None else storage
        self._seq = self._log.last_seq  # the last appended event's (kept here: read per append)
        # the time and span of the last appended event, for its envelope (see append())
        self._time = 0.0
        self._key: TraceKey = None
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
        # the trace ids of the last span an envelope was built for (built once per span)
        self._trace: tuple[TraceKey, TraceIds | None] = (None, None)
        #: ``(trace_id, span_id)`` of the current span, when a tracing plugin is active: each
        #: appended event carries them (``SessionEvent.trace``)
        self.trace_ids: Callable[[], tuple[str, str] | None] | None = None

    # ---- the log ---------------------------------------------------------------------------
    @property
    def events(self) -> Sequence[SessionEvent]:
        """The events so far: a read-only snapshot (later appends do not show in it)."""
        return self._log.snapshot()

    def __len__(self) -> int:
        return len(self._log)

    @property
    def last_seq(self) -> int:
        return self._seq

    def append(self, data: SessionEventData) -> SessionEvent:
        """Append one event (the only way the log grows); listeners see it at once."""
        self._store(data)
        event = self._last_envelope(data)
        for listener in self._listeners:
            listener(event)
        return event

    def push(self, data: SessionEventData) -> None:
        """:meth:`append` for a writer that does not take the event back: its envelope is
        built only when a listener is there to see it (the loop appends several per step)."""
        if self._listeners:
            self.append(data)
        else:
            self._store(data)

    def _store(self, data: SessionEventData) -> None:
        """Number, stamp and keep ``data``; a failure leaves no gap in the seqs."""
        if type(data) not in _CORE_EVENTS and not isinstance(data, SessionEventData):
            raise SessionLogError(f"cannot append {type(data).__name__}: not a session event")
        seq = self._seq + 1
        now = self._clock()
        trace_ids = self.trace_ids
        key = None if trace_ids is None else trace_ids()
        self._log.add(seq, now, data, key)
        self._seq, self._time, self._key = seq, now, key  # advanced once kept

    def _last_envelope(self, data: SessionEventData) -> SessionEvent:
        """The envelope of the event just appended, whose payload is ``data``."""
        return envelope(self._seq, self._time, data, self._trace_of(self._key))

    def _trace_of(self, key: TraceKey) -> TraceIds | None:
        last, built = self._trace
        if key is not last:
            built = trace_ids(key)
            self._trace = (key, built)
        return built

    def load(self, events: Sequence[SessionEvent]) -> None:
        """Adopt persisted events (for resume); the log must be empty, seqs increasing."""
        if len(self._log):
            raise SessionLogError("load() needs an empty session log")
        previous = 0
        for event in events:
            if event.seq <= previous:
                raise SessionLogError(
                    f"session {self.id}: seq {event.seq} after {previous} is not increasing"
                )
            previous = event.seq
        for event in events:  # a repeated payload read back: the equal one kept before
            self._log.add(event.seq, event.time, shared(event.data), event.trace)
        self._seq = self._log.last_seq

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
        end = len(self._log)
        if self._projected == end:
            return
        messages = self._messages
        note = self._interrupted_note
        chars = self._chars
        # (typed Any: the exact classes are read below, see message_chars)
        items: Iterator[Any] = self._log.contributions(self._projected, end)
        for item in items:
            if item is None:
                continue
            kind = type(item)
            if kind not in _CONVERSATION:  # exact classes first (see message_chars)
                if isinstance(item, SystemPrompt):
                    # One head message: a later prompt replaces the earlier one in place.
                    self._system = SystemMessage(text=item.text)
                    continue
                if isinstance(item, ContextCompacted):
                    messages, chars = self._compacted(item)
                    continue
            message: Message = item
            # an assistant message (its usage may be the report): by exact class, else a
            # subclass of one
            is_reply = kind is AssistantMessage or (
                kind not in _CONVERSATION and isinstance(item, AssistantMessage)
            )
            reply: AssistantMessage | None = item if is_reply else None
            if reply is not None and reply.interrupted:
                message = _annotate(reply, note)
            messages.append(message)
            chars += message_chars(message)
            if reply is not None and reply.usage is not None and not reply.interrupted:
                # the provider's count at a completed response: what the history held then
                self._report = (reply.usage.total, chars)
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
