"""The compact storage keeps what the reference storage keeps (issue 27).

The whole session and agent suites run on both (the root conftest); this test writes one
log of every kind of loop event, traced and untraced, loaded with gaps, into each and
compares everything a reader can see.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentrig.ids import SessionId
from agentrig.llm import AssistantMessage, TextBlock, ToolCallBlock, ToolMessage, UserMessage
from agentrig.session import (
    AssistantMessageEvent,
    CompactStorage,
    EventStorage,
    ListStorage,
    Notice,
    RequestHeader,
    Session,
    SessionEvent,
    StepEnd,
    StepStart,
    SystemPrompt,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
    dump_event,
)

SPAN = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")


def payloads() -> list[Any]:
    call = ToolCallBlock.from_json("c1", "noop", '{"x": 1}')
    cut = AssistantMessage(content=(TextBlock(text="par"),), interrupted=True)
    return [
        SystemPrompt(text="be brief"),
        TurnStart(turn=1, run_id="run_1"),
        StepStart(turn=1, step=1),
        UserMessageEvent(message=UserMessage.of("go")),
        RequestHeader(provider="p", model="m", tools=("noop",)),
        AssistantMessageEvent(message=AssistantMessage(content=(call,), stop_reason="tool_calls")),
        ToolCallEvent(call=call, invocation_id="1.1.0"),
        ToolResultEvent(message=ToolMessage.of("c1", "noop", "ok"), duration_ms=0.5),
        StepEnd(turn=1, step=1),
        AssistantMessageEvent(message=cut),
        Notice(source="hook", text="shown to the user only"),
        TurnEnd(turn=1, reason="interrupted", error={"code": "x", "message": "y"}),
    ]


def write(storage: EventStorage, data: list[Any]) -> tuple[Session, list[SessionEvent]]:
    ticks = iter(range(1, 100))
    session = Session(SessionId("s"), clock=lambda: 1_700_000_000.25 + next(ticks), storage=storage)
    seen: list[SessionEvent] = []
    session.subscribe(seen.append)
    for i, payload in enumerate(data):
        session.trace_ids = (lambda: SPAN) if 3 <= i < 7 else None
        session.push(payload)
    return session, seen


def readable(session: Session, seen: list[SessionEvent]) -> tuple[Any, ...]:
    events = list(session.events)
    return (
        [dump_event(e) for e in events],
        events,
        [dump_event(e) for e in seen],
        list(session.derive_messages()),
        session.derive_messages().chars,
        session.system_prompt,
        session.last_seq,
        len(session),
        [e.data.model_fields_set for e in events],
    )


def test_both_storages_read_back_the_same_log() -> None:
    data = payloads()
    compact = write(CompactStorage(), data)
    plain = write(ListStorage(), data)
    assert readable(*compact) == readable(*plain)
    for kind in (CompactStorage, ListStorage):  # loaded with gaps, then appended to
        again = Session(SessionId("again"), storage=kind())
        again.load([e.model_copy(update={"seq": 2 * e.seq}) for e in plain[0].events])
        again.append(StepStart(turn=2, step=1))
        assert [e.seq for e in again.events] == [*range(2, 25, 2), 25]
        assert list(again.derive_messages()) == list(plain[0].derive_messages())


def test_a_shared_payload_keeps_the_fields_its_writer_set() -> None:
    """Equal payloads are shared between logs, but only with the same fields set: one parsed
    from JSON (``type`` set) and one built in code read back as they were written, whichever
    the process stored first."""
    parsed = StepStart.model_validate({"type": "step/start", "turn": 7, "step": 3})
    built = StepStart(turn=7, step=3)
    assert parsed == built
    assert parsed.model_fields_set != built.model_fields_set
    for first, second in ((parsed, built), (built, parsed)):
        logs = [Session(SessionId(f"s{i}"), storage=CompactStorage()) for i in range(2)]
        logs[0].append(first)
        logs[1].append(second)
        assert logs[0].events[0].data.model_fields_set == first.model_fields_set
        assert logs[1].events[0].data.model_fields_set == second.model_fields_set


def test_a_packed_payload_keeps_its_own_fields_set_whatever_came_before() -> None:
    """A packed class met in one shape, then another, then the first again: each event
    reads back with the fields its writer set (the storage's last-shape shortcut is
    checked by value every time)."""
    message = UserMessage.of("hi")
    built = UserMessageEvent(message=message)
    parsed = UserMessageEvent.model_validate({"type": "user/message", "message": message})
    assert built.model_fields_set != parsed.model_fields_set
    session = Session(SessionId("s-shapes"), storage=CompactStorage())
    written = [built, parsed, built, parsed, parsed, built]
    for data in written:
        session.append(data)
    read = [e.data.model_fields_set for e in session.events]
    assert read == [d.model_fields_set for d in written]


class _RefusesOnce:
    """A storage that refuses its second event (a full disk, say), then keeps the rest."""

    def __init__(self, inner: EventStorage) -> None:
        self.inner = inner
        self.calls = 0

    def __len__(self) -> int:
        return len(self.inner)

    @property
    def last_seq(self) -> int:
        return self.inner.last_seq

    def add(self, seq: int, time: float, data: Any, trace: Any) -> None:
        self.calls += 1
        if self.calls == 2:
            raise OSError("refused")
        self.inner.add(seq, time, data, trace)

    def snapshot(self) -> Any:
        return self.inner.snapshot()

    def contributions(self, start: int, end: int) -> Any:
        return self.inner.contributions(start, end)


def test_an_event_the_storage_refused_leaves_no_gap_in_the_seqs() -> None:
    # the session numbers events itself (not by asking the storage per append)
    for kind in (CompactStorage, ListStorage):
        session = Session(SessionId("s"), storage=_RefusesOnce(kind()))
        session.push(StepStart(turn=1, step=1))
        with pytest.raises(OSError, match="refused"):
            session.push(StepEnd(turn=1, step=1))
        session.push(StepEnd(turn=1, step=1))
        assert [e.seq for e in session.events] == [1, 2]
        assert session.last_seq == 2
    prefilled = ListStorage()
    prefilled.add(7, 1.0, StepStart(turn=1, step=1), None)
    session = Session(SessionId("s"), storage=prefilled)
    assert session.last_seq == 7
    assert session.append(StepEnd(turn=1, step=1)).seq == 8
