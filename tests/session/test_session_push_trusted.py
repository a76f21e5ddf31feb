"""Every event is written one way: ``Session.push_trusted`` is ``push`` of the validated
payload (issue 27), so a loop logging without a store keeps what it keeps with one.

The log, what reads back, the derived history and what a listener sees are those of the
general path, and a value of the wrong type is refused on either.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError

from agentrig.ids import SessionId
from agentrig.llm import (
    AssistantMessage,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    UserMessage,
)
from agentrig.session import (
    AssistantMessageEvent,
    RequestHeader,
    Session,
    SessionEvent,
    SessionEventData,
    StepEnd,
    StepStart,
    ToolCallEvent,
    ToolResultEvent,
    TurnStart,
    UserMessageEvent,
    dump_event,
)


def clock() -> float:
    return 1_700_000_000.5


def loop_events() -> list[tuple[type[SessionEventData], dict[str, Any]]]:
    """The loop's events of one tool step and a final answer, as it writes them; messages
    both validated (fields-sets of their own) and built by the stream assembler."""
    call = ToolCallBlock.from_json("call_1", "noop", '{"x": 1, "y": [1, 2]}')
    validated_call = ToolCallBlock(id="call_2", name="noop", arguments={"x": 2})
    asked = AssistantMessage(content=(TextBlock(text="let me"), call), stop_reason="tool_calls")
    result = ToolMessage.of("call_1", "noop", "0")
    validated_result = ToolMessage(call_id="call_2", name="noop", content=(TextBlock(text="1"),))
    # the same header twice: interned, then shared
    header: dict[str, Any] = {"provider": "local", "model": "m", "max_tokens": None}
    header.update(temperature=0.5, tools=("noop",))
    return [
        (TurnStart, {"turn": 1, "trigger": "prompt", "run_id": "run_1"}),
        (StepStart, {"turn": 1, "step": 1}),
        (UserMessageEvent, {"message": UserMessage.of("go")}),
        (RequestHeader, header),
        (AssistantMessageEvent, {"message": asked}),
        (ToolCallEvent, {"call": call, "invocation_id": "1.1.0"}),
        (ToolResultEvent, {"message": result, "invocation_id": "inv_1", "duration_ms": 0.25}),
        (ToolCallEvent, {"call": validated_call, "invocation_id": "1.1.1"}),
        (ToolResultEvent, {"message": validated_result, "invocation_id": None, "duration_ms": 1.0}),
        (StepEnd, {"turn": 1, "step": 1}),
        (StepStart, {"turn": 1, "step": 2}),
        (RequestHeader, header),
        (
            AssistantMessageEvent,
            {"message": AssistantMessage(content=(TextBlock(text="done"),), stop_reason="end")},
        ),
        (StepEnd, {"turn": 1, "step": 2}),
    ]


def both_ways(session_id: str) -> tuple[Session, Session]:
    general = Session(SessionId(session_id), clock=clock)
    trusted = Session(SessionId(session_id), clock=clock)
    events = loop_events()
    # each path gets its own copies: models with fields-sets of their own, as validated
    for cls, fields in copy.deepcopy(events):
        general.push(cls(**fields))
    for cls, fields in copy.deepcopy(events):
        trusted.push_trusted(cls, **fields)
    return general, trusted


def test_trusted_pushes_read_back_as_the_validated_payloads() -> None:
    general, trusted = both_ways("s")
    assert [dump_event(e) for e in trusted.events] == [dump_event(e) for e in general.events]
    assert list(trusted.events) == list(general.events)
    for mine, theirs in zip(trusted.events, general.events, strict=True):
        assert type(mine.data) is type(theirs.data)
        assert mine.data.model_fields_set == theirs.data.model_fields_set
    assert trusted.derive_messages() == general.derive_messages()
    assert trusted.derive_messages().chars == general.derive_messages().chars


def test_a_listener_sees_the_events_the_general_path_shows() -> None:
    general = Session(SessionId("l"), clock=clock)
    trusted = Session(SessionId("l"), clock=clock)
    seen_general: list[SessionEvent] = []
    seen_trusted: list[SessionEvent] = []
    general.subscribe(seen_general.append)
    trusted.subscribe(seen_trusted.append)
    for cls, fields in loop_events():
        general.push(cls(**fields))
        trusted.push_trusted(cls, **fields)
    assert seen_trusted == seen_general == list(general.events)
    assert [dump_event(e) for e in seen_trusted] == [dump_event(e) for e in seen_general]


def test_other_field_lists_and_unseen_interned_payloads_are_validated() -> None:
    session = Session(SessionId("v"), clock=clock)
    # not every field in order: built and validated as push() does
    session.push_trusted(StepStart, step=7, turn=3)
    session.push_trusted(ToolResultEvent, message=ToolMessage.of("c", "t", "x"))
    assert session.events[0].data == StepStart(turn=3, step=7)
    assert session.events[1].data.model_fields_set == {"message"}
    # an interned payload not seen yet is validated before it is shared
    with pytest.raises(ValidationError):
        session.push_trusted(StepStart, turn="not a number", step=1)
    with pytest.raises(ValidationError):
        session.push_trusted(
            RequestHeader, provider="p", model="m", max_tokens="many", temperature=None, tools=()
        )
    with pytest.raises(ValidationError):
        session.push_trusted(StepEnd, step="x", turn=1)
    assert len(session) == 2


def test_every_payload_is_validated_also_in_its_usual_shape() -> None:
    # every field in order (the shape the loop writes) used to be kept unbuilt and unchecked
    # without a store, while a store-backed agent validated it: now both validate
    session = Session(SessionId("w"), clock=clock)
    with pytest.raises(ValidationError):
        session.push_trusted(ToolCallEvent, call="not a tool call", invocation_id="1.1.0")
    with pytest.raises(ValidationError):
        session.push_trusted(TurnStart, turn="first", trigger="prompt", run_id=None)
    with pytest.raises(ValidationError):
        session.push_trusted(UserMessageEvent, message="plain text")
    session.push_trusted(StepStart, turn=1, step=1)
    session.push_trusted(StepStart, turn=1, step=1)  # a repeated (shared) payload
    assert [e.data for e in session.events] == [StepStart(turn=1, step=1)] * 2
