"""Behaviour of the installed ``anthropic`` provider beyond the recorded traffic: thinking
replay, tool-result merging, retries, in-stream errors, cancellation and capability refusals."""

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
    fixture_response,
    load_fixture,
    make_provider,
    provider_factory,
    run_stream,
)

from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.llm import (
    AssistantMessage,
    CapabilityError,
    ImageBlock,
    ModelRegistry,
    ModelRequest,
    OverloadedError,
    ProviderConnectionError,
    ProviderStateBlock,
    ProviderStreamError,
    ReasoningBlock,
    ResponseFormat,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    ToolSpec,
    UserMessage,
    capability,
)

FAST = {"retry_base_delay": 0.001, "retry_max_delay": 0.01}
OK_BODY = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [{"type": "text", "text": "hi"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 5, "output_tokens": 1},
}


def hello(model: str = "claude-sonnet-4-5", **fields: Any) -> ModelRequest:
    return ModelRequest(model=model, messages=(UserMessage.of("hello"),), **fields)


def events(*items: tuple[str, dict[str, Any]]) -> bytes:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in items).encode()


START = (
    "message_start",
    {
        "type": "message_start",
        "message": {"model": "m", "usage": {"input_tokens": 3, "output_tokens": 1}},
    },
)


async def sent_body(request: ModelRequest, options: dict[str, Any] | None = None) -> dict[str, Any]:
    return await body_sent("anthropic", request, OK_BODY, options)


# -- thinking replay and history ------------------------------------------------------------


@pytest.mark.anyio
async def test_thinking_is_replayed_verbatim_before_tool_use_and_dropped_elsewhere() -> None:
    fixture = load_fixture("anthropic-messages", "thinking_then_tool_use_stream")
    server = MockServer(lambda _r: fixture_response(fixture)[0])
    provider = make_provider("anthropic", server)
    first, _ = await run_stream(provider, hello("claude-haiku-4-5"))
    await provider.aclose()
    (call,) = first.tool_calls
    follow_up = ModelRequest(
        model="claude-haiku-4-5",
        messages=(UserMessage.of("hello"), first, ToolMessage.of(call.id, call.name, "1.2.3")),
    )
    body = await sent_body(follow_up)
    assistant = body["messages"][1]
    assert assistant["role"] == "assistant"
    state = [b for b in first.content if isinstance(b, ProviderStateBlock)]
    assert [b["type"] for b in assistant["content"]] == ["thinking", "tool_use"]
    assert assistant["content"][0] == state[0].data  # verbatim, signature included
    assert len(assistant["content"][0]["signature"]) == 524
    assert body["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": call.id, "content": "1.2.3", "is_error": False}
        ],
    }
    # the same history sent to OpenAI carries no Anthropic state and no reasoning
    openai_server = MockServer(
        lambda _r: httpx.Response(
            200,
            json={
                "model": "gpt-4o",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"content": "ok"}}],
            },
        )
    )
    openai = make_provider("openai", openai_server)
    await openai.complete(follow_up.model_copy(update={"model": "gpt-4o"}), signal=CancelSignal())
    await openai.aclose()
    sent = json.dumps(openai_server.bodies()[0])
    assert "signature" not in sent
    assert "thinking" not in sent


@pytest.mark.anyio
async def test_thinking_blocks_lead_and_consecutive_tool_results_merge() -> None:
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    history = (
        SystemMessage(text="sys"),
        UserMessage.of("go"),
        AssistantMessage(
            content=(
                TextBlock(text="let me look"),
                ProviderStateBlock(provider="anthropic", data=thinking),
                ReasoningBlock(text="hmm"),
                ToolCallBlock(id="t1", name="a", arguments={}),
                ToolCallBlock(id="t2", name="b", arguments={"x": 1}),
                ProviderStateBlock(provider="openai", data={"type": "whatever"}),
                ProviderStateBlock(
                    provider="anthropic", data={"type": "stop_details", "stop_details": {}}
                ),
            )
        ),
        ToolMessage.of("t1", "a", "one"),
        ToolMessage.of("t2", "b", "failed", status="error"),
        UserMessage.of("and now?"),
    )
    body = await sent_body(ModelRequest(model="claude-sonnet-4-5", messages=history))
    assert body["system"] == "sys"
    assert body["messages"][1]["content"] == [
        thinking,
        {"type": "text", "text": "let me look"},
        {"type": "tool_use", "id": "t1", "name": "a", "input": {}},
        {"type": "tool_use", "id": "t2", "name": "b", "input": {"x": 1}},
    ]
    assert body["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "one", "is_error": False},
            {"type": "tool_result", "tool_use_id": "t2", "content": "failed", "is_error": True},
            {"type": "text", "text": "and now?"},
        ],
    }
    assert len(body["messages"]) == 3


