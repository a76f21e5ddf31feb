"""A provider stream that breaks the chunk protocol fails loudly as ``provider.protocol``,
naming the provider and the chunk -- never a reply the model did not write (issue 37, point 3).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest
from agentloop_support import EnvFactory, WatchedProvider, events

from agentrig import CancelSignal
from agentrig.llm import (
    FinishChunk,
    ModelRequest,
    ProviderProtocolError,
    RateLimitError,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
)

pytestmark = pytest.mark.anyio


class Streams(WatchedProvider):
    """Streams ``items`` as they are, then raises ``raises`` if given."""

    def __init__(self, items: Sequence[object], raises: Exception | None = None) -> None:
        super().__init__(["unused"])
        self.items = items
        self.raises = raises
        self.closed = False

    async def stream(  # type: ignore[override]
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[object]:
        try:
            for item in self.items:
                yield item
            if self.raises is not None:
                raise self.raises
        finally:
            self.closed = True


async def _failure(env: EnvFactory, provider: Streams) -> ProviderProtocolError:
    async with env(provider=provider) as e:
        with pytest.raises(ProviderProtocolError) as caught:
            await e.agent.run("hi")
        assert provider.closed
        assert events(e.agent, "assistant/message") == []  # nothing the model did not write
        (logged,) = events(e.agent, "model/error")
        assert (logged.code, logged.provider) == ("provider.protocol", "local")
        assert events(e.agent, "turn/end")[-1].reason == "failed"
    error = caught.value
    assert (error.code, error.provider) == ("provider.protocol", "local")
    return error


async def test_a_tool_call_fragment_never_started_is_a_protocol_error(env: EnvFactory) -> None:
    stray = ToolCallDelta.of(3, '{"city": "Paris"}')
    error = await _failure(env, Streams([TextDelta.of("Let me look."), stray]))
    assert str(error).startswith(
        "provider 'local' streamed a tool-call fragment for call index 3, which no "
        "ToolCallStart opened: ToolCallDelta("
    )
    assert "Paris" in str(error)


def test_a_fragment_after_its_start_passes() -> None:
    from agentrig.llm import StreamCheck

    check = StreamCheck("p")
    chunks = [
        ToolCallStart.of(0, "c1", "clock"),
        ToolCallDelta.of(0, "{}"),
        FinishChunk.of("end"),
    ]
    assert [check.chunk(c) for c in chunks] == chunks


async def test_a_plain_string_chunk_is_a_protocol_error_not_an_empty_answer(
    env: EnvFactory,
) -> None:
    error = await _failure(env, Streams(["Hello there"]))
    assert str(error) == "provider 'local' streamed a str, not a StreamChunk: 'Hello there'"


async def test_an_exception_from_stream_keeps_the_provider(env: EnvFactory) -> None:
    provider = Streams([TextDelta.of("par")], raises=KeyError("choices"))
    error = await _failure(env, provider)
    assert str(error) == "provider 'local' raised KeyError: 'choices'"
    assert isinstance(error.__cause__, KeyError)


async def test_a_provider_error_keeps_its_code_and_gains_the_provider(env: EnvFactory) -> None:
    provider = Streams([], raises=RateLimitError("slow down", status=429))
    async with env(provider=provider) as e:
        with pytest.raises(RateLimitError) as caught:
            await e.agent.run("hi")
    assert caught.value.provider == "local"


def test_a_long_chunk_is_shown_shortened() -> None:
    from agentrig.llm import StreamCheck

    with pytest.raises(ProviderProtocolError) as caught:
        StreamCheck("p").chunk("x" * 500)
    assert str(caught.value).endswith("...")
    assert len(str(caught.value)) < 200
    chunk: StreamChunk = TextDelta.of("ok")
    assert StreamCheck("p").chunk(chunk) is chunk
