"""The session log keeps events compactly and gives back their exact public shape (issue 20).

Events are stored column by column and their envelopes built on reading; validated payloads
share one fields-set per class and fields (payloads repeated verbatim arrive shared:
``test_session_shared_payloads.py``).  None of it may
show: every event reads, compares and serialises as before.
"""

from __future__ import annotations

import pytest

from agentrig.ids import SessionId
from agentrig.llm import AssistantMessage, TextBlock, ToolCallBlock, ToolMessage, UserMessage
from agentrig.session import (
    INTERRUPTED_NOTE,
    AssistantMessageEvent,
    CompactStorage,
    RequestHeader,
    Session,
    SessionEvent,
    SteeringMessage,
    StepEnd,
    StepStart,
    ToolCallEvent,
    ToolResultEvent,
    TraceIds,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
    dump_event,
    parse_event,
)

# the compact storage's own representation (what it shares, what it keeps bare)
pytestmark = pytest.mark.compact_storage


def compact(session: Session) -> CompactStorage:
    storage = session._log
    assert isinstance(storage, CompactStorage)
    return storage


def clock() -> float:
    return 1_700_000_000.25


def filled(session_id: str = "s") -> tuple[Session, list[SessionEvent]]:
    session = Session(SessionId(session_id), clock=clock)
    appended = [
        session.append(TurnStart(turn=1, run_id="run_1")),
        session.append(StepStart(turn=1, step=1)),
        session.append(UserMessageEvent(message=UserMessage.of("hi"))),
        session.append(RequestHeader(provider="p", model="m", tools=("a", "b"))),
        session.append(
            AssistantMessageEvent(
                message=AssistantMessage(content=(TextBlock(text="yo"),), stop_reason="end")
            )
        ),
        session.append(
            ToolResultEvent(
                message=ToolMessage(call_id="c1", name="a", content=(TextBlock(text="ok"),)),
                invocation_id="1.1.0",
                duration_ms=0.5,
            )
        ),
        session.append(StepEnd(turn=1, step=1)),
        session.append(TurnEnd(turn=1, reason="failed", error={"code": "x", "n": [1]})),
    ]
    return session, appended


def test_events_read_back_equal_with_the_same_serialised_form() -> None:
    session, appended = filled()
    events = session.events
    assert len(events) == len(appended) == len(session)
    assert list(events) == appended
    assert events == appended
    assert appended == list(events)
    for event, original in zip(events, appended, strict=True):
        assert type(event) is SessionEvent
        assert dump_event(event) == dump_event(original)
        # what a store writes parses back to an equal event with the same JSON
        again = parse_event(dump_event(event))
        assert again == event
        assert dump_event(again) == dump_event(event)
        assert event.model_fields_set == {"seq", "time", "data"}
    assert [e.seq for e in events] == list(range(1, 9))
    assert session.last_seq == 8


def test_events_is_a_snapshot_with_sequence_behaviour() -> None:
    session, appended = filled()
    snapshot = session.events
    session.append(StepStart(turn=2, step=1))
    assert len(snapshot) == 8
    assert len(session.events) == 9
    assert snapshot[-1] == appended[-1]
    assert snapshot[0] == appended[0]
    assert snapshot[2:4] == tuple(appended[2:4])
    assert isinstance(snapshot[2:4], tuple)
    assert list(reversed(snapshot)) == appended[::-1]
    with pytest.raises(IndexError):
        snapshot[8]
    with pytest.raises(IndexError):
        snapshot[-9]
    assert session.find(lambda e: e.type == "step/start") == [session.events[1], session.events[8]]


def test_shared_fields_sets_do_not_leak_between_copies() -> None:
    session, _ = filled()
    header = session.events[3].data
    assert header.model_fields_set == {"provider", "model", "tools"}
    changed = header.model_copy(update={"max_tokens": 5})
    assert changed.model_fields_set == {"provider", "model", "tools", "max_tokens"}
    assert header.model_fields_set == {"provider", "model", "tools"}
    fresh = RequestHeader(provider="p", model="m", tools=("a", "b"))
    assert fresh.model_fields_set == {"provider", "model", "tools"}
    assert header.model_dump(exclude_unset=True) == {
        "provider": "p",
        "model": "m",
        "tools": ("a", "b"),
    }


