"""``HttpProvider`` with the NDJSON opt-in, against ``MockProviderServer`` on loopback.

A provider for an Ollama-like API in about twenty lines: one JSON object per streamed line,
the answer computed from the conversation by the server.  Streaming and not give the same
message, a 503 is retried, a capability declared absent is refused before any request,
and the provider runs inside a runtime from its entry-point factory.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import anyio
import pytest

import agentrig
from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.llm import (
    AssistantMessage,
    Capabilities,
    CapabilityError,
    FinishChunk,
    ModelRequest,
    ModelResponse,
    ProviderProtocolError,
    ProviderStreamError,
    StreamAssembler,
    StreamChunk,
    TextBlock,
    TextDelta,
    UserMessage,
)
from agentrig.llm.http import HttpProvider, HttpProviderOptions
from agentrig.testing import MockProviderServer, MockReply, MockRequest

pytestmark = pytest.mark.anyio


class LinesOptions(HttpProviderOptions):
    base_url: str = "http://127.0.0.1:11434"
    allow_private_base_url: bool = True
    max_retries: int = 2
    retry_base_delay: float = 0.0


class LinesProvider(HttpProvider):
    """Chat over ``POST /api/chat``; a stream is one JSON object per line."""

    kind = "lines"
    path = "/api/chat"
    options_model = LinesOptions
    stream_format = "ndjson"
    declared = Capabilities(streaming=True, tool_choice=False)

    def build_body(self, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
        messages = [{"role": m.role, "content": m.text} for m in request.messages]
        return {"model": request.model, "messages": messages, "stream": stream}

    def parse_response(self, data: dict[str, Any], *, request_id: str | None) -> ModelResponse:
        text = TextBlock(text=data["message"]["content"])
        message = AssistantMessage(content=(text,), stop_reason="end")
        return ModelResponse(message=message, request_id=request_id)

    def parse_event(self, data: dict[str, Any]) -> Iterable[StreamChunk]:
        if data.get("done"):
            return [FinishChunk(stop_reason="end")]
        return [TextDelta.of(data["message"]["content"])]


def _echo(request: MockRequest) -> MockReply:
    """Answers the last message, shouted; streamed word by word when asked to stream."""
    answer = str(request.body["messages"][-1]["content"]).upper()
    if not request.body["stream"]:
        return MockReply(body={"message": {"role": "assistant", "content": answer}})
    words = answer.split(" ")
    pieces = [w if i == 0 else f" {w}" for i, w in enumerate(words)]
    events: list[dict[str, Any]] = [{"message": {"content": p}, "done": False} for p in pieces]
    return MockReply(events=[*events, {"done": True}], stream_format="ndjson")


def _request(text: str, **fields: Any) -> ModelRequest:
    return ModelRequest(model="tiny", messages=(UserMessage.of(text),), **fields)


async def _drain(provider: LinesProvider, into: list[StreamChunk]) -> None:
    async for chunk in provider.stream(_request("x"), signal=CancelSignal()):
        into.append(chunk)


async def test_streamed_and_whole_answers_agree() -> None:
    with MockProviderServer(_echo) as server:
        provider = LinesProvider(options=LinesOptions(base_url=server.url))
        try:
            whole = await provider.complete(_request("hello there"), signal=CancelSignal())
            assembler = StreamAssembler()
            async for chunk in provider.stream(_request("hello there"), signal=CancelSignal()):
                assembler.feed(chunk)
        finally:
            await provider.aclose()
    assert whole.message.text == "HELLO THERE"
    assert assembler.message() == whole.message
    assert [r.path for r in server.requests] == ["/api/chat", "/api/chat"]
    assert server.requests[1].headers["accept"] == "application/x-ndjson"


async def test_a_server_error_is_retried() -> None:
    failures = [503]

    def flaky(request: MockRequest) -> MockReply:
        if failures:
            return MockReply(status=failures.pop(), body={"error": "busy"})
        return _echo(request)

    with MockProviderServer(flaky) as server:
        provider = LinesProvider(options=LinesOptions(base_url=server.url))
        try:
            response = await provider.complete(_request("again"), signal=CancelSignal())
        finally:
            await provider.aclose()
    assert response.message.text == "AGAIN"
    assert len(server.requests) == 2


async def test_a_capability_declared_absent_is_refused_before_any_request() -> None:
    with MockProviderServer(_echo) as server:
        provider = LinesProvider(options=LinesOptions(base_url=server.url))
        try:
            with pytest.raises(CapabilityError, match="does not support forcing a tool"):
                await provider.complete(_request("x", tool_choice="look"), signal=CancelSignal())
        finally:
            await provider.aclose()
    assert server.requests == []


async def test_a_line_that_is_not_json_is_a_stream_error() -> None:
    def broken(request: MockRequest) -> MockReply:
        events: list[dict[str, Any] | str] = [{"message": {"content": "ok"}, "done": False}]
        events.append("<html>oops")
        return MockReply(events=events, stream_format="ndjson")

    chunks: list[StreamChunk] = []
    with MockProviderServer(broken) as server:
        provider = LinesProvider(options=LinesOptions(base_url=server.url))
        try:
            with pytest.raises(ProviderStreamError, match="not a JSON object: '<html>oops'"):
                await _drain(provider, chunks)
        finally:
            await provider.aclose()
    assert [type(c) for c in chunks] == [TextDelta]


async def test_an_event_stream_where_ndjson_was_asked_is_a_protocol_error() -> None:
    def sse(request: MockRequest) -> MockReply:
        return MockReply(events=[{"done": True}], stream_format="sse")

    with MockProviderServer(sse) as server:
        provider = LinesProvider(options=LinesOptions(base_url=server.url))
        try:
            with pytest.raises(ProviderProtocolError, match="not application/x-ndjson"):
                await _drain(provider, [])
        finally:
            await provider.aclose()
    assert len(server.requests) == 1  # not retried: the same request gets the same answer


async def test_a_cancelled_stream_stops_at_once_and_closes() -> None:
    def stalled(request: MockRequest) -> MockReply:
        first = {"message": {"content": "hello"}, "done": False}
        return MockReply(events=[first], stream_format="ndjson", hold_open=30.0)

    signal = CancelSignal()
    seen: list[StreamChunk] = []
    with MockProviderServer(stalled) as server:
        provider = LinesProvider(options=LinesOptions(base_url=server.url))
        try:
            with anyio.fail_after(5):  # far below the server's 30 s stall
                with pytest.raises(AbortError):
                    await _drain_until_cancelled(provider, signal, seen)
        finally:
            await provider.aclose()
    assert [type(c) for c in seen] == [TextDelta]


async def _drain_until_cancelled(
    provider: LinesProvider, signal: CancelSignal, into: list[StreamChunk]
) -> None:
    """Read the stream while another task cancels ``signal`` during a blocked read."""
    aborted: AbortError | None = None

    async def cancel_soon() -> None:
        await anyio.sleep(0.2)
        signal.cancel("the caller gave up")

    async with anyio.create_task_group() as tg:
        tg.start_soon(cancel_soon)
        try:
            async for chunk in provider.stream(_request("x"), signal=signal):
                into.append(chunk)
        except AbortError as exc:  # raised outside the task group, not in an exception group
            aborted = exc
    if aborted is not None:
        raise aborted


async def test_the_factory_is_an_entry_point_a_runtime_composes() -> None:
    with MockProviderServer(_echo) as server:
        memory = agentrig.MemorySource()
        memory.add("providers", "lines", LinesProvider.factory())
        config = {
            "providers": {"local": {"kind": "lines", "options": {"base_url": server.url}}},
            "agents": {"assistant": {"provider": "local", "model": "tiny"}},
        }
        async with agentrig.open_runtime(config, memory=memory, environ={}) as rt:
            result = await rt.agent("assistant").run("from the runtime")
    assert result.value == "FROM THE RUNTIME"
    assert server.requests[-1].body["model"] == "tiny"
