"""The scripted provider's chunks: each is equal, fields set included, to the chunk built by
validating the same values, and a value a script should not hold fails with pydantic's error
naming the field."""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pydantic
import pytest

from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.llm import FinishChunk, StreamChunk, ToolCallDelta, ToolCallStart, Usage


def _validated(chunk: StreamChunk) -> StreamChunk:
    # the general path: the chunk's class validates the values the fast path was given
    given = {name: getattr(chunk, name) for name in chunk.model_fields_set}
    return type(chunk)(**given)


def _same(chunks: list[StreamChunk]) -> None:
    for chunk in chunks:
        validated = _validated(chunk)
        assert chunk == validated
        assert chunk.model_fields_set == validated.model_fields_set
        assert chunk.model_dump(mode="json") == validated.model_dump(mode="json")
        assert repr(chunk) == repr(validated)


@pytest.mark.parametrize("stop", [None, "end", "length", "refusal", "other"])
def test_tool_call_usage_and_finish_chunks_equal_the_validated_ones(stop: Any) -> None:
    arguments: Mapping[str, Any] = MappingProxyType({"q": "ü", "n": [1, 2.5, None]})
    reply = Reply(
        text="hello",
        reasoning="think",
        tool_calls=(
            ScriptedCall("search", {"q": "x", "deep": True}),
            ScriptedCall("fetch", arguments, id="mine"),
            ScriptedCall("clock"),
            ScriptedCall("raw", {"ignored": 1}, raw_arguments='{"a":'),
        ),
        usage=Usage.of(12, 4, cache_read=2),
        stop_reason=stop,
    )
    chunks = reply.chunks(call_index_start=3)
    _same(chunks)
    starts = [c for c in chunks if isinstance(c, ToolCallStart)]
    assert [(c.index, c.id, c.name) for c in starts] == [
        (0, "call_3", "search"),
        (1, "mine", "fetch"),
        (2, "call_5", "clock"),
        (3, "call_6", "raw"),
    ]
    deltas = [c.arguments for c in chunks if isinstance(c, ToolCallDelta)]
    assert deltas == [json.dumps({"q": "x", "deep": True}), json.dumps(dict(arguments)), '{"a":']
    finish = chunks[-1]
    assert isinstance(finish, FinishChunk)
    assert finish.stop_reason == (stop or "tool_calls")


def test_values_that_are_not_plain_fail_with_the_validation_error() -> None:
    # what a script read without checks may hold (typed Any: the annotations exclude it)
    finished: Any = "finished"
    seven: Any = 7
    with pytest.raises(pydantic.ValidationError, match="stop_reason"):
        Reply(text="x", stop_reason=finished).chunks()
    with pytest.raises(pydantic.ValidationError, match="name"):
        Reply(tool_calls=(ScriptedCall(seven),)).chunks()
    with pytest.raises(pydantic.ValidationError, match="id"):
        Reply(tool_calls=(ScriptedCall("t", id=seven),)).chunks()
