"""Replay of every recorded Anthropic Messages exchange through the installed plugin.

Each fixture's request is rebuilt as a :class:`ModelRequest`; the body the adapter sends is
compared with the recorded one (documented differences below) and what it yields (through
``complete()`` or ``stream()`` + ``StreamAssembler``) with the fixture's ``expect`` block.
"""

from __future__ import annotations

from typing import Any

import pytest
from _provider_fixtures import (
    MockServer,
    compare_body,
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
    ContentBlock,
    InvalidRequestError,
    Message,
    ModelRequest,
    NotFoundError,
    ProviderError,
    ProviderStateBlock,
    ReasoningBlock,
    StopReason,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    ToolSpec,
    ToolStatus,
    UserMessage,
)

API = "anthropic-messages"
NAMES = fixture_names(API)
STOP_DETAILS = "stop_details"  # agentrig_anthropic.STOP_DETAILS

STOP: dict[str, StopReason] = {
    "end_turn": "end",
    "max_tokens": "length",
    "stop_sequence": "stop_sequence",
    "tool_use": "tool_calls",
    "refusal": "refusal",
    "pause_turn": "other",
}

_STRING_CONTENT = (
    "the recording sent a user message as a bare string; the adapter always sends a list of "
    "content blocks (same meaning); the texts are compared separately"
)
DIFFERENCES: dict[str, dict[str, str]] = {
    "error_400_invalid_request": {
        "messages": "the recording is deliberately malformed (a bare string as a message); "
        "the vocabulary cannot express it",
    },
    "stream_cache_read_max_tokens": {
        "system": "the recording sent the system prompt as a block list with cache_control; "
        "the vocabulary's SystemMessage is plain text (compared separately)",
        "messages": _STRING_CONTENT,
    },
    "tool_use_stream_input_json_delta": {"messages": _STRING_CONTENT},
}

_MAPPED = {
    "model",
    "messages",
    "system",
    "stream",
    "tools",
    "tool_choice",
    "max_tokens",
    "temperature",
    "stop_sequences",
}


def _user(content: Any, names: dict[str, str]) -> list[Message]:
    if isinstance(content, str):
        return [UserMessage.of(content)]
    out: list[Message] = []
    texts: list[ContentBlock] = []
    for block in content:
        if block["type"] == "tool_result":
            call_id = block["tool_use_id"]
            status: ToolStatus = "error" if block.get("is_error") else "ok"
            out.append(
                ToolMessage.of(call_id, names.get(call_id, "tool"), block["content"], status)
            )
        elif block["type"] == "text":
            texts.append(TextBlock(text=block["text"]))
    if texts:
        out.append(UserMessage(content=tuple(texts)))
    return out


def _assistant(content: Any, names: dict[str, str]) -> AssistantMessage:
    if isinstance(content, str):
        return AssistantMessage(content=(TextBlock(text=content),))
    blocks: list[ContentBlock] = []
    for block in content:
        if block["type"] == "text":
            blocks.append(TextBlock(text=block["text"]))
        elif block["type"] == "tool_use":
            names[block["id"]] = block["name"]
            blocks.append(
                ToolCallBlock(id=block["id"], name=block["name"], arguments=block["input"])
            )
        else:
            blocks.append(ProviderStateBlock(provider="anthropic", data=block))
    return AssistantMessage(content=tuple(blocks))


def request_from(wire: dict[str, Any], efforts: tuple[str, ...] | None = ()) -> ModelRequest:
    """The agentrig request equivalent to a recorded Messages body.

    ``efforts`` are the reasoning levels the provider declares for the model: a recorded
    1024-token thinking budget becomes ``reasoning_effort="minimal"`` where the model
    declares it, and stays a provider-specific ``options["thinking"]`` otherwise.
    """
    messages: list[Message] = []
    system = wire.get("system")
    if isinstance(system, str):
        messages.append(SystemMessage(text=system))
    elif isinstance(system, list):
        messages.append(SystemMessage(text="\n\n".join(b["text"] for b in system)))
    names: dict[str, str] = {}
    for item in wire["messages"]:
        if not isinstance(item, dict):
            continue  # the deliberately malformed recording
        if item["role"] == "user":
            messages.extend(_user(item["content"], names))
        else:
            messages.append(_assistant(item["content"], names))
    fields: dict[str, Any] = {"model": wire["model"], "messages": tuple(messages)}
    if "tools" in wire:
        fields["tools"] = tuple(
            ToolSpec(
                name=t["name"], description=t.get("description", ""), parameters=t["input_schema"]
            )
            for t in wire["tools"]
        )
    choice = wire.get("tool_choice")
    if choice is not None:
        fields["tool_choice"] = {"auto": "auto", "any": "required", "none": "none"}.get(
            choice["type"], choice.get("name")
        )
        if choice.get("disable_parallel_tool_use"):
            fields["parallel_tool_calls"] = False
    for key in ("max_tokens", "temperature"):
        if key in wire:
            fields[key] = wire[key]
    if "stop_sequences" in wire:
        fields["stop"] = tuple(wire["stop_sequences"])
    extras = {k: v for k, v in wire.items() if k not in _MAPPED}
    if extras.get("thinking") == {"type": "enabled", "budget_tokens": 1024} and "minimal" in (
        efforts or ()
    ):
        # the neutral effort vocabulary: "minimal" is a 1024-token budget by default
        fields["reasoning_effort"] = "minimal"
        del extras["thinking"]
    fields["options"] = extras
    return ModelRequest(**fields)


def block_types(message: AssistantMessage) -> list[str]:
    out: list[str] = []
    for block in message.content:
        if isinstance(block, ProviderStateBlock):
            if block.data["type"] != STOP_DETAILS:
                out.append(block.data["type"])
        elif isinstance(block, TextBlock):
            out.append("text")
        elif isinstance(block, ToolCallBlock):
            out.append("tool_use")
    return out


