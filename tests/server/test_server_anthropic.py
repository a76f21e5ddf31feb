"""Anthropic messages through a real server with the official ``anthropic`` SDK: sync and
async, streamed and not, history mapping, and errors raising the SDK's own classes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from anthropic.types import RawMessageDeltaEvent, TextBlock
from server_support import KEY, RunningServer, scripted_config

from agentrig.plugin import PROVIDERS

pytestmark = pytest.mark.integration

SETTINGS = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"assistant": {}}}
HI: list[Any] = [{"role": "user", "content": "Hi"}]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    config = scripted_config(
        agents={"assistant": {"provider": "local", "model": "m", "system_prompt": "Be brief."}}
    )
    with RunningServer(config, SETTINGS, environ={"SERVER_KEY": KEY}) as srv:
        yield srv


def client(server: RunningServer, key: str = KEY) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base_url, api_key=key, max_retries=0)


@pytest.mark.anyio
async def test_async_client_plain_and_streamed(server: RunningServer) -> None:
    async with anthropic.AsyncAnthropic(
        base_url=server.base_url, api_key=KEY, max_retries=0
    ) as aclient:
        message = await aclient.messages.create(model="assistant", max_tokens=64, messages=HI)
        events = []
        stream = await aclient.messages.create(
            model="assistant", max_tokens=64, messages=HI, stream=True
        )
        async for event in stream:
            events.append(event)
    block = message.content[0]
    assert isinstance(block, TextBlock)
    assert block.text == "Hello there!"
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert "content_block_delta" in kinds
    delta = events[-2]
    assert isinstance(delta, RawMessageDeltaEvent)
    assert delta.usage.output_tokens == 3


def test_history_maps_system_tool_use_and_tool_results(server: RunningServer) -> None:
    client(server).messages.create(
        model="assistant",
        max_tokens=64,
        system="Answer in French.",
        messages=[
            {"role": "user", "content": "What is 2+3?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me add."},
                    {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "5"},
                    {"type": "text", "text": "Thanks, and now?"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
                    },
                ],
            },
        ],
    )

    async def sent() -> list[Any]:
        return list(server.rt.catalog(PROVIDERS).require("local").requests[-1].messages)

    messages = server.call(sent)
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert messages[0].text == "Be brief.\n\nAnswer in French."
    assert messages[2].tool_calls[0].arguments == {"a": 2, "b": 3}
    assert (messages[3].call_id, messages[3].name, messages[3].text) == ("toolu_1", "add", "5")
    assert [b.type for b in messages[4].content] == ["text", "image"]


def test_errors_are_the_sdks_own_classes(server: RunningServer) -> None:
    with pytest.raises(anthropic.NotFoundError) as missing:
        client(server).messages.create(model="asistant", max_tokens=64, messages=HI)
    assert "did you mean 'assistant'" in str(missing.value)
    with pytest.raises(anthropic.AuthenticationError):
        client(server, key="wrong").messages.create(model="assistant", max_tokens=64, messages=HI)
    with pytest.raises(anthropic.BadRequestError) as tools:
        client(server).messages.create(
            model="assistant",
            max_tokens=64,
            messages=HI,
            tools=[{"name": "f", "input_schema": {"type": "object"}}],
        )
    assert "tools" in str(tools.value)
    with pytest.raises(anthropic.BadRequestError) as thinking:
        client(server).messages.create(
            model="assistant",
            max_tokens=64,
            messages=[
                {"role": "user", "content": "Hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "thinking", "thinking": "hm", "signature": "s"}],
                },
                {"role": "user", "content": "and?"},
            ],
        )
    assert "messages[1].content[0].type" in str(thinking.value)


def test_max_tokens_is_lowered_to_the_servers_cap() -> None:
    settings = {**SETTINGS, "agents": {"assistant": {"max_output_tokens": 100}}}
    with RunningServer(scripted_config(), settings, environ={"SERVER_KEY": KEY}) as srv:
        client(srv).messages.create(model="assistant", max_tokens=4000, messages=HI)
        client(srv).messages.create(model="assistant", max_tokens=50, messages=HI)

        async def asked() -> list[int | None]:
            return [r.max_tokens for r in srv.rt.catalog(PROVIDERS).require("local").requests]

        assert srv.call(asked) == [100, 50]
