"""Refusals and content-filter stops classified (opt-in ``classify_model_responses``),
through the installed OpenAI and Anthropic providers against loopback servers answering as
the vendors' references describe: OpenAI's ``delta.refusal`` and ``finish_reason:
"content_filter"``, Anthropic's ``stop_reason: "refusal"``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from agentrig.agent import RunResult
from agentrig.kernel import open_runtime
from agentrig.testing import MockProviderServer, MockReply, MockRequest

pytestmark = pytest.mark.anyio

ENV = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}
REFUSAL = "I'm sorry, I can't help with that."


def _openai_chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": "gpt-test", "choices": [choice]}  # fmt: skip


def openai_answer(request: MockRequest) -> MockReply:
    """The prompt picks the reply: a refusal, a filtered stop, or an ordinary answer."""
    prompt = str(request.body["messages"][-1]["content"])
    if "refuse" in prompt:
        events: list[Any] = [
            _openai_chunk({"role": "assistant", "content": None, "refusal": ""}, None),
            _openai_chunk({"refusal": REFUSAL}, None),
            _openai_chunk({}, "stop"),
        ]
    elif "filter" in prompt:
        events = [
            _openai_chunk({"role": "assistant", "content": "Partial"}, None),
            _openai_chunk({}, "content_filter"),
        ]
    else:
        events = [_openai_chunk({"role": "assistant", "content": '{"city": "Paris"}'}, None),
                  _openai_chunk({}, "stop")]  # fmt: skip
    return MockReply(events=[*events, "[DONE]"])


def anthropic_answer(request: MockRequest) -> MockReply:
    """A streamed Messages reply that the model ends with ``stop_reason: "refusal"``."""
    message: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 0},
    }
    text_delta = {"type": "text_delta", "text": "I can't"}
    ended = {"stop_reason": "refusal", "stop_sequence": None}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": text_delta},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": ended, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]
    return MockReply(events=events)


def _config(kind: str, url: str, classify: bool | None) -> dict[str, Any]:
    base = f"{url}/v1" if kind == "openai" else url
    options = {"base_url": base, "allow_private_base_url": True, "max_retries": 0}
    agent: dict[str, Any] = {"provider": "main", "model": f"{kind}-model"}
    if classify is not None:
        agent["classify_model_responses"] = classify
    return {
        "providers": {"main": {"kind": kind, "options": options}},
        "agents": {"assistant": agent},
    }


async def test_an_openai_refusal_is_a_typed_failure_when_classified() -> None:
    with MockProviderServer(openai_answer) as server:
        async with open_runtime(_config("openai", server.url, True), environ=ENV) as rt:
            agent = rt.agent("assistant")
            result = await agent.run("please refuse")
            failure = result.response_failure
            assert failure is not None
            assert failure.kind == "refusal"
            assert failure.text == REFUSAL
            assert failure.provider_stop_reason == "stop"
            assert failure.model == "gpt-test"
            assert result.invocation.outcome == "model_response_failure"
            assert result.invocation.response_failure == failure
            assert result.value == REFUSAL
            ends = [e.data for e in agent.session.events if e.type == "turn/end"]
            assert [e.reason for e in ends] == ["model_response_failure"]

            # an ordinary answer of the same agent stays an ordinary answer
            plain = await agent.run("hello")
            assert plain.response_failure is None
            assert plain.invocation.outcome == "completed"


async def _run_once(
    answer: Callable[[MockRequest], MockReply], kind: str, prompt: str, classify: bool | None
) -> tuple[RunResult[Any], list[MockRequest]]:
    """One run of a fresh agent on a fresh server; its result and the requests sent."""
    with MockProviderServer(answer) as server:
        async with open_runtime(_config(kind, server.url, classify), environ=ENV) as rt:
            result = await rt.agent("assistant").run(prompt)
        return result, list(server.requests)


async def test_a_content_filter_stop_is_classified_even_with_partial_text() -> None:
    result, _ = await _run_once(openai_answer, "openai", "trip the filter", True)
    failure = result.response_failure
    assert failure is not None
    assert failure.kind == failure.provider_stop_reason == "content_filter"
    assert failure.text == "Partial"
    assert result.invocation.outcome == "model_response_failure"


@pytest.mark.parametrize("classify", [None, False])
async def test_off_by_default_a_refusal_is_an_ordinary_answer(classify: bool | None) -> None:
    result, _ = await _run_once(openai_answer, "openai", "please refuse", classify)
    assert result.value == REFUSAL
    assert result.response_failure is None
    assert result.invocation.outcome == "completed"


async def test_an_anthropic_refusal_is_a_typed_failure_when_classified() -> None:
    result, requests = await _run_once(anthropic_answer, "anthropic", "anything", True)
    failure = result.response_failure
    assert failure is not None
    assert (failure.kind, failure.provider_stop_reason) == ("refusal", "refusal")
    assert failure.text == "I can't"
    assert failure.model == "claude-test"
    assert result.invocation.outcome == "model_response_failure"
    assert requests[0].path.endswith("/v1/messages")


class City(BaseModel):
    city: str


async def test_a_structured_run_is_not_retried_on_a_classified_refusal() -> None:
    with MockProviderServer(openai_answer) as server:
        async with open_runtime(_config("openai", server.url, True), environ=ENV) as rt:
            agent = rt.agent("assistant")
            refused = await agent.run("please refuse", output_type=City)
            assert refused.response_failure is not None
            assert refused.value == REFUSAL  # the reply's text, not a validated model
            assert refused.invocation.structured_attempts == 0
            assert len(server.requests) == 1  # no validation retry was asked for
            answered = await agent.run("where", output_type=City)
            assert answered.value == City(city="Paris")
