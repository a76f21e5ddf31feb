"""The OpenAI Responses API through a real server: plain, streamed, continued, tool calls."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai.types.responses import FunctionToolParam, ResponseCompletedEvent
from openai.types.responses.mcp_tool_call_error_param import McpToolCallErrorParam
from openai.types.responses.response_input_item_param import McpCall
from server_support import KEY, RunningServer, scripted_config, tool_entries

import agentrig
from agentrig.ids import provider_id
from agentrig.llm import ToolCallBlock, ToolMessage
from agentrig.plugin import PROVIDERS

pytestmark = pytest.mark.integration

ENV = {"SERVER_KEY": KEY}
SETTINGS = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"assistant": {}}}


def client(server: RunningServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.base_url}/v1", api_key=KEY, max_retries=0)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def entries() -> agentrig.MemorySource:
    return tool_entries("inspect", add)


REQUEST_TOOL: FunctionToolParam = {
    "type": "function",
    "name": "f",
    "parameters": {"type": "object"},
    "strict": False,
}


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    script = [{"text": "Hello there!", "usage": {"prompt": 7, "completion": 3}}]
    with RunningServer(scripted_config(script), SETTINGS, environ=ENV) as srv:
        yield srv


def test_plain_response_has_the_text_and_usage(server: RunningServer) -> None:
    response = client(server).responses.create(model="assistant", input="Hi")
    assert response.output_text == "Hello there!"
    assert response.status == "completed"
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (7, 3)


def test_streamed_response_events_arrive_in_order(server: RunningServer) -> None:
    events = list(client(server).responses.create(model="assistant", input="Hi", stream=True))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert "".join(deltas) == "Hello there!"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    final = events[-1]
    assert isinstance(final, ResponseCompletedEvent)
    assert final.response.output_text == "Hello there!"


@pytest.mark.anyio
async def test_async_client_continues_with_previous_response_id(server: RunningServer) -> None:
    async with openai.AsyncOpenAI(
        base_url=f"{server.base_url}/v1", api_key=KEY, max_retries=0
    ) as aclient:
        first = await aclient.responses.create(model="assistant", input="My name is Ada.")
        second = await aclient.responses.create(
            model="assistant", input="What is my name?", previous_response_id=first.id
        )
        with pytest.raises(openai.NotFoundError):  # only the latest response continues
            await aclient.responses.create(
                model="assistant", input="again", previous_response_id=first.id
            )

    async def sent() -> list[str]:
        request = server.rt.catalog(PROVIDERS).require("local").requests[-1]
        return [getattr(m, "text", "") for m in request.messages]

    texts = server.call(sent)
    assert texts == ["My name is Ada.", "Hello there!", "What is my name?"]
    assert second.previous_response_id == first.id


def test_store_false_keeps_nothing_to_continue(server: RunningServer) -> None:
    first = client(server).responses.create(model="assistant", input="Hi", store=False)
    with pytest.raises(openai.NotFoundError):
        client(server).responses.create(
            model="assistant", input="again", previous_response_id=first.id
        )


def test_server_side_tool_calls_are_mcp_call_items_with_their_results() -> None:
    script = [
        {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
        {"text": "2 + 3 = 5"},
    ]
    config = scripted_config(
        script * 2, agents={"assistant": {"provider": "local", "model": "m", "tools": ["add"]}}
    )
    with RunningServer(config, SETTINGS, environ=ENV, memory=entries()) as srv:
        response = client(srv).responses.create(model="assistant", input="2+3?")
        events = list(client(srv).responses.create(model="assistant", input="2+3?", stream=True))
    calls = [item for item in response.output if item.type == "mcp_call"]
    assert [(c.name, c.arguments, c.output) for c in calls] == [("add", '{"a": 2, "b": 3}', "5")]
    assert response.output_text == "2 + 3 = 5"
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [i.type for i in done] == ["mcp_call", "message"]
    final = events[-1]
    assert isinstance(final, ResponseCompletedEvent)
    assert final.response.output_text == "2 + 3 = 5"


def test_a_stateless_client_sends_the_server_side_calls_back_as_history() -> None:
    """OpenAI's ``store: false`` pattern: the next request's input is the earlier input, the
    reply's whole ``output`` (``mcp_call`` items included) and the new question."""
    script = [
        {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
        {"text": "2 + 3 = 5"},
        {"text": "and 5 + 5 = 10"},
    ]
    config = scripted_config(
        script, agents={"assistant": {"provider": "local", "model": "m", "tools": ["add"]}}
    )
    with RunningServer(config, SETTINGS, environ=ENV, memory=entries()) as srv:
        first = client(srv).responses.create(model="assistant", input="2+3?", store=False)
        replayed: list[Any] = [{"role": "user", "content": "2+3?"}]
        replayed += [item.model_dump(exclude_none=True) for item in first.output]
        replayed.append({"role": "user", "content": "and 5+5?"})
        second = client(srv).responses.create(model="assistant", input=replayed, store=False)
        provider = srv.rt.catalog(PROVIDERS).require(provider_id("local"))
        sent = provider.requests[-1].messages
    assert second.output_text == "and 5 + 5 = 10"
    call = next(b for m in sent for b in m.content if isinstance(b, ToolCallBlock))
    assert (call.name, call.arguments) == ("add", {"a": 2, "b": 3})
    results = [m for m in sent if isinstance(m, ToolMessage)]
    assert [(r.call_id, r.name, r.text, r.status) for r in results] == [(call.id, "add", "5", "ok")]
    assert [m.role for m in sent][-4:] == ["assistant", "tool", "assistant", "user"]


def test_a_sent_back_mcp_call_needs_its_result(server: RunningServer) -> None:
    unfinished = {"type": "mcp_call", "id": "mcp_1", "server_label": "agentrig", "name": "add"}
    replayed: list[Any] = [{"role": "user", "content": "2+3?"}, unfinished]
    replayed.append({"role": "user", "content": "?"})
    with pytest.raises(openai.BadRequestError, match="needs its output or its error"):
        client(server).responses.create(model="assistant", input=replayed)


def test_a_sent_back_mcp_call_may_carry_its_error_as_the_sdk_types_it(
    server: RunningServer,
) -> None:
    """The SDK types an ``mcp_call``'s error as an object now (this server writes a string):
    either is the call's error result in the history; an unknown kind is a 400 naming it."""
    errors: list[McpToolCallErrorParam] = [
        {"type": "mcp_tool_execution_error", "content": "disk full"},
        {"type": "mcp_protocol_error", "code": -32602, "message": "bad params"},
        {"type": "http_error", "code": 502, "message": "upstream down"},
    ]
    for error in errors:
        failed: McpCall = {
            "type": "mcp_call",
            "id": "mcp_1",
            "server_label": "agentrig",
            "name": "add",
            "arguments": "{}",
            "error": error,
        }
        replayed: list[Any] = [{"role": "user", "content": "2+3?"}, failed]
        replayed.append({"role": "user", "content": "?"})
        client(server).responses.create(model="assistant", input=replayed)
    sent = server.rt.catalog(PROVIDERS).require(provider_id("local")).requests[-3:]
    results = [m for request in sent for m in request.messages if isinstance(m, ToolMessage)]
    assert [(r.text, r.status) for r in results] == [
        ("disk full", "error"),
        ("bad params", "error"),
        ("upstream down", "error"),
    ]
    odd: list[Any] = [replayed[0], {**failed, "error": {"type": "mcp_timeout", "message": "?"}}]
    with pytest.raises(openai.BadRequestError, match=r"input\[1\]\.error\.type"):
        client(server).responses.create(model="assistant", input=[*odd, replayed[-1]])


def test_request_defined_tools_are_refused(server: RunningServer) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        client(server).responses.create(
            model="assistant",
            input="Hi",
            tools=[REQUEST_TOOL],
        )
    assert "tools" in str(info.value)


def test_include_takes_encrypted_reasoning_and_names_anything_else(server: RunningServer) -> None:
    stateless = client(server).responses.create(
        model="assistant", input="Hi", store=False, include=["reasoning.encrypted_content"]
    )
    assert stateless.output_text == "Hello there!"
    with pytest.raises(openai.BadRequestError) as info:
        client(server).responses.create(
            model="assistant", input="Hi", include=["message.output_text.logprobs"]
        )
    assert "include[0]" in str(info.value)
    assert "message.output_text.logprobs" in str(info.value)
