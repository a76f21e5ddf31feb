"""OpenAI chat completions through a real server, with the official ``openai`` SDK."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from anthropic.types import TextBlock
from openai.types.chat import ChatCompletionToolParam
from server_support import KEY, RunningServer, scripted_config

pytestmark = pytest.mark.integration

SETTINGS = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"assistant": {}}}
ENV = {"SERVER_KEY": KEY}


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with RunningServer(scripted_config(), SETTINGS, environ=ENV) as srv:
        yield srv


def client(server: RunningServer, key: str = KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.base_url}/v1", api_key=key, max_retries=0)


def test_plain_completion_answers_with_the_agents_text_and_usage(server: RunningServer) -> None:
    answer = client(server).chat.completions.create(
        model="assistant", messages=[{"role": "user", "content": "Hi"}]
    )
    assert answer.choices[0].message.content == "Hello there!"
    assert answer.choices[0].finish_reason == "stop"
    assert answer.model == "assistant"
    assert answer.usage is not None
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (7, 3)


def test_streamed_completion_arrives_in_chunks_with_usage_last(server: RunningServer) -> None:
    stream = client(server).chat.completions.create(
        model="assistant",
        messages=[{"role": "user", "content": "Hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello there!"
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) >= 2
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens == 10


@pytest.mark.anyio
async def test_async_client_streams_too(server: RunningServer) -> None:
    async with openai.AsyncOpenAI(
        base_url=f"{server.base_url}/v1", api_key=KEY, max_retries=0
    ) as aclient:
        stream = await aclient.chat.completions.create(
            model="assistant", messages=[{"role": "user", "content": "Hi"}], stream=True
        )
        parts = [c.choices[0].delta.content or "" async for c in stream if c.choices]
        plain = await aclient.chat.completions.create(
            model="assistant", messages=[{"role": "user", "content": "Hi"}]
        )
    assert "".join(parts) == "Hello there!"
    assert plain.choices[0].message.content == "Hello there!"


def test_models_lists_the_exposed_agents(server: RunningServer) -> None:
    assert [m.id for m in client(server).models.list()] == ["assistant"]


def test_unknown_model_is_the_sdks_not_found_error_with_a_suggestion(server: RunningServer) -> None:
    with pytest.raises(openai.NotFoundError) as info:
        client(server).chat.completions.create(
            model="asistant", messages=[{"role": "user", "content": "Hi"}]
        )
    assert "did you mean 'assistant'" in str(info.value)


def test_wrong_key_is_the_sdks_authentication_error(server: RunningServer) -> None:
    with pytest.raises(openai.AuthenticationError):
        client(server, key="sk-wrong").chat.completions.create(
            model="assistant", messages=[{"role": "user", "content": "Hi"}]
        )


def test_request_defined_tools_are_refused_with_a_clear_400(server: RunningServer) -> None:
    tool: ChatCompletionToolParam = {
        "type": "function",
        "function": {"name": "f", "parameters": {"type": "object"}},
    }
    with pytest.raises(openai.BadRequestError) as info:
        client(server).chat.completions.create(
            model="assistant", messages=[{"role": "user", "content": "Hi"}], tools=[tool]
        )
    assert "tools" in str(info.value)
    assert "server" in str(info.value)


def test_unsupported_content_parts_are_refused_not_dropped(server: RunningServer) -> None:
    # an audio part: what the server refuses (the SDK's types allow it only in some messages)
    audio: Any = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
    with pytest.raises(openai.BadRequestError) as info:
        client(server).chat.completions.create(
            model="assistant",
            messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}, audio]}],
        )
    assert "messages[0].content[1].type" in str(info.value)
    assert "input_audio" in str(info.value)


def test_unsupported_generation_parameters_are_refused_by_name(server: RunningServer) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        client(server).chat.completions.create(
            model="assistant", messages=[{"role": "user", "content": "Hi"}], top_p=0.5
        )
    assert "top_p" in str(info.value)


def test_validation_finishes_before_a_stream_starts(server: RunningServer) -> None:
    with pytest.raises(openai.BadRequestError):
        client(server).chat.completions.create(
            model="assistant",
            messages=[{"role": "user", "content": "Hi"}],
            temperature=7,
            stream=True,
        )


def test_health_says_only_liveness_and_ready_needs_a_key(server: RunningServer) -> None:
    health = httpx.get(f"{server.base_url}/health")
    assert health.status_code == 200
    assert health.json() == {"status": "ok"}
    assert httpx.get(f"{server.base_url}/ready").status_code == 401
    ready = httpx.get(f"{server.base_url}/ready", headers={"authorization": f"Bearer {KEY}"})
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready"


def test_anthropic_sdk_messages_plain_and_streamed(server: RunningServer) -> None:
    ac = anthropic.Anthropic(base_url=server.base_url, api_key=KEY, max_retries=0)
    message = ac.messages.create(
        model="assistant", max_tokens=100, messages=[{"role": "user", "content": "Hi"}]
    )
    block = message.content[0]
    assert isinstance(block, TextBlock)
    assert block.text == "Hello there!"
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (7, 3)
    with ac.messages.stream(
        model="assistant", max_tokens=100, messages=[{"role": "user", "content": "Hi"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Hello there!"
    assert final.usage.output_tokens == 3
    assert final.stop_reason == "end_turn"
