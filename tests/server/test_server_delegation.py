"""Served agents that delegate or hand off: a real server on loopback, the official SDKs.

The served agent ``lead`` delegates to ``reviewer`` (a sub-agent the client never names); the
answer is the lead's, and the usage the API reports is the lead's calls plus the reviewer's.
A sub-agent's question reaches the served run it works for.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from anthropic.types import RawMessageDeltaEvent, TextBlock
from server_support import KEY, RunningServer, tool_entries

pytestmark = pytest.mark.integration

ENV = {"SERVER_KEY": KEY}
HI: list[Any] = [{"role": "user", "content": "Ship the parser fix"}]
DELEGATE: dict[str, Any] = {
    "tool_calls": [{"name": "delegate_reviewer", "arguments": {"prompt": "Review x = 1/0"}}],
    "usage": {"prompt": 10, "completion": 4},
}
FIXED: dict[str, Any] = {
    "text": "Fixed what the reviewer found.",
    "usage": {"prompt": 20, "completion": 5},
}
LEAD_ROUNDS = [DELEGATE, FIXED]
REVIEW: dict[str, Any] = {"text": "- division by zero", "usage": {"prompt": 6, "completion": 3}}
#: the lead's two calls and the reviewer's one
PROMPT_TOKENS, COMPLETION_TOKENS = 10 + 20 + 6, 4 + 5 + 3


def bump(counter: str) -> str:
    """Increment a counter (changes state, so it asks in the default mode)."""
    return f"{counter} bumped"


def config(reviewer_rounds: list[dict[str, Any]]) -> dict[str, Any]:
    def scripted(rounds: list[dict[str, Any]]) -> dict[str, Any]:
        return {"kind": "scripted", "options": {"rounds": rounds}}

    return {
        "providers": {"lead_llm": scripted(LEAD_ROUNDS), "review_llm": scripted(reviewer_rounds)},
        "agents": {
            "lead": {"provider": "lead_llm", "model": "big", "subagents": ["reviewer"]},
            "reviewer": {
                "provider": "review_llm",
                "model": "small",
                "description": "Reviews a change.",
                "tools": ["bump"],
            },
        },
    }


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    settings = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"lead": {}}}
    with RunningServer(
        config([REVIEW]), settings, environ=ENV, memory=tool_entries("modify", bump)
    ) as srv:
        yield srv


def openai_client(server: RunningServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.base_url}/v1", api_key=KEY, max_retries=0)


def test_chat_completion_of_a_delegating_agent_reports_the_childs_usage_too(
    server: RunningServer,
) -> None:
    answer = openai_client(server).chat.completions.create(model="lead", messages=HI)  # type: ignore[arg-type]
    assert answer.choices[0].message.content == "Fixed what the reviewer found."
    assert answer.usage is not None
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (
        PROMPT_TOKENS,
        COMPLETION_TOKENS,
    )
    assert [m.id for m in openai_client(server).models.list()] == ["lead"]  # not the child


def test_streamed_chat_completion_reports_the_rolled_up_usage_last(server: RunningServer) -> None:
    stream = openai_client(server).chat.completions.create(
        model="lead",
        messages=HI,
        stream=True,
        stream_options={"include_usage": True},  # type: ignore[arg-type]
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Fixed what the reviewer found."
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens == PROMPT_TOKENS + COMPLETION_TOKENS


def test_responses_of_a_delegating_agent_report_the_childs_usage_too(
    server: RunningServer,
) -> None:
    response = openai_client(server).responses.create(model="lead", input="Ship the parser fix")
    assert response.output_text == "Fixed what the reviewer found."
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (
        PROMPT_TOKENS,
        COMPLETION_TOKENS,
    )
    streamed = list(
        openai_client(server).responses.create(model="lead", input="Again", stream=True)
    )
    final = streamed[-1]
    assert final.type == "response.completed"
    assert final.response.usage is not None
    assert final.response.usage.total_tokens == PROMPT_TOKENS + COMPLETION_TOKENS


def test_anthropic_messages_of_a_delegating_agent_report_the_childs_usage_too(
    server: RunningServer,
) -> None:
    client = anthropic.Anthropic(base_url=server.base_url, api_key=KEY, max_retries=0)
    message = client.messages.create(model="lead", max_tokens=256, messages=HI)
    block = message.content[0]
    assert isinstance(block, TextBlock)
    assert block.text == "Fixed what the reviewer found."
    assert (message.usage.input_tokens, message.usage.output_tokens) == (
        PROMPT_TOKENS,
        COMPLETION_TOKENS,
    )
    events = list(client.messages.create(model="lead", max_tokens=256, messages=HI, stream=True))
    delta = events[-2]
    assert isinstance(delta, RawMessageDeltaEvent)
    assert delta.usage.output_tokens == COMPLETION_TOKENS


def test_a_sub_agents_question_reaches_the_served_run_it_works_for() -> None:
    asks: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "bump", "arguments": {"counter": "visits"}}]},
        REVIEW,
    ]
    settings = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"lead": {"approvals": "refuse"}}}
    with (
        RunningServer(
            config(asks), settings, environ=ENV, memory=tool_entries("modify", bump)
        ) as srv,
        pytest.raises(openai.PermissionDeniedError) as caught,
    ):
        openai_client(srv).chat.completions.create(model="lead", messages=HI)  # type: ignore[arg-type]
    assert caught.value.code == "approval_required"
    assert "'bump'" in str(caught.value)
    assert 'server.agents.lead.approvals = "refuse"' in str(caught.value)


TRANSFER: dict[str, Any] = {
    "tool_calls": [{"name": "transfer_to_billing", "arguments": {}}],
    "usage": {"prompt": 8, "completion": 2},
}
REFUND: dict[str, Any] = {"text": "Refunded.", "usage": {"prompt": 12, "completion": 3}}


@pytest.fixture(scope="module")
def handoff_server() -> Iterator[RunningServer]:
    def scripted(rounds: list[dict[str, Any]]) -> dict[str, Any]:
        return {"kind": "scripted", "options": {"rounds": rounds}}

    config = {
        # billing's first request already holds one assistant message: the front's transfer
        "providers": {"front_llm": scripted([TRANSFER]), "billing_llm": scripted([REFUND] * 2)},
        "agents": {
            "front": {"provider": "front_llm", "model": "small", "handoffs": ["billing"]},
            "billing": {"provider": "billing_llm", "model": "big", "description": "Billing."},
        },
    }
    settings = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"front": {}}}
    with RunningServer(config, settings, environ=ENV) as srv:
        yield srv


def test_a_served_handoff_answers_with_the_agent_that_took_over(
    handoff_server: RunningServer,
) -> None:
    client = openai_client(handoff_server)
    answer = client.chat.completions.create(model="front", messages=HI)  # type: ignore[arg-type]
    assert answer.choices[0].message.content == "Refunded."
    assert answer.usage is not None
    assert answer.usage.total_tokens == 8 + 2 + 12 + 3
    stream = client.chat.completions.create(
        model="front",
        messages=HI,  # type: ignore[arg-type]
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Refunded."
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens == 25
    message = anthropic.Anthropic(
        base_url=handoff_server.base_url, api_key=KEY, max_retries=0
    ).messages.create(model="front", max_tokens=64, messages=HI)
    block = message.content[0]
    assert isinstance(block, TextBlock)
    assert block.text == "Refunded."

    async def left() -> list[object]:  # the agents that took over left with their requests
        return [handoff_server.rt.agents.get(f"billing-{n}") for n in (1, 2, 3)]

    assert handoff_server.call(left) == [None, None, None]
