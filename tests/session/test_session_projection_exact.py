"""The projection's exact-class shortcuts give what the isinstance checks give (issue 20).

The history projection and its size estimate look classes up exactly before falling back to
``isinstance`` (which is slow on pydantic's metaclass when false); subclasses, plugin events
and every block kind must come out as the general checks say.
"""

from __future__ import annotations

import json
from typing import Literal

from agentrig.ids import SessionId
from agentrig.llm import (
    AssistantMessage,
    ImageBlock,
    Message,
    ReasoningBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    UserMessage,
)
from agentrig.session import (
    AssistantMessageEvent,
    RequestHeader,
    Session,
    SessionEventData,
    StepEnd,
    StepStart,
    ToolResultEvent,
    TurnEnd,
    UserMessageEvent,
)
from agentrig.session._log import message_chars


class LoudText(TextBlock):
    """A text block subclass (as a plugin might make)."""


class NamedCall(ToolCallBlock):
    """A tool-call block subclass."""


class Headline(SystemMessage):
    """A system message subclass."""


class StepMark(StepStart):
    """A step-marker subclass: not one of the exact classes, still no message."""


class PluginNote(SessionEventData):
    """A plugin's event: carries nothing for the model."""

    type: Literal["plugin/note"] = "plugin/note"
    text: str


def reference_chars(message: Message) -> int:
    """message_chars as the isinstance checks alone compute it."""
    if isinstance(message, SystemMessage):
        return len(message.text)
    chars = 0
    for block in message.content:
        if isinstance(block, ToolCallBlock):
            chars += len(json.dumps(block.arguments, default=str))
        else:
            chars += len(getattr(block, "text", "") or "")
    return chars


def messages() -> list[Message]:
    call = ToolCallBlock(id="c1", name="t", arguments={"q": "ü", "n": [1, 2.5]})
    named = NamedCall(id="c2", name="t", arguments={"x": None})
    image = ImageBlock(media_type="image/png", data="aGk=")
    return [
        SystemMessage(text="be brief"),
        Headline(text="subclassed head"),
        UserMessage(content=(TextBlock(text="hi"), LoudText(text="LOUD"), image)),
        AssistantMessage(
            content=(ReasoningBlock(text="hmm"), TextBlock(text=""), call, named),
            stop_reason="tool_calls",
        ),
        ToolMessage(call_id="c1", name="t", content=(LoudText(text="result"),)),
    ]


def test_message_chars_matches_the_isinstance_checks() -> None:
    for message in messages():
        assert message_chars(message) == reference_chars(message), message


def test_tool_calls_keeps_subclassed_calls_in_order() -> None:
    message = messages()[3]
    assert isinstance(message, AssistantMessage)
    expected = tuple(b for b in message.content if isinstance(b, ToolCallBlock))
    assert message.tool_calls == expected
    assert [b.id for b in message.tool_calls] == ["c1", "c2"]


def test_events_without_a_message_project_nothing_subclasses_and_plugins_too() -> None:
    with_markers = Session(SessionId("a"))
    plain = Session(SessionId("b"))
    user = UserMessage.of("go")
    answer = AssistantMessage(content=(TextBlock(text="done"),), stop_reason="end")
    result = ToolMessage.of("c1", "t", "ok")
    for event in (
        StepStart(turn=1, step=1),
        StepMark(turn=1, step=1),
        UserMessageEvent(message=user),
        RequestHeader(provider="p", model="m"),
        PluginNote(text="not for the model"),
        ToolResultEvent(message=result),
        AssistantMessageEvent(message=answer),
        StepEnd(turn=1, step=1),
        TurnEnd(turn=1, reason="completed"),
    ):
        with_markers.push(event)
    for event in (
        UserMessageEvent(message=user),
        ToolResultEvent(message=result),
        AssistantMessageEvent(message=answer),
    ):
        plain.push(event)
    assert list(with_markers.derive_messages()) == [user, result, answer]
    assert with_markers.derive_messages() == plain.derive_messages()
    assert with_markers.derive_messages().chars == plain.derive_messages().chars