def test_loaded_events_read_back_unchanged_and_project() -> None:
    _, appended = filled()
    loaded = Session(SessionId("again"))
    loaded.load(appended)
    assert list(loaded.events) == appended
    assert [dump_event(e) for e in loaded.events] == [dump_event(e) for e in appended]
    messages = loaded.derive_messages()
    assert [m.role for m in messages] == ["user", "assistant", "tool"]


def test_trace_ids_and_tool_calls_read_back() -> None:
    session = Session(SessionId("traced"), clock=clock)
    span = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    session.trace_ids = lambda: span
    call = ToolCallBlock(id="c1", name="a", arguments={"x": [1, 2]})
    first = session.append(ToolCallEvent(call=call, invocation_id="1.1.0"))
    session.trace_ids = None
    second = session.append(StepEnd(turn=1, step=1))
    events = session.events
    assert events[0] == first
    assert events[0].trace is not None
    assert events[0].trace.span_id == "b7ad6b7169203331"
    assert events[0].model_fields_set == {"seq", "time", "data", "trace"}
    assert events[1] == second
    assert events[1].trace is None
    assert [dump_event(e) for e in events] == [dump_event(first), dump_event(second)]
    assert '"trace"' in dump_event(events[0])
    assert '"trace"' not in dump_event(events[1])
    again = Session(SessionId("again"))
    again.load(list(events))
    assert list(again.events) == [first, second]


def test_payloads_that_are_just_their_message_read_back_with_the_same_message() -> None:
    session = Session(SessionId("bare"), clock=clock)
    asked = UserMessage.of("hi")
    cut = AssistantMessage(content=(TextBlock(text="par"),), interrupted=True)
    steer = UserMessage.of("left")
    appended = [
        session.append(UserMessageEvent(message=asked)),
        session.append(AssistantMessageEvent(message=cut)),
        session.append(SteeringMessage(message=steer)),
        # the type tag given explicitly is a field set: kept as given
        session.append(AssistantMessageEvent(type="assistant/message", message=cut)),
    ]
    events = session.events
    assert list(events) == appended
    assert [dump_event(e) for e in events] == [dump_event(e) for e in appended]
    assert [type(e.data) for e in events] == [type(e.data) for e in appended]
    assert [e.data.model_fields_set for e in events] == [
        {"message"},
        {"message"},
        {"message"},
        {"type", "message"},
    ]
    assert events[0].data.message is asked
    assert events[1].data.message is cut
    assert [e.data.model_dump(exclude_unset=True) for e in events] == [
        e.data.model_dump(exclude_unset=True) for e in appended
    ]
    assert "type" in events[3].data.model_dump(exclude_unset=True)
    history = list(session.derive_messages())
    assert history[0] is asked
    assert history[1].text == "par" + INTERRUPTED_NOTE  # annotated, as before
    assert history[2] is steer


def test_seqs_read_back_as_appended_or_loaded_with_gaps() -> None:
    _, appended = filled()
    loaded = Session(SessionId("gaps"))
    kept = [appended[0], appended[2], *appended[5:7]]
    kept = [e.model_copy(update={"seq": seq}) for e, seq in zip(kept, (3, 5, 9, 10), strict=True)]
    loaded.load(kept)
    assert [e.seq for e in loaded.events] == [3, 5, 9, 10]
    assert loaded.last_seq == 10
    after = loaded.append(StepStart(turn=2, step=1))
    assert after.seq == 11
    assert [e.seq for e in loaded.events] == [3, 5, 9, 10, 11]
    from_ten = Session(SessionId("from-ten"))
    from_ten.load([e.model_copy(update={"seq": 10 + i}) for i, e in enumerate(appended)])
    assert [e.seq for e in from_ten.events] == list(range(10, 18))
    assert from_ten.append(StepStart(turn=2, step=1)).seq == 18
    assert Session(SessionId("empty")).last_seq == 0


