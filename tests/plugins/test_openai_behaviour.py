"""Behaviour of the installed ``openai`` provider beyond the recorded traffic: retries,
cancellation, capability refusals, id pass-through, request shaping and client ownership."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from _provider_fixtures import (
    MockServer,
    TrackingStream,
    body_sent,
    make_provider,
    provider_factory,
    run_stream,
)

from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.llm import (
    AssistantMessage,
    CapabilityError,
    FinishChunk,
    ImageBlock,
    ModelRegistry,
    ModelRequest,
    ProviderConfig,
    ProviderConnectionError,
    ProviderStateBlock,
    RateLimitError,
    ReasoningBlock,
    ReasoningDelta,
    ResponseFormat,
    ServerError,
    StreamChunk,
    SystemMessage,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolMessage,
    ToolSpec,
    Usage,
    UsageChunk,
    UserMessage,
    capability,
)

FAST = {"retry_base_delay": 0.001, "retry_max_delay": 0.01}
OK_BODY = {
    "id": "chatcmpl-1",
    "model": "gpt-4o-2024-08-06",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


def hello(model: str = "gpt-4o", **fields: Any) -> ModelRequest:
    return ModelRequest(model=model, messages=(UserMessage.of("hello"),), **fields)


def sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks]
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


# -- retries ---------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_429_with_retry_after_is_retried_after_the_server_wait() -> None:
    answers = [
        httpx.Response(429, headers={"retry-after": "0.2"}, json={"error": {"type": "rate"}}),
        httpx.Response(200, json=OK_BODY),
    ]
    server = MockServer(lambda _r: answers.pop(0))
    provider = make_provider("openai", server, options={**FAST, "max_retries": 2})
    start = anyio.current_time()
    response = await provider.complete(hello(), signal=CancelSignal())
    elapsed = anyio.current_time() - start
    await provider.aclose()
    assert response.message.text == "hi"
    assert len(server.requests) == 2
    assert elapsed >= 0.19  # the server's Retry-After, not the 1 ms backoff


@pytest.mark.anyio
async def test_a_retry_after_longer_than_the_cap_is_not_retried_early() -> None:
    answers = [
        httpx.Response(429, headers={"retry-after": "3600"}, json={}),
        httpx.Response(200, json=OK_BODY),
    ]
    server = MockServer(lambda _r: answers.pop(0))
    provider = make_provider("openai", server, options={**FAST, "max_retry_after": 0.05})
    with pytest.raises(RateLimitError) as caught:
        await provider.complete(hello(), signal=CancelSignal())
    await provider.aclose()
    assert len(server.requests) == 1
    assert caught.value.retry_after == 3600


@pytest.mark.anyio
async def test_server_errors_are_retried_then_given_up_with_server_error() -> None:
    server = MockServer(lambda _r: httpx.Response(500, json={"error": {"message": "boom"}}))
    provider = make_provider("openai", server, options={**FAST, "max_retries": 3})
    with pytest.raises(ServerError) as caught:
        await provider.complete(hello(), signal=CancelSignal())
    await provider.aclose()
    assert len(server.requests) == 4
    assert caught.value.status == 500
    assert caught.value.retryable


@pytest.mark.anyio
async def test_connection_errors_are_retried() -> None:
    calls = {"n": 0}

    def respond(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] == 1:
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(200, json=OK_BODY)

    provider = make_provider("openai", MockServer(respond), options=FAST)
    response = await provider.complete(hello(), signal=CancelSignal())
    await provider.aclose()
    assert response.message.text == "hi"
    assert calls["n"] == 2


@pytest.mark.anyio
async def test_connection_errors_exhausted_raise_provider_connection_error() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    server = MockServer(respond)
    provider = make_provider("openai", server, options={**FAST, "max_retries": 1})
    with pytest.raises(ProviderConnectionError):
        await provider.complete(hello(), signal=CancelSignal())
    await provider.aclose()
    assert len(server.requests) == 2


@pytest.mark.anyio
async def test_exhausted_quota_is_not_retried() -> None:
    body = {"error": {"type": "insufficient_quota", "code": "insufficient_quota", "message": "x"}}
    server = MockServer(lambda _r: httpx.Response(429, json=body))
    provider = make_provider("openai", server, options=FAST)
    with pytest.raises(RateLimitError):
        await provider.complete(hello(), signal=CancelSignal())
    await provider.aclose()
    assert len(server.requests) == 1


@pytest.mark.anyio
async def test_cancel_during_the_retry_wait_aborts_at_once() -> None:
    server = MockServer(lambda _r: httpx.Response(429, headers={"retry-after": "30"}, json={}))
    provider = make_provider("openai", server, options={"max_retries": 5})
    signal = CancelSignal()
    start = anyio.current_time()
    async with anyio.create_task_group() as tg:

        async def cancel_soon() -> None:
            await anyio.sleep(0.05)
            signal.cancel("user pressed stop")

        tg.start_soon(cancel_soon)
        with pytest.raises(AbortError) as caught:
            await provider.complete(hello(), signal=signal)
    assert caught.value.reason == "user pressed stop"
    await provider.aclose()
    assert anyio.current_time() - start < 5
    assert len(server.requests) == 1


@pytest.mark.anyio
async def test_an_already_cancelled_signal_sends_nothing() -> None:
    server = MockServer(lambda _r: httpx.Response(200, json=OK_BODY))
    provider = make_provider("openai", server)
    signal = CancelSignal()
    signal.cancel("before start")
    with pytest.raises(AbortError):
        await provider.complete(hello(), signal=signal)
    with pytest.raises(AbortError):
        await run_stream(provider, hello(), signal)
    await provider.aclose()
    assert server.requests == []


# -- capabilities ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_missing_capabilities_are_refused_before_any_request() -> None:
    server = MockServer(lambda _r: httpx.Response(200, json=OK_BODY))
    provider = make_provider(
        "openai",
        server,
        options={"structured_output": "none"},
    )
    fmt = ResponseFormat(name="Out", schema={"type": "object"})
    refused = [
        hello(response_format=fmt, structured_output="native"),
        hello(structured_output="json_mode"),
        hello(structured_output="native"),  # native without a schema
    ]
    for request in refused:
        with pytest.raises(CapabilityError):
            await provider.complete(request, signal=CancelSignal())
        with pytest.raises(CapabilityError):
            await run_stream(provider, request)
    await provider.aclose()
    assert server.requests == []


@pytest.mark.anyio
async def test_an_unsendable_tool_schema_is_refused_before_any_request() -> None:
    server = MockServer(lambda _r: httpx.Response(200, json=OK_BODY))
    strict = make_provider("openai", server, options={"strict_tools": "always"})
    untyped = ToolSpec(
        name="f", description="", parameters={"type": "object", "properties": {"a": {}}}
    )
    with pytest.raises(CapabilityError, match="strict"):
        await strict.complete(hello(tools=(untyped,)), signal=CancelSignal())
    await strict.aclose()
    provider = make_provider("openai", server)
    not_an_object = ToolSpec(name="g", description="", parameters={"type": "string"})
    with pytest.raises(CapabilityError, match="object"):
        await provider.complete(hello(tools=(not_an_object,)), signal=CancelSignal())
    with pytest.raises(CapabilityError):
        await run_stream(provider, hello(tools=(not_an_object,)))
    await provider.aclose()
    assert server.requests == []


def test_capabilities_come_from_the_model_table_and_the_endpoint() -> None:
    server = MockServer(lambda _r: httpx.Response(200))
    provider = make_provider("openai", server)
    assert capability(provider, "gpt-4o-2024-08-06", "structured_output") == "native"
    assert capability(provider, "o3", "reasoning_effort") == ("low", "medium", "high")
    assert capability(provider, "gpt-4o", "vendor_endpoint") is True
    # silence is not a denial
    assert capability(provider, "some-local-model", "structured_output") is None
    assert capability(provider, "some-local-model", "streaming") is True
    gateway = make_provider(
        "openai", server, options={"base_url": "https://gateway.example.com/v1"}
    )
    assert capability(gateway, "gpt-4o", "vendor_endpoint") is False


# -- streaming: cancellation and truncation -------------------------------------------------


def hanging(first: bytes) -> tuple[MockServer, TrackingStream]:
    stream = TrackingStream([first, b"never sent"], hang_after=1)
    server = MockServer(
        lambda _r: httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=stream)
    )
    return server, stream


@pytest.mark.anyio
async def test_closing_the_stream_early_closes_the_response() -> None:
    server, body = hanging(sse(chunk({"content": "Hel"}), done=False))
    provider = make_provider("openai", server)
    agen = provider.stream(hello(), signal=CancelSignal())
    first = await agen.__anext__()
    assert first.type == "text_delta"
    await agen.aclose()  # type: ignore[attr-defined]
    assert body.closed
    await provider.aclose()


@pytest.mark.anyio
async def test_a_cancel_signal_stops_a_stream_and_closes_the_response() -> None:
    server, body = hanging(sse(chunk({"content": "Hel"}), done=False))
    provider = make_provider("openai", server)
    signal = CancelSignal()
    seen: list[str] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def cancel_soon() -> None:
                await anyio.sleep(0.05)
                signal.cancel("stop")

            tg.start_soon(cancel_soon)

            async def consume() -> None:
                async for item in provider.stream(hello(), signal=signal):
                    seen.append(item.type)

            with pytest.raises(AbortError):
                await consume()
    assert seen == ["text_delta"]
    assert body.closed
    await provider.aclose()


@pytest.mark.anyio
async def test_a_stream_cut_before_its_end_is_a_connection_error() -> None:
    body = sse(chunk({"content": "partial"}), done=False)
    server = MockServer(lambda _r: httpx.Response(200, content=body))
    provider = make_provider("openai", server)
    with pytest.raises(ProviderConnectionError):
        await run_stream(provider, hello())
    await provider.aclose()


# -- the per-token short path ----------------------------------------------------------------

# Chunks beside and just outside the short path's shape (one choice, index 0, a delta of
# non-empty content and perhaps the role, no finish reason, no usage), each with the stream
# chunks the general path gives for it: the short path must take the first kind and give the
# same, and leave the others to the general path.
EDGE_CHUNKS: list[tuple[dict[str, Any], list[StreamChunk]]] = [
    (chunk({"role": "assistant", "content": "a"}), [TextDelta(text="a")]),
    (chunk({"content": "b"}), [TextDelta(text="b")]),
    (chunk({"content": ""}), []),
    (chunk({"role": "assistant"}), []),
    (chunk({"content": None}), []),
    (chunk({"content": "c", "refusal": "no"}), [TextDelta(text="c"), TextDelta(text="no")]),
    (
        chunk({"content": "d", "reasoning_content": "r"}),
        [ReasoningDelta(text="r"), TextDelta(text="d")],
    ),
    (
        {"model": "other", "choices": [{"index": 1, "delta": {"content": "x"}}]},
        [],
    ),
    (
        {
            "model": "m2",
            "choices": [
                {"index": 0, "delta": {"content": "e"}, "finish_reason": None},
                {"index": 1, "delta": {"content": "f"}, "finish_reason": None},
            ],
        },
        [TextDelta(text="e")],
    ),
    (
        {
            "choices": [{"index": 0, "delta": {"content": "g"}, "finish_reason": None}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
        },
        [TextDelta(text="g"), UsageChunk(usage=Usage(prompt=1, completion=2, total=3))],
    ),
    ({"choices": [{"delta": {"content": "h"}}]}, [TextDelta(text="h")]),
    ({"model": "m3", "choices": [{"index": 0, "delta": {"content": "i"}}]}, [TextDelta(text="i")]),
    (chunk({"content": "j"}, finish="stop"), [TextDelta(text="j")]),
]


@pytest.mark.anyio
async def test_text_chunks_on_and_off_the_short_path_stream_what_the_general_path_gives() -> None:
    body = sse(*[c for c, _ in EDGE_CHUNKS])
    provider = make_provider("openai", MockServer(lambda _r: httpx.Response(200, content=body)))
    message, chunks = await run_stream(provider, hello())
    await provider.aclose()
    expected = [out for _, outs in EDGE_CHUNKS for out in outs]
    *deltas, finish = chunks
    assert deltas == expected
    assert all(type(d) is type(e) for d, e in zip(deltas, expected, strict=True))
    # the model of the last chunk naming one (kept on the short path too), the refusal seen
    assert finish == FinishChunk(
        stop_reason="refusal", provider_stop_reason="stop", model="gpt-4o", response_id="c"
    )
    assert message.text == "abcnodeghij"


@pytest.mark.anyio
async def test_the_short_path_keeps_the_model_a_text_chunk_names() -> None:
    body = sse(
        {"model": "m1", "choices": [{"index": 0, "delta": {"role": "assistant"}}]},
        {"model": "m2", "choices": [{"index": 0, "delta": {"content": "hi"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    )
    provider = make_provider("openai", MockServer(lambda _r: httpx.Response(200, content=body)))
    message, chunks = await run_stream(provider, hello())
    await provider.aclose()
    assert chunks == [
        TextDelta(text="hi"),
        FinishChunk(stop_reason="end", provider_stop_reason="stop", model="m2"),
    ]
    assert message.model == "m2"


# -- tool-call ids and names -----------------------------------------------------------------


@pytest.mark.anyio
async def test_empty_ids_and_unknown_tool_names_pass_through_in_both_modes() -> None:
    calls = [
        {"id": "", "type": "function", "function": {"name": "not_offered", "arguments": "{}"}},
        {"id": "", "type": "function", "function": {"name": "lookup", "arguments": '{"q":1}'}},
    ]
    body = {
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": calls},
            }
        ],
    }
    stream_body = sse(
        chunk({"tool_calls": [{"index": 0, "id": "", "function": {"name": "not_offered"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "", "function": {"name": "lookup"}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"q":'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": "1}"}}]}),
        chunk({}, finish="tool_calls"),
    )
    request = hello(
        "m", tools=(ToolSpec(name="lookup", description="", parameters={"type": "object"}),)
    )
    server = MockServer(
        lambda r: (
            httpx.Response(200, content=stream_body)
            if json.loads(r.content)["stream"]
            else httpx.Response(200, json=body)
        )
    )
    provider = make_provider("openai", server)
    response = await provider.complete(request, signal=CancelSignal())
    streamed, _ = await run_stream(provider, request)
    await provider.aclose()
    expected = [("", "not_offered", {}), ("", "lookup", {"q": 1})]
    for message in (response.message, streamed):
        assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == expected
    assert streamed.content == response.message.content  # the two paths agree
    assert streamed.stop_reason == response.message.stop_reason == "tool_calls"


@pytest.mark.anyio
async def test_non_json_arguments_are_kept_raw() -> None:
    calls = [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{oops"}}]
    body = {
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "tool_calls": calls},
            }
        ],
    }
    provider = make_provider("openai", MockServer(lambda _r: httpx.Response(200, json=body)))
    response = await provider.complete(hello("m"), signal=CancelSignal())
    await provider.aclose()
    (call,) = response.message.tool_calls
    assert call.arguments == {}
    assert call.raw_arguments == "{oops"


# -- request shaping -------------------------------------------------------------------------


async def sent_body(request: ModelRequest, options: dict[str, Any] | None = None) -> dict[str, Any]:
    return await body_sent("openai", request, OK_BODY, options)


@pytest.mark.anyio
async def test_reasoning_effort_only_for_models_that_have_it() -> None:
    assert (await sent_body(hello("o3", reasoning_effort="high")))["reasoning_effort"] == "high"
    assert (await sent_body(hello("o3", reasoning_effort="max")))["reasoning_effort"] == "high"
    assert "reasoning_effort" not in await sent_body(hello("o3", reasoning_effort="minimal"))
    assert "reasoning_effort" not in await sent_body(hello("o3", reasoning_effort="auto"))
    assert "reasoning_effort" not in await sent_body(hello("gpt-4o", reasoning_effort="high"))
    assert "reasoning_effort" not in await sent_body(hello("unknown", reasoning_effort="high"))
    gpt5 = await sent_body(hello("gpt-5-mini", reasoning_effort="minimal"))
    assert gpt5["reasoning_effort"] == "minimal"


@pytest.mark.anyio
async def test_structured_output_transports() -> None:
    fmt = ResponseFormat(name="Out", schema={"type": "object", "properties": {}})
    native = await sent_body(hello(response_format=fmt, structured_output="native"))
    assert native["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Out", "schema": fmt.schema_, "strict": True},
    }
    json_mode = await sent_body(hello(structured_output="json_mode"))
    assert json_mode["response_format"] == {"type": "json_object"}
    prompted = await sent_body(hello(response_format=fmt, structured_output="prompt"))
    assert "response_format" not in prompted
    assert prompted["messages"][0]["role"] == "system"
    assert '"properties":{}' in prompted["messages"][0]["content"]


@pytest.mark.anyio
async def test_history_mapping_and_other_providers_state_is_dropped() -> None:
    history = (
        SystemMessage(text="be brief"),
        UserMessage.of("weather?"),
        AssistantMessage(
            content=(
                ReasoningBlock(text="thinking..."),
                ProviderStateBlock(provider="anthropic", data={"type": "thinking"}),
                TextBlock(text="checking"),
                ToolCallBlock(id="", name="weather", arguments={"city": "Oslo"}),
            )
        ),
        ToolMessage.of("", "weather", "rain"),
    )
    body = await sent_body(
        ModelRequest(
            model="gpt-4o", messages=history, max_tokens=50, stop=("END",), tool_choice="weather"
        )
    )
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": "checking",
            "tool_calls": [
                {
                    "id": "",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "", "content": "rain"},
    ]
    assert body["max_completion_tokens"] == 50
    assert body["stop"] == ["END"]
    assert "tool_choice" not in body  # no tools offered: nothing to force


@pytest.mark.anyio
async def test_forced_tool_choice_and_strict_tools() -> None:
    strict_schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    loose_schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    tools = (
        ToolSpec(name="strict", description="s", parameters=strict_schema),
        ToolSpec(name="loose", description="l", parameters=loose_schema),
    )
    body = await sent_body(hello(tools=tools, tool_choice="strict", parallel_tool_calls=False))
    assert body["tool_choice"] == {"type": "function", "function": {"name": "strict"}}
    assert body["parallel_tool_calls"] is False
    assert body["tools"][0]["function"]["strict"] is True
    assert "strict" not in body["tools"][1]["function"]
    gateway = await sent_body(hello(tools=tools), {"base_url": "https://gateway.example.com/v1"})
    assert all("strict" not in t["function"] for t in gateway["tools"])


@pytest.mark.anyio
async def test_headers_carry_the_configured_credentials_only() -> None:
    server = MockServer(lambda _r: httpx.Response(200, json=OK_BODY))
    provider = make_provider(
        "openai", server, options={"organization": "org-1", "project": "p-1"}, api_key="sk-abc"
    )
    await provider.complete(hello(), signal=CancelSignal())
    await provider.aclose()
    headers = server.requests[0].headers
    assert headers["authorization"] == "Bearer sk-abc"
    assert headers["openai-organization"] == "org-1"
    assert headers["openai-project"] == "p-1"
    assert server.requests[0].url == "https://api.openai.com/v1/chat/completions"


# -- factory, options, registry, client ownership --------------------------------------------


def test_options_are_strict_and_private_base_urls_need_consent() -> None:
    factory = provider_factory("openai")
    options_model = factory.options_model
    with pytest.raises(ValueError, match="extra"):
        options_model.model_validate({"bogus": 1})
    with pytest.raises(ValueError, match="private"):
        options_model.model_validate({"base_url": "http://127.0.0.1:11434/v1"})
    with pytest.raises(ValueError, match="https"):
        options_model.model_validate({"base_url": "http://api.example.com/v1"})
    local = options_model.model_validate(
        {"base_url": "http://localhost:8000/v1", "allow_private_base_url": True}
    )
    assert local.base_url == "http://localhost:8000/v1"


def test_the_factory_contributes_sourced_models_to_the_registry() -> None:
    registry = ModelRegistry()
    make_provider("openai", MockServer(lambda _r: httpx.Response(200)), models=registry)
    info = registry.lookup("gpt-5-mini")
    assert info is not None
    assert info.context_window == 400_000
    assert info.pricing is not None
    assert info.source is not None
    assert "openai.com" in info.source
    # a second instance does not clash with the first one's registrations
    make_provider("openai", MockServer(lambda _r: httpx.Response(200)), models=registry)


@pytest.mark.anyio
async def test_aclose_closes_the_client_it_built() -> None:
    built: list[httpx.AsyncClient] = []
    server = MockServer(lambda _r: httpx.Response(200, json=OK_BODY))

    def http(**kwargs: Any) -> httpx.AsyncClient:
        client = server.http(**kwargs)
        built.append(client)
        return client

    factory = provider_factory("openai")
    provider = factory(
        ProviderConfig(id="o", kind="openai", credentials={"api_key": "k"}, http=http)
    )
    assert built == []  # nothing is built before the first call
    await provider.complete(hello(), signal=CancelSignal())
    assert len(built) == 1
    assert not built[0].is_closed
    await provider.aclose()
    assert built[0].is_closed


@pytest.mark.anyio
async def test_a_client_handed_in_is_not_closed() -> None:
    import agentrig_openai  # the public module, for the standalone constructor

    server = MockServer(lambda _r: httpx.Response(200, json=OK_BODY))
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handler)) as client:
        provider = agentrig_openai.OpenAIProvider(api_key="k", client=client)
        await provider.complete(hello(), signal=CancelSignal())
        await provider.aclose()
        assert not client.is_closed


@pytest.mark.anyio
async def test_tool_result_images_follow_the_tool_messages_in_a_user_message() -> None:
    # Chat Completions tool messages take text only: the images come right after the run
    history = (
        UserMessage.of("draw"),
        AssistantMessage(
            content=(
                ToolCallBlock(id="t1", name="chart", arguments={}),
                ToolCallBlock(id="t2", name="plain", arguments={}),
            )
        ),
        ToolMessage(
            call_id="t1",
            name="chart",
            content=(TextBlock(text="a chart"), ImageBlock(media_type="image/png", data="iVBO")),
        ),
        ToolMessage.of("t2", "plain", "just text"),
        UserMessage.of("what do you see?"),
    )
    body = await sent_body(ModelRequest(model="gpt-4o", messages=history))
    assert body["messages"][2:] == [
        {
            "role": "tool",
            "tool_call_id": "t1",
            "content": "a chart\n[1 attachment(s) of this result follow in the next user message]",
        },
        {"role": "tool", "tool_call_id": "t2", "content": "just text"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[attachments of the chart result t1]"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
            ],
        },
        {"role": "user", "content": "what do you see?"},
    ]
