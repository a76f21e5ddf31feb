"""Payloads repeated verbatim are shared, found by the values they are built from (issue 27).

``build_event`` -- how the loop writes its events -- gives a step marker, request header,
turn end or system prompt built from values it has seen the one instance validated from
them, without validating again; a payload read back from a store gets the equal one kept
before.  Sharing must never show: a changed value is a new, validated payload; a value
validation refuses is refused every time; anything else is built as ``cls(**fields)``.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agentrig.ids import SessionId
from agentrig.llm import UserMessage
from agentrig.session import (
    RequestHeader,
    Session,
    StepEnd,
    StepStart,
    SystemPrompt,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
    _shared,
    build_event,
    dump_event,
    parse_event,
)


def logged(session_id: str) -> Session:
    """A session written the way the loop writes one."""
    session = Session(SessionId(session_id))
    for cls, fields in (
        (TurnStart, {"turn": 1, "run_id": f"run_{session_id}"}),
        (StepStart, {"turn": 1, "step": 1}),
        (RequestHeader, {"provider": "p", "model": "m", "tools": ("a", "b")}),
        (StepEnd, {"turn": 1, "step": 1}),
        (TurnEnd, {"turn": 1, "reason": "failed", "error": {"code": "x"}}),
    ):
        session.push(build_event(cls, fields))
    return session


def test_repeated_payloads_are_shared_between_sessions() -> None:
    one, two = logged("one"), logged("two")
    for index in (1, 2, 3):  # step/start, request/header, step/end
        assert one.events[index].data is two.events[index].data
    # unique or unhashable payloads are kept as they are
    assert one.events[0].data is not two.events[0].data  # turn/start: not a repeated kind
    assert one.events[4].data is not two.events[4].data  # turn/end with an error dict
    assert one.events[4].data == two.events[4].data


def test_a_shared_payload_equals_the_validated_one() -> None:
    fields: dict[str, Any] = {"provider": "p", "model": "m", "temperature": 1, "tools": ("x",)}
    built = build_event(RequestHeader, fields)
    assert built is build_event(RequestHeader, dict(fields))
    fresh = RequestHeader(**fields)
    assert built == fresh
    assert built.model_fields_set == fresh.model_fields_set
    assert type(built.temperature) is float  # validated: the int became a float
    assert dump_event_data(built) == dump_event_data(fresh)


def dump_event_data(data: RequestHeader) -> dict[str, Any]:
    return data.model_dump(mode="json", exclude_unset=True)


def test_a_changed_value_gives_a_new_instance() -> None:
    first = build_event(StepStart, {"turn": 1, "step": 1})
    assert build_event(StepStart, {"turn": 1, "step": 1}) is first
    second = build_event(StepStart, {"turn": 1, "step": 2})
    assert second is not first
    assert (second.turn, second.step) == (1, 2)
    # the same values under other names, or of another class, are other payloads
    end = build_event(StepEnd, {"turn": 1, "step": 1})
    assert type(end) is StepEnd
    assert end is not first
    prompt = build_event(SystemPrompt, {"text": "be brief"})
    assert build_event(SystemPrompt, {"text": "be terse"}).text == "be terse"
    assert build_event(SystemPrompt, {"text": "be brief"}) is prompt


def test_a_value_validation_refuses_is_refused_every_time() -> None:
    for _ in range(2):
        with pytest.raises(ValidationError):
            build_event(StepStart, {"turn": "one", "step": 1})
        with pytest.raises(ValidationError):
            build_event(RequestHeader, {"provider": "p", "model": "m", "unknown": 1})


def test_other_payloads_are_validated_each_time() -> None:
    message = UserMessage.of("hi")
    one = build_event(UserMessageEvent, {"message": message})
    assert one == UserMessageEvent(message=message)
    assert build_event(UserMessageEvent, {"message": message}) is not one
    error = {"code": "x", "n": [1]}
    ends = [build_event(TurnEnd, {"turn": 1, "reason": "failed", "error": error}) for _ in "ab"]
    assert ends[0] == ends[1]
    assert ends[0] is not ends[1]


def test_the_table_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_shared, "_SHARED_MAX", 3)
    monkeypatch.setattr(_shared, "_SHARED", {})
    made = [build_event(StepStart, {"turn": 1, "step": step}) for step in range(1, 8)]
    assert len(_shared._SHARED) <= 3
    assert [m.step for m in made] == list(range(1, 8))
    again = build_event(StepStart, {"turn": 1, "step": 7})
    assert again is made[-1]  # the newest entry survived the last clearing


def test_loaded_payloads_are_shared_and_read_back_unchanged() -> None:
    source = logged("source")
    events = [parse_event(dump_event(e)) for e in source.events]
    first, second = Session(SessionId("first")), Session(SessionId("second"))
    first.load(events)
    second.load([parse_event(dump_event(e)) for e in source.events])
    for index in (1, 2, 3):
        assert first.events[index].data is second.events[index].data
        # parsed payloads set ``type``: equal to the built ones, shared apart from them
        assert first.events[index].data == source.events[index].data
    assert [dump_event(e) for e in first.events] == [dump_event(e) for e in source.events]
