"""Stream chunks and the StreamAssembler."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from agentrig.llm import (
    STREAM_CHUNKS,
    AssistantMessage,
    FinishChunk,
    ProviderStateBlock,
    ProviderStateChunk,
    ReasoningBlock,
    ReasoningDelta,
    StreamAssembler,
    StreamChunk,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    ToolCallStart,
    Usage,
    UsageChunk,
)

STATE = ProviderStateBlock(
    provider="anthropic",
    data={"type": "thinking", "thinking": "Let me see.", "signature": "sig=="},
    text="Let me see.",
)

ALL_CHUNKS: list[StreamChunk] = [
    TextDelta(text="hi"),
    ReasoningDelta(text="hmm"),
    ToolCallStart(index=0, id="call_1", name="read"),
    ToolCallDelta(index=0, arguments='{"pa'),
    ProviderStateChunk(block=STATE),
    UsageChunk(usage=Usage.of(3, 4, total=8, cache_read=1, partial=True)),
    FinishChunk(stop_reason="length", provider_stop_reason="max_tokens", model="m"),
    FinishChunk(stop_reason="end", provider_stop_reason=None, continuation="c"),
]


@pytest.mark.parametrize("chunk", ALL_CHUNKS, ids=lambda c: c.type)
def test_every_chunk_round_trips(chunk: StreamChunk) -> None:
    dumped = STREAM_CHUNKS.dump(chunk)
    assert dumped == chunk.model_dump(mode="json")
    text = json.dumps(dumped)
    parsed = STREAM_CHUNKS.parse_json(text)
    assert parsed == chunk
    assert type(parsed) is type(chunk)
    assert STREAM_CHUNKS.parse(dumped) == chunk


def test_unknown_chunk_is_kept_and_dumped_back() -> None:
    raw = {"type": "citation_delta", "citation": {"url": "https://x.test", "span": [1, 4]}}
    chunk = STREAM_CHUNKS.parse(raw)
    assert chunk.is_unknown
    assert STREAM_CHUNKS.dump(chunk) == raw
    many = [STREAM_CHUNKS.parse(c) for c in (raw, {"type": "text_delta", "text": "a"})]
    assert [c.model_dump(mode="json") for c in many] == [raw, {"type": "text_delta", "text": "a"}]


def _assemble(chunks: list[StreamChunk], *, interrupted: bool = False) -> AssistantMessage:
    assembler = StreamAssembler()
    for chunk in chunks:
        assembler.feed(chunk)
    return assembler.message(interrupted=interrupted)


# A hand-built stream: reasoning, a provider-state block, text, then three parallel tool calls
# (two interleaving their argument deltas, one with no arguments at all, one with broken JSON),
# several usage reports and the finish.
STREAM: list[StreamChunk] = [
    ReasoningDelta(text="Let me "),
    ReasoningDelta(text="see."),
    ProviderStateChunk(block=STATE),
    UsageChunk(usage=Usage.of(100, 1)),
    TextDelta(text="I'll read "),
    TextDelta(text="both files."),
    ToolCallStart(index=0, id="call_a", name="read"),
    ToolCallStart(index=1, id="call_b", name="read"),
    ToolCallDelta(index=0, arguments='{"path": '),
    ToolCallDelta(index=1, arguments='{"pa'),
    ToolCallDelta(index=0, arguments='"a.txt"}'),
    ToolCallDelta(index=1, arguments='th": "b.txt"}'),
    ToolCallStart(index=2, id="call_c", name="list"),
    ToolCallDelta(index=2, arguments=""),
    ToolCallStart(index=3, id="", name="write"),
    ToolCallDelta(index=3, arguments='{"path": "c.txt", '),
    UsageChunk(usage=Usage.of(100, 40, cache_read=60)),
    UsageChunk(usage=Usage.of(100, 57, cache_read=60, reasoning=9)),
    FinishChunk(stop_reason="tool_calls", provider_stop_reason="tool_use", model="m-2024"),
]

EXPECTED = AssistantMessage(
    content=(
        ReasoningBlock(text="Let me see."),
        STATE,
        TextBlock(text="I'll read both files."),
        ToolCallBlock(id="call_a", name="read", arguments={"path": "a.txt"}),
        ToolCallBlock(id="call_b", name="read", arguments={"path": "b.txt"}),
        ToolCallBlock(id="call_c", name="list", arguments={}),
        ToolCallBlock(id="", name="write", arguments={}, raw_arguments='{"path": "c.txt", '),
    ),
    stop_reason="tool_calls",
    provider_stop_reason="tool_use",
    model="m-2024",
    usage=Usage.of(100, 57, cache_read=60, reasoning=9),
)


def test_streaming_equals_non_streaming() -> None:
    assert _assemble(STREAM) == EXPECTED
    # the same response serialised and parsed back (as a replayed chunk log) assembles equally
    replayed = [STREAM_CHUNKS.parse_json(json.dumps(STREAM_CHUNKS.dump(c))) for c in STREAM]
    assert _assemble(replayed) == EXPECTED


def test_last_usage_wins_and_no_usage_is_none() -> None:
    assert StreamAssembler().usage is None
    assembler = StreamAssembler()
    assembler.feed(UsageChunk(usage=Usage.of(1, 1)))
    assembler.feed(UsageChunk(usage=Usage.of(2, 3)))
    assert assembler.usage == Usage.of(2, 3)
    assert _assemble([TextDelta(text="x")]).usage is None


def test_interrupted_message_keeps_partial_text() -> None:
    partial = STREAM[:10]  # stops in the middle of the tool-call arguments
    message = _assemble(partial, interrupted=True)
    assert message.interrupted
    assert message.text == "I'll read both files."
    assert message.stop_reason is None
    assert message.usage == Usage.of(100, 1)
    first, second = message.tool_calls
    assert (first.id, first.arguments, first.raw_arguments) == ("call_a", {}, '{"path": ')
    assert (second.id, second.raw_arguments) == ("call_b", '{"pa')


def test_interrupted_with_nothing_received_is_an_empty_message() -> None:
    message = StreamAssembler().message(interrupted=True)
    assert message == AssistantMessage(content=(), interrupted=True)


def test_text_after_another_block_starts_a_new_text_block() -> None:
    message = _assemble(
        [
            TextDelta(text="a"),
            ReasoningDelta(text="r"),
            TextDelta(text="b"),
            TextDelta(text="c"),
            ToolCallStart(index=0, id="1", name="t"),
            TextDelta(text="d"),
        ]
    )
    assert [b.model_dump(mode="json") for b in message.content] == [
        {"type": "text", "text": "a"},
        {"type": "reasoning", "text": "r"},
        {"type": "text", "text": "bc"},
        {"type": "tool_call", "id": "1", "name": "t", "arguments": {}, "raw_arguments": None},
        {"type": "text", "text": "d"},
    ]


def test_deltas_before_start_and_repeated_start() -> None:
    message = _assemble(
        [
            ToolCallDelta(index=5, arguments='{"x"'),
            ToolCallStart(index=5, id="late", name="tool"),
            ToolCallDelta(index=5, arguments=": 1}"),
            ToolCallStart(index=5, id="other", name="ignored"),
        ]
    )
    assert message.tool_calls == (ToolCallBlock(id="late", name="tool", arguments={"x": 1}),)


def test_finish_carries_continuation_and_unknown_chunks_are_ignored() -> None:
    unknown = STREAM_CHUNKS.parse({"type": "future_chunk", "x": 1})
    message = _assemble(
        [
            TextDelta(text="ok"),
            unknown,
            FinishChunk(stop_reason="end", provider_stop_reason="stop", continuation="opaque"),
        ]
    )
    assert message.text == "ok"
    assert message.continuation == "opaque"
    assert message.stop_reason == "end"
    assert message.model is None


def test_subclassed_chunks_are_taken_as_their_base() -> None:
    # chunks are matched by their exact class first; a subclass (a plugin's own delta)
    # counts as the base it derives from, as an isinstance check would take it
    class MarkedDelta(TextDelta):
        mark: str = "m"

    class NamedStart(ToolCallStart):
        origin: str = "o"

    class LateFinish(FinishChunk):
        late: bool = True

    chunks: list[StreamChunk] = [
        MarkedDelta(text="a"),
        TextDelta(text="b"),
        NamedStart(index=0, id="c1", name="look"),
        ToolCallDelta(index=0, arguments='{"q": 1}'),
        LateFinish(stop_reason="tool_calls", provider_stop_reason="tool_calls"),
    ]
    for _ in range(2):  # the second time from what the first resolved
        message = _assemble(chunks)
        assert message.text == "ab"
        assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
            ("c1", "look", {"q": 1})
        ]
        assert message.stop_reason == "tool_calls"


@pytest.mark.parametrize(
    ("fast", "validated"),
    [
        pytest.param(lambda: TextDelta.of("tok"), lambda: TextDelta(text="tok"), id="text"),
        pytest.param(
            lambda: ReasoningDelta.of("hm"), lambda: ReasoningDelta(text="hm"), id="reasoning"
        ),
        pytest.param(
            lambda: ToolCallDelta.of(2, '{"a"'),
            lambda: ToolCallDelta(index=2, arguments='{"a"'),
            id="tool-call-delta",
        ),
    ],
)
def test_per_token_constructors_equal_the_validated_ones(
    fast: Callable[[], StreamChunk], validated: Callable[[], StreamChunk]
) -> None:
    built, expected = fast(), validated()
    assert built == expected
    assert built.model_fields_set == expected.model_fields_set
    assert built.model_dump_json() == expected.model_dump_json()
    assert repr(built) == repr(expected)
    assert hash(built) == hash(expected)


def test_a_copy_of_a_per_token_delta_does_not_change_the_others() -> None:
    # a copy records the field it changed; the deltas it was made from keep their own sets
    first, second = TextDelta.of("a"), ReasoningDelta.of("b")
    copied = first.model_copy(update={"type": "text_delta"})
    assert copied.model_fields_set == {"text", "type"}
    assert first.model_fields_set == second.model_fields_set == {"text"}
    assert TextDelta.of("c").model_fields_set == {"text"}


def test_per_token_constructors_validate_what_is_not_plain() -> None:
    from pydantic import ValidationError
    from typeguard import suppress_type_checks

    # deliberately mistyped, as untyped callers may pass: pydantic's error names the field
    not_text: Any = 42
    not_index: Any = "x"
    with suppress_type_checks():  # the constructors' own fallback, not typeguard's check
        with pytest.raises(ValidationError, match="text"):
            TextDelta.of(not_text)
        with pytest.raises(ValidationError, match="index"):
            ToolCallDelta.of(not_index, "{}")

    class Tagged(TextDelta):
        tag: str = "t"

    # a subclass has fields of its own: it takes the validated path
    assert Tagged.of("x") == Tagged(text="x")


def test_message_chunks_reassemble_to_the_message() -> None:
    from agentrig.llm import (
        AssistantMessage,
        ProviderStateBlock,
        ReasoningBlock,
        StreamAssembler,
        TextBlock,
        ToolCallBlock,
        Usage,
        message_chunks,
    )

    message = AssistantMessage(
        content=(
            ReasoningBlock(text="thinking"),
            TextBlock(text="Let me look."),
            ToolCallBlock(id="c1", name="lookup", arguments={"q": "x"}),
            ToolCallBlock(id="c2", name="broken", arguments={}, raw_arguments="{not json"),
            ProviderStateBlock(provider="vendor", data={"sig": "abc"}),
        ),
        stop_reason="tool_calls",
        provider_stop_reason="tool_use",
        model="m-2",
        usage=Usage.of(prompt=5, completion=2),
        continuation="opaque",
    )
    assembler = StreamAssembler()
    for chunk in message_chunks(message):
        assembler.feed(chunk)
    assert assembler.message() == message


def test_the_adapters_constructors_equal_validated_chunks() -> None:
    usage = Usage.of(3, 4)
    assert ToolCallStart.of(0, "c1", "echo") == ToolCallStart(index=0, id="c1", name="echo")
    assert UsageChunk.of(usage) == UsageChunk(usage=usage)
    assert FinishChunk.of("end", provider_stop_reason="stop") == FinishChunk(
        stop_reason="end", provider_stop_reason="stop"
    )
    for built, validated in (
        (ToolCallStart.of(1, "c", "t"), ToolCallStart(index=1, id="c", name="t")),
        (FinishChunk.of("length"), FinishChunk(stop_reason="length")),
    ):
        assert built.model_dump_json() == validated.model_dump_json()
        assert built.model_fields_set <= validated.model_fields_set | {
            "provider_stop_reason",
            "model",
        }
