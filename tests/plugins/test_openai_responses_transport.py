"""The ``openai-responses`` provider against the loopback Responses server, over both
transports: tool loops through a real runtime (its egress-checked HTTP client), reasoning
carried as provider state, ``previous_response_id`` chains, the WebSocket pool and its
recoveries, error classification, stop reasons."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from _provider_fixtures import provider_factory, run_stream
from _responses_server import KEY, ResponsesServer

import agentrig
from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.llm import (
    AuthenticationError,
    ModelRegistry,
    ModelRequest,
    Provider,
    ProviderConfig,
    ProviderError,
    ProviderStateBlock,
    RateLimitError,
    ToolMessage,
    ToolSpec,
    UserMessage,
    capture_efforts,
)
from agentrig.tools import tool

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

WEATHER = ToolSpec(
    name="get_weather",
    description="The weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)


@tool(risk="inspect")
def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny" if city == "Paris" else "unknown"


@pytest.fixture
def server() -> Iterator[ResponsesServer]:
    with ResponsesServer() as running:
        yield running


def _config(server: ResponsesServer, **options: Any) -> dict[str, Any]:
    return {
        "providers": {
            "openai": {
                "kind": "openai-responses",
                "credentials": {"api_key": "$ENV:OPENAI_KEY"},
                "options": {
                    "base_url": server.base_url,
                    "allow_private_base_url": True,
                    "max_retries": 0,
                    **options,
                },
            }
        },
        "agents": {
            "assistant": {"provider": "openai", "model": "gpt-5-mini", "tools": ["get_weather"]}
        },
    }


async def _run(server: ResponsesServer, prompt: str, **options: Any) -> Any:
    memory = agentrig.MemorySource()
    memory.add("tools", "get_weather", get_weather)
    async with agentrig.open_runtime(
        _config(server, **options),
        resolver=agentrig.env_resolver({"OPENAI_KEY": KEY}),
        memory=memory,
        environ={},
    ) as rt:
        return await rt.agent("assistant").run(prompt)


def _direct(server: ResponsesServer, **options: Any) -> Provider:
    factory = provider_factory("openai-responses")
    api_key = options.pop("api_key", KEY)

    def http(**kwargs: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=kwargs.get("timeout"), trust_env=False)

    config = ProviderConfig(
        id="openai-responses",
        kind="openai-responses",
        options={"base_url": server.base_url, "allow_private_base_url": True, **options},
        credentials={"api_key": api_key},
        http=http,
        models=ModelRegistry(),
    )
    provider: Provider = factory(config)
    return provider


@asynccontextmanager
async def _provider(server: ResponsesServer, **options: Any) -> AsyncIterator[Provider]:
    provider = _direct(server, max_retries=0, **options)
    try:
        yield provider
    finally:
        await provider.aclose()


def _request(prompt: str = "weather in Paris?", **fields: Any) -> ModelRequest:
    return ModelRequest(
        model="gpt-5-mini", messages=(UserMessage.of(prompt),), tools=(WEATHER,), **fields
    )


def _plain(prompt: str = "hi", **fields: Any) -> ModelRequest:
    """A request offering no tools (the server answers "hello")."""
    return ModelRequest(model="gpt-5-mini", messages=(UserMessage.of(prompt),), **fields)


# -- tool loops through a runtime ------------------------------------------------------------


@pytest.mark.parametrize("transport", ["http", "websocket"])
async def test_stateless_tool_loop_sends_the_encrypted_reasoning_back(
    server: ResponsesServer, transport: str
) -> None:
    result = await _run(server, "weather in Paris?", transport=transport)
    assert result.value == "It is sunny."
    first, second = (seen.body for seen in server.seen)
    assert first["store"] is False
    assert first["include"] == ["reasoning.encrypted_content"]
    if transport == "http":  # the whole conversation again, reasoning item included
        assert "previous_response_id" not in second
        kinds = [item.get("type") for item in second["input"]]
        assert kinds == ["message", "reasoning", "function_call", "function_call_output"]
        assert second["input"][1]["encrypted_content"] in server.issued
    else:  # the connection holds the response: only the new item
        assert second["previous_response_id"] == server.seen[0].response_id
        assert [item["type"] for item in second["input"]] == ["function_call_output"]
        assert server.connections == 1


async def test_stored_tool_loop_continues_with_previous_response_id(
    server: ResponsesServer,
) -> None:
    result = await _run(server, "weather in Paris?", transport="http", store=True)
    assert result.value == "It is sunny."
    first, second = (seen.body for seen in server.seen)
    assert first["store"] is True
    assert "include" not in first
    assert second["previous_response_id"] == server.seen[0].response_id
    assert [item["type"] for item in second["input"]] == ["function_call_output"]


# -- the provider port -----------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["http", "websocket"])
async def test_reasoning_usage_and_effort(server: ResponsesServer, transport: str) -> None:
    async with _provider(server, transport=transport, reasoning_summary="auto") as provider:
        with capture_efforts() as reports:
            message, _chunks = await run_stream(provider, _request(reasoning_effort="high"))
            whole = await provider.complete(_request(reasoning_effort="max"), signal=CancelSignal())
    assert [b.type for b in whole.message.content] == [b.type for b in message.content]
    assert [(r.disposition, r.effective, dict(r.native)) for r in reports] == [
        ("applied", "high", {"reasoning": {"effort": "high"}}),
        ("clamped", "high", {"reasoning": {"effort": "high"}}),
    ]
    assert [b.type for b in message.content] == [
        "reasoning",
        "provider_state",
        "tool_call",
        "provider_state",
    ]
    assert message.stop_reason == "tool_calls"
    assert message.usage is not None
    assert (message.usage.cache_read, message.usage.reasoning) == (4, 2)
    assert server.seen[0].body["reasoning"] == {"effort": "high", "summary": "auto"}


@pytest.mark.parametrize("transport", ["http", "websocket"])
async def test_refusal_and_truncation_stop_reasons(server: ResponsesServer, transport: str) -> None:
    async with _provider(server, transport=transport) as provider:
        refused, _ = await run_stream(provider, _request("please refuse"))
        cut, _ = await run_stream(provider, _plain(max_tokens=1))
    assert refused.stop_reason == "refusal"
    assert refused.text == "I can't help with that."
    assert (cut.stop_reason, cut.provider_stop_reason, cut.text) == (
        "length",
        "max_output_tokens",
        "hel",
    )


@pytest.mark.parametrize("transport", ["http", "websocket"])
async def test_a_rate_limit_is_classified(server: ResponsesServer, transport: str) -> None:
    server.fail_next = (429, "rate_limit_exceeded")
    async with _provider(server, transport=transport) as provider:
        with pytest.raises(RateLimitError) as raised:
            await run_stream(provider, _request())
        message, _ = await run_stream(provider, _plain())  # the next one goes through
    assert raised.value.status == 429
    assert raised.value.vendor_code == "rate_limit_exceeded"
    assert message.text == "hello"
    if transport == "websocket":
        assert server.connections == 1  # an error event leaves the connection usable


@pytest.mark.parametrize("transport", ["http", "websocket"])
async def test_a_wrong_key_is_an_authentication_error(
    server: ResponsesServer, transport: str
) -> None:
    async with _provider(server, transport=transport, api_key="sk-wrong") as provider:
        with pytest.raises(AuthenticationError):
            await run_stream(provider, _request())


# -- the WebSocket pool ----------------------------------------------------------------------


def _state(message: Any) -> list[dict[str, Any]]:
    return [b.data for b in message.content if isinstance(b, ProviderStateBlock)]


async def _tool_round(provider: Provider) -> tuple[ModelRequest, Any]:
    first, _ = await run_stream(provider, _request())
    call = first.tool_calls[0]
    follow = ModelRequest(
        model="gpt-5-mini",
        messages=(*_request().messages, first, ToolMessage.of(call.id, call.name, "sunny")),
        tools=(WEATHER,),
    )
    return follow, first


async def test_a_dropped_connection_is_replaced_and_the_whole_conversation_sent(
    server: ResponsesServer,
) -> None:
    async with _provider(server, transport="websocket") as provider:
        follow, _ = await _tool_round(provider)
        server.drop_next_on = 1
        with capture_efforts() as reports:
            answer, _ = await run_stream(provider, follow)
    assert len(reports) == 1  # sent twice (a new connection), reported once
    assert answer.text == "It is sunny."
    assert server.connections == 2
    last = server.seen[-1]
    assert last.connection == 2
    assert "previous_response_id" not in last.body
    assert [i["type"] for i in last.body["input"]][-1] == "function_call_output"


async def test_a_connection_at_its_time_limit_is_replaced(server: ResponsesServer) -> None:
    async with _provider(server, transport="websocket") as provider:
        follow, _ = await _tool_round(provider)
        server.limit_next_on = 1
        answer, _ = await run_stream(provider, follow)
    assert answer.text == "It is sunny."
    assert server.connections == 2
    assert "previous_response_id" not in server.seen[-1].body


async def test_a_forgotten_response_is_sent_again_whole(server: ResponsesServer) -> None:
    async with _provider(server, transport="websocket", store=True) as provider:
        follow, _ = await _tool_round(provider)
    server.stored.clear()  # the server lost it, and the next provider has its own connection
    async with _provider(server, transport="websocket", store=True) as provider:
        answer, _ = await run_stream(provider, follow)
    assert answer.text == "It is sunny."
    refused, resent = server.seen[-2:]
    assert refused.response_id is None
    assert refused.body["previous_response_id"] == server.seen[0].response_id
    assert "previous_response_id" not in resent.body


async def test_parallel_requests_get_connections_of_their_own(server: ResponsesServer) -> None:
    async with _provider(server, transport="websocket") as provider:
        answers: list[str] = []

        async def one() -> None:
            message, _ = await run_stream(provider, _plain())
            answers.append(message.text)

        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(one)
        assert answers == ["hello"] * 3
        message, _ = await run_stream(provider, _plain())  # a pooled one is reused
    assert message.text == "hello"
    assert server.connections == 3


async def _cancel_at_first_chunk(stream: AsyncIterator[Any], signal: CancelSignal) -> None:
    async for _chunk in stream:
        signal.cancel()


async def test_cancelling_mid_response_closes_that_connection(server: ResponsesServer) -> None:
    async with _provider(server, transport="websocket") as provider:
        signal = CancelSignal()
        with pytest.raises(AbortError):
            await _cancel_at_first_chunk(provider.stream(_plain(), signal=signal), signal)
        message, _ = await run_stream(provider, _plain())
    assert message.text == "hello"
    assert server.connections == 2  # the interrupted connection was not reused


async def test_an_endpoint_without_the_websocket_mode_says_how_to_opt_out() -> None:
    with ResponsesServer(websocket=False) as server:
        async with _provider(server, transport="websocket") as provider:
            with pytest.raises(ProviderError, match='transport = "http"'):
                await run_stream(provider, _plain())
        async with _provider(server, transport="http") as provider:
            message, _ = await run_stream(provider, _plain())
    assert message.text == "hello"


async def test_the_default_transport_is_http_off_openai() -> None:
    with ResponsesServer(websocket=False) as server:
        async with _provider(server) as provider:
            message, _ = await run_stream(provider, _plain())
    assert message.text == "hello"
    assert [seen.transport for seen in server.seen] == ["http"]