def check_message(message: AssistantMessage, expect: dict[str, Any]) -> None:
    assert message.text == (expect["text"] or "")
    assert message.provider_stop_reason == expect["stop_reason"]
    assert message.stop_reason == STOP[expect["stop_reason"]]
    calls = [(c.id, c.name, c.arguments) for c in message.tool_calls]
    assert calls == [(c["id"], c["name"], c["arguments"]) for c in expect["tool_calls"]]
    assert block_types(message) == expect["block_types"]
    usage = expect["usage"]
    assert message.usage is not None
    for key, value in usage.items():
        assert getattr(message.usage, key) == value, key
    states = [b for b in message.content if isinstance(b, ProviderStateBlock)]
    assert all(b.provider == "anthropic" for b in states)
    thinking = [b.data for b in states if b.data["type"] == "thinking"]
    if "thinking" in expect:
        assert [(t["thinking"], len(t["signature"])) for t in thinking] == [
            (t["text"], t["signature_len"]) for t in expect["thinking"]
        ]
        # the thinking text is also given for display, never as answer text
        reasoning = [b.text for b in message.content if isinstance(b, ReasoningBlock)]
        assert reasoning == [t["text"] for t in expect["thinking"]]
    redacted = [b for b in states if b.data["type"] == "redacted_thinking"]
    assert len(redacted) == expect.get("redacted_thinking_blocks", 0)
    assert all(b.text is None and isinstance(b.data["data"], str) for b in redacted)
    details = [b for b in states if b.data["type"] == STOP_DETAILS]
    if "stop_details" in expect:
        assert [d.data["stop_details"] for d in details] == [expect["stop_details"]]
        assert details[0].text == expect["stop_details"]["explanation"]
    else:
        assert details == []
    # expect["stop_sequence"] (the matched sequence) has no field in AssistantMessage.


def check_request(name: str, fixture: dict[str, Any], server: MockServer, stream: bool) -> None:
    recorded = fixture["request"]
    assert len(server.requests) == 1
    sent_request = server.requests[0]
    assert sent_request.method == "POST"
    assert sent_request.url.host == recorded["host"]
    assert sent_request.url.path == recorded["path"]
    assert sent_request.headers["x-api-key"] == "test-key"
    assert sent_request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent_request.headers
    sent = server.bodies()[0]
    wire = recorded["json"]
    differences = DIFFERENCES.get(name, {})
    if "system" in differences:
        assert sent["system"] == "\n\n".join(b["text"] for b in wire["system"])
    if differences.get("messages") == _STRING_CONTENT:
        for sent_message, wire_message in zip(sent["messages"], wire["messages"], strict=True):
            if isinstance(wire_message["content"], str):
                assert sent_message["content"] == [
                    {"type": "text", "text": wire_message["content"]}
                ]
            else:
                assert sent_message["content"] == wire_message["content"]
    assert sent["stream"] is stream
    compare_body(sent, wire, differences)


def test_every_fixture_is_present() -> None:
    assert len([n for n in NAMES if not n.startswith("__")]) == 19, NAMES


@pytest.mark.anyio
@pytest.mark.parametrize("name", NAMES)
async def test_replay(name: str) -> None:
    fixture = load_fixture(API, name)
    expect = fixture["expect"]
    server = MockServer(lambda _request: fixture_response(fixture)[0])
    provider = make_provider("anthropic", server, options={"max_retries": 0})
    wire = fixture["request"]["json"]
    request = request_from(wire, provider.capabilities(wire["model"]).reasoning_effort)
    streaming = "sse_events" in fixture["response"]
    try:
        if "error" in expect:
            await _check_http_error(provider, request, expect["error"], streaming)
        elif streaming:
            message, _ = await run_stream(provider, request)
            check_message(message, expect)
        else:
            response = await provider.complete(request, signal=CancelSignal())
            check_message(response.message, expect)
            assert response.served_model == fixture["response"]["body"]["model"]
        check_request(name, fixture, server, streaming)
    finally:
        await provider.aclose()


async def _check_http_error(
    provider: Any, request: ModelRequest, want: dict[str, Any], streaming: bool
) -> None:

    async def call() -> None:
        if streaming:
            await run_stream(provider, request)
        else:
            await provider.complete(request, signal=CancelSignal())

    with pytest.raises(ProviderError) as caught:
        await call()
    error = caught.value
    assert error.status == want["http_status"]
    assert error.vendor_type == want["vendor_type"]
    assert error.vendor_code == want["vendor_code"]
    assert want["message"] in str(error)
    assert error.retryable is want["retryable"]
    assert error.provider == "anthropic"
    if "x_should_retry_header" in want:
        assert error.should_retry is (want["x_should_retry_header"] == "true")
    if "request_id" in want:
        assert error.request_id == want["request_id"]
    expected_class = {400: InvalidRequestError, 401: AuthenticationError, 404: NotFoundError}
    assert isinstance(error, expected_class[want["http_status"]])


@pytest.mark.anyio
@pytest.mark.parametrize(
    "name", [n for n in NAMES if n.startswith("error_")] or ["__fixtures_missing__"]
)
async def test_http_errors_in_the_other_mode(name: str) -> None:
    """An HTTP error maps the same whether the call was streaming or not."""
    fixture = load_fixture(API, name)
    server = MockServer(lambda _request: fixture_response(fixture)[0])
    provider = make_provider("anthropic", server, options={"max_retries": 0})
    try:
        await _check_http_error(
            provider, request_from(fixture["request"]["json"]), fixture["expect"]["error"], True
        )
        assert server.bodies()[0]["stream"] is True
    finally:
        await provider.aclose()