@pytest.mark.anyio
async def test_tool_choice_parallel_control_and_stop_sequences() -> None:
    tool = ToolSpec(name="f", description="d", parameters={"type": "object", "properties": {}})
    body = await sent_body(
        hello(tools=(tool,), tool_choice="f", parallel_tool_calls=False, stop=("X",), max_tokens=9)
    )
    assert body["tool_choice"] == {"type": "tool", "name": "f", "disable_parallel_tool_use": True}
    assert body["tools"] == [{"name": "f", "description": "d", "input_schema": tool.parameters}]
    assert body["stop_sequences"] == ["X"]
    assert body["max_tokens"] == 9
    required = await sent_body(hello(tools=(tool,), tool_choice="required"))
    assert required["tool_choice"] == {"type": "any"}
    # no max_tokens given: the model's output limit, capped at the registry default
    assert required["max_tokens"] == 8192


@pytest.mark.anyio
async def test_reasoning_effort_becomes_a_thinking_budget_where_the_model_has_it() -> None:
    body = await sent_body(hello(reasoning_effort="medium", max_tokens=20_000))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    clamped = await sent_body(hello(reasoning_effort="max", max_tokens=4096))
    assert clamped["thinking"] == {"type": "enabled", "budget_tokens": 4095}
    assert "thinking" not in await sent_body(hello(reasoning_effort="high", max_tokens=1000))
    assert "thinking" not in await sent_body(hello("claude-sonnet-5", reasoning_effort="high"))
    none = await sent_body(hello(reasoning_effort="none"))
    assert none["thinking"] == {"type": "disabled"}  # thinking off, said on the wire


@pytest.mark.anyio
async def test_structured_output_transports_and_refusals() -> None:
    fmt = ResponseFormat(name="Out", schema={"type": "object"})
    server = MockServer(lambda _r: httpx.Response(200, json=OK_BODY))
    provider = make_provider("anthropic", server)
    await provider.complete(
        hello(response_format=fmt, structured_output="native"), signal=CancelSignal()
    )
    await provider.complete(
        hello(response_format=fmt, structured_output="prompt"), signal=CancelSignal()
    )
    native, prompted = server.bodies()
    assert native["output_format"] == {"type": "json_schema", "schema": {"type": "object"}}
    assert "structured-outputs-2025-11-13" in server.requests[0].headers["anthropic-beta"]
    assert "output_format" not in prompted
    assert '{"type":"object"}' in prompted["system"]
    with pytest.raises(CapabilityError):
        await provider.complete(hello(structured_output="json_mode"), signal=CancelSignal())
    await provider.aclose()
    refusing = make_provider("anthropic", server, options={"structured_output": "none"})
    with pytest.raises(CapabilityError):
        await refusing.complete(
            hello(response_format=fmt, structured_output="native"), signal=CancelSignal()
        )
    with pytest.raises(CapabilityError):
        await run_stream(refusing, hello(response_format=fmt, structured_output="native"))
    await refusing.aclose()
    assert len(server.requests) == 2  # the refusals sent nothing


# -- errors, retries, cancellation ----------------------------------------------------------


@pytest.mark.anyio
async def test_overloaded_529_is_retried() -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    answers = [httpx.Response(529, json=overloaded), httpx.Response(200, json=OK_BODY)]
    server = MockServer(lambda _r: answers.pop(0))
    provider = make_provider("anthropic", server, options=FAST)
    response = await provider.complete(hello(), signal=CancelSignal())
    await provider.aclose()
    assert response.message.text == "hi"
    assert len(server.requests) == 2


@pytest.mark.anyio
async def test_overloaded_every_time_gives_up_with_overloaded_error() -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    server = MockServer(
        lambda _r: httpx.Response(529, headers={"request-id": "req_9"}, json=overloaded)
    )
    provider = make_provider("anthropic", server, options={**FAST, "max_retries": 2})
    with pytest.raises(OverloadedError) as caught:
        await provider.complete(hello(), signal=CancelSignal())
    await provider.aclose()
    assert len(server.requests) == 3
    assert caught.value.request_id == "req_9"
    assert caught.value.can_fallback