def test_push_logs_what_append_logs_and_listeners_see_the_same_events() -> None:
    # push() is append() without handing the event back: the log, the projection and what
    # a listener receives are the same either way
    appended, _ = filled("a")
    pushed = Session(SessionId("b"), clock=clock)
    seen: list[SessionEvent] = []
    for event in appended.events:
        pushed.push(event.data)
        if len(pushed) == 4:
            pushed.subscribe(seen.append)  # a listener from the middle on
    assert [dump_event(e) for e in pushed.events] == [dump_event(e) for e in appended.events]
    assert pushed.derive_messages() == appended.derive_messages()
    assert seen == list(appended.events)[4:]


def test_a_spans_trace_ids_are_built_once_while_spans_alternate() -> None:
    # a turn's span and its calls' spans write in turn: each span's TraceIds is one object
    turn = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    call = ("0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7")
    current = [turn]
    session = Session(SessionId("alternating"), clock=clock)
    session.trace_ids = lambda: current[0]
    appended = []
    for step, span in enumerate([turn, call, turn, call, turn], start=1):
        current[0] = span
        appended.append(session.append(StepStart(turn=1, step=step)))
    traces = [e.trace for e in appended]
    assert traces[0] == traces[2] == traces[4]
    assert traces[1] == traces[3]
    assert traces[0] is not None
    assert traces[1] is not None
    assert (traces[0].span_id, traces[1].span_id) == (turn[1], call[1])
    other = Session(SessionId("same-span-elsewhere"), clock=clock)
    other.trace_ids = lambda: call
    assert other.append(StepStart(turn=1, step=1)).trace == traces[1]


def test_views_compare_by_content_and_like_lists_are_unhashable() -> None:
    first, _ = filled("a")
    second = Session(SessionId("b"), clock=clock)
    second.load(first.events)
    # views of two sessions with equal events are equal ...
    assert first.events == second.events
    assert first.events == tuple(second.events)
    # ... so a hash by identity would break the hash/eq rule; there is none
    with pytest.raises(TypeError, match="unhashable"):
        hash(first.events)
    with pytest.raises(TypeError, match="unhashable"):
        frozenset((first.events,))


def test_trace_ids_read_back_per_event_while_spans_change_and_stop() -> None:
    # the log keeps one entry per change of span (not one per event) and builds TraceIds
    # when an event is read: each event reads back with the ids current when it was appended
    turn = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    call = ("0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7")
    current: list[tuple[str, str] | None] = [None]
    session = Session(SessionId("runs"), clock=clock)
    session.trace_ids = lambda: current[0]
    plan = [None, turn, turn, call, call, turn, None, "off", call, "off", turn]
    appended = []
    for step, span in enumerate(plan, start=1):
        if span == "off":
            session.trace_ids = None
        else:
            session.trace_ids = lambda: current[0]
            current[0] = span if isinstance(span, tuple) else None
        appended.append(session.append(StepStart(turn=1, step=step)))
        if step == 5:
            early = session.events  # a snapshot: later runs do not show in it
    expected = [span if isinstance(span, tuple) else None for span in plan]
    read = [(e.trace.trace_id, e.trace.span_id) if e.trace else None for e in session.events]
    assert read == expected
    assert [e.trace for e in appended] == [e.trace for e in session.events]
    assert [dump_event(e) for e in session.events] == [dump_event(e) for e in appended]
    assert list(early) == appended[:5]
    assert session.events[3].trace is session.events[4].trace  # one TraceIds per span
    runs = compact(session)._runs
    assert runs is not None
    assert runs.starts == [1, 3, 5, 6, 8, 9, 10]  # where each run starts
    # ids as the trace context gave them, or built once read: no span objects
    assert all(key is None or type(key) in (tuple, TraceIds) for key in runs.keys)
    loaded = Session(SessionId("loaded"))
    loaded.load(list(session.events))
    assert list(loaded.events) == appended
    loaded_runs = compact(loaded)._runs
    assert loaded_runs is not None
    assert loaded_runs.starts == runs.starts  # equal loaded ids make one run too
    assert compact(Session(SessionId("untraced")))._runs is None
