"""Content blocks and messages: construction, round trips, unknown and plugin variants."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from agentrig.llm import (
    CONTENT_BLOCKS,
    MESSAGE_ADAPTER,
    AssistantMessage,
    ContentBlock,
    FileBlock,
    ImageBlock,
    ProviderStateBlock,
    ReasoningBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    Usage,
    UserMessage,
    parse_tool_arguments,
)

ALL_BLOCKS: list[ContentBlock] = [
    TextBlock(text="hello"),
    ImageBlock(media_type="image/png", data="aGk="),
    ImageBlock(media_type="image/jpeg", url="https://example.test/a.jpg"),
    FileBlock(media_type="application/pdf", data="JVBE", url=None, name="a.pdf"),
    ToolCallBlock(id="call_1", name="read", arguments={"path": "a.txt", "n": [1, 2]}),
    ToolCallBlock(id="", name="broken", arguments={}, raw_arguments="{not json"),
    ReasoningBlock(text="thinking…"),
    ProviderStateBlock(
        provider="anthropic",
        data={"type": "thinking", "thinking": "hm", "signature": "c2ln"},
        text="hm",
    ),
]

ALL_MESSAGES: list[Any] = [
    SystemMessage(text="be brief"),
    UserMessage.of("hi"),
    UserMessage(content=tuple(ALL_BLOCKS), source="steer"),
    AssistantMessage(
        content=tuple(ALL_BLOCKS),
        stop_reason="tool_calls",
        provider_stop_reason="tool_use",
        model="m-1",
        usage=Usage.of(10, 5, cache_read=4, reasoning=2),
        continuation="opaque",
    ),
    AssistantMessage(content=(), interrupted=True),
    ToolMessage.of("call_1", "read", "file body"),
    ToolMessage(
        call_id="",
        name="read",
        content=(TextBlock(text="no"), ImageBlock(media_type="image/png", data="aGk=")),
        status="not_executed",
    ),
]


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=lambda b: b.type)
def test_every_block_round_trips(block: ContentBlock) -> None:
    dumped = block.model_dump(mode="json")
    json.dumps(dumped)
    assert CONTENT_BLOCKS.parse(dumped) == block
    assert type(CONTENT_BLOCKS.parse(json.loads(json.dumps(dumped)))) is type(block)


@pytest.mark.parametrize("message", ALL_MESSAGES, ids=lambda m: m.role)
def test_every_message_round_trips(message: BaseModel) -> None:
    dumped = message.model_dump(mode="json")
    text = json.dumps(dumped)
    assert MESSAGE_ADAPTER.validate_python(dumped) == message
    assert MESSAGE_ADAPTER.validate_json(text) == message
    assert type(MESSAGE_ADAPTER.validate_json(text)) is type(message)


def test_unknown_block_inside_a_persisted_message_dumps_back_unchanged() -> None:
    unknown = {"type": "hologram", "frames": [1, 2, {"x": None}], "fps": 24.5}
    stored = {
        "role": "assistant",
        "content": [{"type": "text", "text": "look"}, unknown],
        "stop_reason": "end",
        "provider_stop_reason": None,
        "interrupted": False,
        "model": None,
        "usage": None,
        "continuation": None,
    }
    message = MESSAGE_ADAPTER.validate_json(json.dumps(stored))
    assert isinstance(message, AssistantMessage)
    kept = message.content[1]
    assert kept.is_unknown
    assert kept.type == "hologram"
    assert message.text == "look"
    assert MESSAGE_ADAPTER.dump_python(message, mode="json") == stored
    assert json.loads(MESSAGE_ADAPTER.dump_json(message)) == stored
    # and once more through the round trip
    again = MESSAGE_ADAPTER.validate_python(MESSAGE_ADAPTER.dump_python(message, mode="json"))
    assert again == message


def test_unknown_block_inside_a_user_and_a_tool_message() -> None:
    raw = {"type": "x-plugin/thing", "v": 1}
    user = UserMessage.model_validate({"content": [raw]})
    tool = ToolMessage.model_validate({"call_id": "c", "name": "t", "content": [raw]})
    assert user.model_dump(mode="json")["content"] == [raw]
    assert tool.model_dump(mode="json")["content"] == [raw]


def test_plugin_block_registered_before_first_parse_round_trips_as_itself() -> None:
    # The family seals on first parse, so a plugin's registration runs in a fresh interpreter.
    code = textwrap.dedent(
        """
        import json
        from typing import Literal
        from agentrig.llm import CONTENT_BLOCKS, MESSAGE_ADAPTER, AssistantMessage, ContentBlock

        class AudioBlock(ContentBlock):
            type: Literal["audio"] = "audio"
            seconds: float

        CONTENT_BLOCKS.register(AudioBlock, source="plugin")
        msg = AssistantMessage(content=(AudioBlock(seconds=1.5),))
        dumped = msg.model_dump(mode="json")
        assert dumped["content"] == [{"type": "audio", "seconds": 1.5}], dumped
        back = MESSAGE_ADAPTER.validate_json(json.dumps(dumped))
        assert type(back.content[0]) is AudioBlock and back == msg
        print("ok")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_plugin_block_instance_is_dumped_with_its_own_fields() -> None:
    from typing import Literal

    class StickerBlock(ContentBlock):  # not registered: built in process, dumped as itself
        type: Literal["sticker"] = "sticker"
        sticker_id: str

    message = UserMessage(content=(StickerBlock(sticker_id="s1"),))
    dumped = message.model_dump(mode="json")
    assert dumped["content"] == [{"type": "sticker", "sticker_id": "s1"}]
    # a host without the plugin keeps it opaque and writes it back unchanged
    back = MESSAGE_ADAPTER.validate_python(dumped)
    assert back.model_dump(mode="json") == dumped