@pytest.mark.anyio
async def test_an_error_event_ends_the_stream_after_the_partial_output() -> None:
    body = events(
        START,
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hel"},
            },
        ),
        (
            "error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ),
    )
    server = MockServer(
        lambda _r: httpx.Response(200, headers={"request-id": "req_7"}, content=body)
    )
    provider = make_provider("anthropic", server)
    seen: list[str] = []

    async def consume() -> None:
        async for item in provider.stream(hello(), signal=CancelSignal()):
            seen.append(item.type)

    with pytest.raises(ProviderStreamError) as caught:
        await consume()
    await provider.aclose()
    assert "text_delta" in seen
    assert "finish" not in seen
    error = caught.value
    assert error.error == {"type": "overloaded_error", "message": "Overloaded"}
    assert error.vendor_type == "overloaded_error"
    assert error.retryable
    assert error.status == 529
    assert error.request_id == "req_7"


@pytest.mark.anyio
async def test_a_stream_without_message_stop_is_a_connection_error() -> None:
    server = MockServer(lambda _r: httpx.Response(200, content=events(START)))
    provider = make_provider("anthropic", server)
    with pytest.raises(ProviderConnectionError):
        await run_stream(provider, hello())
    await provider.aclose()


@pytest.mark.anyio
async def test_closing_or_cancelling_a_stream_closes_the_response() -> None:
    bodies: list[TrackingStream] = []

    def respond(_request: httpx.Request) -> httpx.Response:
        stream = TrackingStream([events(START), b"never"], hang_after=1)
        bodies.append(stream)
        return httpx.Response(200, stream=stream)

    provider = make_provider("anthropic", MockServer(respond))
    agen = provider.stream(hello(), signal=CancelSignal())
    assert (await agen.__anext__()).type == "usage"
    await agen.aclose()  # type: ignore[attr-defined]
    assert bodies[0].closed

    signal = CancelSignal()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def cancel_soon() -> None:
                await anyio.sleep(0.05)
                signal.cancel("stop")

            tg.start_soon(cancel_soon)
            with pytest.raises(AbortError):
                await run_stream(provider, hello(), signal)
    assert bodies[1].closed
    await provider.aclose()


@pytest.mark.anyio
async def test_empty_tool_ids_and_unknown_names_pass_through() -> None:
    body = dict(
        OK_BODY,
        content=[{"type": "tool_use", "id": "", "name": "not_offered", "input": {"a": 1}}],
        stop_reason="tool_use",
    )
    provider = make_provider("anthropic", MockServer(lambda _r: httpx.Response(200, json=body)))
    response = await provider.complete(hello(), signal=CancelSignal())
    await provider.aclose()
    assert [(c.id, c.name, c.arguments) for c in response.message.tool_calls] == [
        ("", "not_offered", {"a": 1})
    ]
    assert response.message.stop_reason == "tool_calls"


# -- factory and registry --------------------------------------------------------------------


def test_headers_options_and_registry() -> None:
    registry = ModelRegistry()
    server = MockServer(lambda _r: httpx.Response(200, json=OK_BODY))
    provider = make_provider("anthropic", server, models=registry)
    info = registry.lookup("claude-sonnet-4-5")
    assert info is not None
    assert info.context_window == 200_000
    assert info.source is not None
    assert "platform.claude.com" in info.source
    assert capability(provider, "claude-sonnet-4-5-20250929", "reasoning_effort")
    assert capability(provider, "claude-sonnet-4-5", "tool_choice") is True
    assert capability(provider, "claude-sonnet-4-5", "structured_output") is None  # not sourced
    options_model = provider_factory("anthropic").options_model
    with pytest.raises(ValueError, match="extra"):
        options_model.model_validate({"api_key": "no: credentials come from the composition"})
    with pytest.raises(ValueError, match="private"):
        options_model.model_validate({"base_url": "http://10.0.0.5"})


@pytest.mark.anyio
async def test_requests_carry_the_key_and_version_headers() -> None:
    server = MockServer(lambda _r: httpx.Response(200, json=OK_BODY))
    provider = make_provider("anthropic", server, options={"beta": ["b1"]}, api_key="sk-ant")
    await provider.complete(hello(), signal=CancelSignal())
    await provider.aclose()
    request = server.requests[0]
    assert request.url == "https://api.anthropic.com/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["anthropic-beta"] == "b1"


@pytest.mark.anyio
async def test_a_tool_result_image_is_an_image_block_in_the_tool_result() -> None:
    history = (
        UserMessage.of("draw"),
        AssistantMessage(content=(ToolCallBlock(id="t1", name="chart", arguments={}),)),
        ToolMessage(
            call_id="t1",
            name="chart",
            content=(TextBlock(text="a chart"), ImageBlock(media_type="image/png", data="iVBO")),
        ),
    )
    body = await sent_body(ModelRequest(model="claude-sonnet-4-5", messages=history))
    assert body["messages"][2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": [
                {"type": "text", "text": "a chart"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
                },
            ],
            "is_error": False,
        }
    ]
