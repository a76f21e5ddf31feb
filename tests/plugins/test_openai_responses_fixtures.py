"""Replay of every recorded OpenAI Responses exchange through the installed plugin.

Each recorded answer (real traffic from ``api.openai.com``) is served through an
``httpx.MockTransport`` to the ``openai-responses`` provider (HTTP transport) and what it
yields -- through ``stream()`` for a recorded stream, ``complete()`` for a recorded body --
is compared with the fixture's ``expect`` block.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from _provider_fixtures import (
    MockServer,
    fixture_names,
    fixture_response,
    load_fixture,
    make_provider,
    run_stream,
)

from agentrig.cancel import CancelSignal
from agentrig.llm import (
    AssistantMessage,
    AuthenticationError,
    InvalidRequestError,
    ModelRequest,
    ProviderError,
    ProviderStateBlock,
    UserMessage,
)

API = "openai-responses"
NAMES = fixture_names(API)
OPTIONS = {"transport": "http", "max_retries": 0}


def _request(fixture: dict[str, Any]) -> ModelRequest:
    body = fixture["request"]["json"]
    return ModelRequest(model=body["model"], messages=(UserMessage.of("replayed"),))


async def _answer(fixture: dict[str, Any]) -> AssistantMessage:
    response, _stream = fixture_response(fixture)
    server = MockServer(lambda _request: response)
    provider = make_provider(API, server, options=OPTIONS)
    try:
        if "sse_events" in fixture["response"]:
            message, _chunks = await run_stream(provider, _request(fixture))
            return message
        return (await provider.complete(_request(fixture), signal=CancelSignal())).message
    finally:
        await provider.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize("name", NAMES)
async def test_recorded_exchange_gives_the_expected_message(name: str) -> None:
    fixture = load_fixture(API, name)
    expect = fixture["expect"]
    if "error" in expect:
        with pytest.raises(ProviderError) as raised:
            await _answer(fixture)
        error = raised.value
        wanted = expect["error"]
        assert error.status == wanted["http_status"]
        assert error.vendor_code == wanted["vendor_code"]
        assert error.retryable is wanted["retryable"]
        cls = AuthenticationError if wanted["http_status"] == 401 else InvalidRequestError
        assert isinstance(error, cls)
        return
    message = await _answer(fixture)
    assert (message.text or None) == expect["text"]
    calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls]
    assert calls == [
        {"id": c["id"], "name": c["name"], "arguments": c["arguments"]}
        for c in expect["tool_calls"]
    ]
    assert message.provider_stop_reason == expect["stop_reason"]
    assert message.stop_reason == ("tool_calls" if calls else "end")
    usage = expect["usage"]
    assert message.usage is not None
    assert (message.usage.prompt, message.usage.completion, message.usage.total) == (
        usage["prompt"],
        usage["completion"],
        usage["total"],
    )
    assert message.usage.cache_read == usage.get("cache_read")
    assert message.usage.reasoning == usage.get("reasoning", message.usage.reasoning)
    kept = [
        b.data
        for b in message.content
        if isinstance(b, ProviderStateBlock) and b.data.get("type") == "reasoning"
    ]
    types = [t for t in expect["output_item_types"] if t == "reasoning"]
    assert len(kept) == len(types)  # every reasoning item is kept to be sent back
    for item in kept:
        assert item.get("encrypted_content") or item.get("summary") is not None


@pytest.mark.anyio
async def test_a_stream_without_its_terminal_event_is_a_connection_error() -> None:
    fixture = load_fixture(API, "text_stream")
    events = [
        line for line in fixture["response"]["sse_events"] if "response.completed" not in line
    ]
    body = "\n".join(events).encode()
    server = MockServer(
        lambda _r: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    )
    provider = make_provider(API, server, options=OPTIONS)
    try:
        with pytest.raises(ProviderError, match="ended before the response was complete"):
            await run_stream(provider, _request(fixture))
    finally:
        await provider.aclose()