def test_user_message_of_and_minted_ids() -> None:
    a = UserMessage.of("one")
    b = UserMessage.of("two", source="followup")
    assert a.content == (TextBlock(text="one"),)
    assert a.text == "one"
    assert a.source == "user"
    assert b.source == "followup"
    assert a.id != b.id
    assert a.id.startswith("msg_")


def test_assistant_text_and_tool_calls() -> None:
    call_a = ToolCallBlock(id="a", name="x", arguments={})
    call_b = ToolCallBlock(id="a", name="y", arguments={"k": 1})  # ids need not be unique
    message = AssistantMessage(
        content=(
            ReasoningBlock(text="r"),
            TextBlock(text="Hello, "),
            call_a,
            TextBlock(text="world"),
            call_b,
        )
    )
    assert message.text == "Hello, world"
    assert message.tool_calls == (call_a, call_b)
    assert message.stop_reason is None
    assert message.usage is None


def test_tool_message_of() -> None:
    message = ToolMessage.of("c1", "grep", "nothing found", status="error")
    assert message.text == "nothing found"
    assert message.status == "error"
    assert ToolMessage.of("c1", "grep", "x").status == "ok"
    with pytest.raises(ValidationError):
        ToolMessage.model_validate({"call_id": "c", "name": "t", "content": [], "status": "meh"})


def test_messages_are_frozen_and_strict() -> None:
    message = SystemMessage(text="s")
    with pytest.raises(ValidationError):
        message.text = "t"
    with pytest.raises(ValidationError):
        SystemMessage.model_validate({"text": "s", "extra": 1})
    with pytest.raises(ValidationError):
        TextBlock.model_validate({"type": "text", "text": "x", "extra": 1})
    with pytest.raises(ValidationError):
        MESSAGE_ADAPTER.validate_python({"role": "robot", "text": "x"})


def test_interrupted_is_only_an_assistant_field() -> None:
    assert "interrupted" in AssistantMessage.model_fields
    for model in (SystemMessage, UserMessage, ToolMessage):
        assert "interrupted" not in model.model_fields


@pytest.mark.parametrize(
    ("raw", "arguments", "raw_arguments"),
    [
        ("", {}, None),
        ("   ", {}, None),
        ('{"a": 1}', {"a": 1}, None),
        ("{not json", {}, "{not json"),
        ("[1, 2]", {}, "[1, 2]"),
        ('"text"', {}, '"text"'),
        # a value with text around it: whitespace is allowed, anything else is not JSON
        (' {"a": 1}\n', {"a": 1}, None),
        ('{"a": 1} x', {}, '{"a": 1} x'),
        ('{"a": 1}{"b": 2}', {}, '{"a": 1}{"b": 2}'),
        ('\ufeff{"a": 1}', {}, '\ufeff{"a": 1}'),
        ('{"a": NaN, "b": "\\ud800", "a": 2}', {"a": 2, "b": "\ud800"}, None),
    ],
)
def test_parse_tool_arguments(
    raw: str, arguments: dict[str, Any], raw_arguments: str | None
) -> None:
    assert parse_tool_arguments(raw) == (arguments, raw_arguments)
    try:  # what json.loads makes of the text, always
        expected = json.loads(raw)
    except ValueError:
        expected = None
    if isinstance(expected, dict):
        assert parse_tool_arguments(raw)[0] == expected
    block = ToolCallBlock.from_json("id", "name", raw)
    assert block.arguments == arguments
    assert block.raw_arguments == raw_arguments
