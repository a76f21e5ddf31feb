"""The loopback Responses server speaks OpenAI's API as the official ``openai`` SDK reads it.

The provider tests trust :mod:`_responses_server`; these checks keep it honest: the SDK
parses its JSON answers, its server-sent events (cut into 7-byte writes) and its WebSocket
mode (``client.responses.connect()``) into the SDK's own typed objects.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest
from _responses_server import KEY, ResponsesServer
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseReasoningItem,
)

pytestmark = pytest.mark.integration

TOOLS: list[Any] = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        "strict": False,
    }
]


@pytest.fixture(scope="module")
def server() -> Iterator[ResponsesServer]:
    with ResponsesServer() as running:
        yield running


def _client(server: ResponsesServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)


def test_the_sdk_reads_a_plain_answer(server: ResponsesServer) -> None:
    response = _client(server).responses.create(model="gpt-5-mini", input="Hi")
    assert response.output_text == "hello"
    assert response.status == "completed"
    assert response.usage is not None
    assert response.usage.input_tokens_details.cached_tokens == 4


def test_the_sdk_assembles_the_streamed_events(server: ResponsesServer) -> None:
    with _client(server).responses.stream(
        model="gpt-5-mini",
        input="weather?",
        tools=TOOLS,
        store=False,
        include=["reasoning.encrypted_content"],
    ) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert "response.function_call_arguments.delta" in kinds
    assert "response.reasoning_summary_text.delta" in kinds
    first, second = final.output
    assert isinstance(first, ResponseReasoningItem)
    assert first.encrypted_content is not None
    assert isinstance(second, ResponseFunctionToolCall)
    assert second.name == "get_weather"
    assert second.arguments == '{"city":"Paris"}'


def test_the_sdk_continues_with_previous_response_id(server: ResponsesServer) -> None:
    client = _client(server)
    first = client.responses.create(model="gpt-5-mini", input="weather?", tools=TOOLS)
    call = first.output[-1]
    assert isinstance(call, ResponseFunctionToolCall)
    second = client.responses.create(
        model="gpt-5-mini",
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}],
        tools=TOOLS,
    )
    assert second.output_text == "It is sunny."


def test_the_sdk_speaks_the_websocket_mode(server: ResponsesServer) -> None:
    with _client(server).responses.connect() as connection:
        connection.response.create(model="gpt-5-mini", input="Hi", store=False)
        events = []
        for event in connection:
            events.append(event)
            if event.type in ("response.completed", "error"):
                break
    final = events[-1]
    assert isinstance(final, ResponseCompletedEvent)
    assert final.response.output_text == "hello"
    assert [e.sequence_number for e in events] == list(range(len(events)))
