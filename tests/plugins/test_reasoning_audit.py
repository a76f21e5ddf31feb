"""Reasoning effort with an audit, through the installed OpenAI and Anthropic providers against
loopback servers answering as the vendors' references describe (Chat Completions'
``reasoning_effort`` request field; Messages' ``thinking`` object with ``budget_tokens``, or
``{"type": "disabled"}``): each request's disposition and the native control really sent are
on the run's record, in ``run --json`` data and in the ``model_call`` observation."""

from __future__ import annotations

from typing import Any

import pytest

import agentrig
from agentrig.agent import ReasoningAudit
from agentrig.kernel import open_runtime
from agentrig.lifecycle import Observation
from agentrig.testing import MockProviderServer, MockReply, MockRequest

pytestmark = pytest.mark.anyio

ENV = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


def openai_answer(request: MockRequest) -> MockReply:
    """A streamed chat completion (``chat.completion.chunk`` events, then ``[DONE]``)."""

    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                "model": request.body["model"], "choices": [choice]}  # fmt: skip

    events: list[Any] = [
        chunk({"role": "assistant", "content": "ok"}, None),
        chunk({}, "stop"),
        "[DONE]",
    ]
    return MockReply(events=events)


def anthropic_answer(request: MockRequest) -> MockReply:
    """A streamed Messages reply, with a thinking block when thinking was enabled."""
    message = {"id": "msg_1", "type": "message", "role": "assistant",
               "model": request.body["model"], "content": [], "stop_reason": None,
               "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 0}}  # fmt: skip
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    index = 0
    if request.body.get("thinking", {}).get("type") == "enabled":
        block = {"type": "thinking", "thinking": "", "signature": ""}
        events += [
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "thinking_delta", "thinking": "Let me see."}},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "signature_delta", "signature": "sig-1"}},
            {"type": "content_block_stop", "index": 0},
        ]  # fmt: skip
        index = 1
    events += [
        {"type": "content_block_start", "index": index,
         "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": index,
         "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "content_block_stop", "index": index},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
         "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]  # fmt: skip
    return MockReply(events=events)


def _config(kind: str, url: str, model: str, **agent: Any) -> dict[str, Any]:
    base = f"{url}/v1" if kind == "openai" else url
    options = {"base_url": base, "allow_private_base_url": True, "max_retries": 0}
    return {
        "providers": {"main": {"kind": kind, "options": options}},
        "agents": {"assistant": {"provider": "main", "model": model, **agent}},
    }


class Seen:
    """Keeps the ``model_call`` observations."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    @agentrig.hookimpl
    def observe(self, payload: Observation) -> None:
        if payload.kind == "model_call":
            self.calls.append(dict(payload.data))


async def _run(
    kind: str, model: str, **agent: Any
) -> tuple[ReasoningAudit, dict[str, Any], dict[str, Any]]:
    """One run; its audit, the body the server received and the observation's audit."""
    answer = openai_answer if kind == "openai" else anthropic_answer
    seen = Seen()
    with MockProviderServer(answer) as server:
        config = _config(kind, server.url, model, **agent)
        async with open_runtime(config, environ=ENV, plugins=[("seen", seen)]) as rt:
            result = await rt.agent("assistant").run("think about it")
        (body,) = [r.body for r in server.requests]
    (audit,) = result.invocation.reasoning
    (call,) = seen.calls
    assert call["reasoning"] == audit.to_dict()
    return audit, body, call["reasoning"]


@pytest.mark.parametrize(
    ("model", "asked", "disposition", "sent"),
    [
        ("o3", "high", "applied", "high"),
        ("o3", "max", "clamped", "high"),  # o3 has low, medium, high
        ("gpt-5-mini", "minimal", "applied", "minimal"),
        ("o3", "minimal", "fell_back", None),  # nothing at or below: the model's default
        ("o3", "auto", "fell_back", None),  # auto is no native control
        ("gpt-4o", "high", "not_applied", None),  # no effort control at all
    ],
)
async def test_openai_records_what_it_sent(
    model: str, asked: str, disposition: str, sent: str | None
) -> None:
    audit, body, observed = await _run("openai", model, reasoning_effort=asked)
    assert body.get("reasoning_effort") == sent  # what the wire carried
    assert audit.requested == asked
    assert audit.disposition == disposition
    assert audit.effective == sent
    assert dict(audit.native) == ({"reasoning_effort": sent} if sent else {})
    assert audit.dispatched is True
    assert audit.native_sent is (sent is not None)
    assert (audit.provider, audit.model, audit.round, audit.attempt) == ("main", model, 1, 1)
    assert observed["native"] == ({"reasoning_effort": sent} if sent else {})
    if disposition != "applied":
        assert audit.reason


async def test_openai_without_a_configured_effort_sends_none() -> None:
    audit, body, _ = await _run("openai", "o3")
    assert "reasoning_effort" not in body
    assert (audit.requested, audit.disposition, audit.native_sent) == (None, "fell_back", False)


@pytest.mark.parametrize(
    ("asked", "max_tokens", "disposition", "thinking"),
    [
        ("medium", 20_000, "applied", {"type": "enabled", "budget_tokens": 8192}),
        ("max", 4096, "applied", {"type": "enabled", "budget_tokens": 4095}),  # cut to fit
        ("none", 1000, "applied", {"type": "disabled"}),
        ("high", 1000, "not_applied", None),  # 1000 leaves no room for the 1024 minimum
        ("auto", 20_000, "fell_back", None),
    ],
)
async def test_anthropic_records_the_thinking_it_sent(
    asked: str, max_tokens: int, disposition: str, thinking: dict[str, Any] | None
) -> None:
    audit, body, observed = await _run(
        "anthropic", "claude-sonnet-4-5", reasoning_effort=asked, max_tokens=max_tokens
    )
    assert body.get("thinking") == thinking
    assert audit.disposition == disposition
    assert audit.native_sent is (thinking is not None)
    assert observed["native"] == ({"thinking": thinking} if thinking else {})
    assert observed["native_sent"] is (thinking is not None)


async def test_anthropic_model_without_thinking_is_not_applied() -> None:
    audit, body, _ = await _run("anthropic", "claude-sonnet-5", reasoning_effort="high")
    assert "thinking" not in body
    assert audit.disposition == "not_applied"
    assert audit.native == {}


@pytest.mark.parametrize("transport", ["http", "websocket"])
async def test_openai_responses_records_the_reasoning_effort_it_sent(transport: str) -> None:
    """The Responses provider (HTTP and its WebSocket mode) reports ``reasoning.effort``."""
    from _responses_server import KEY, ResponsesServer

    with ResponsesServer() as server:
        config = {
            "providers": {
                "main": {
                    "kind": "openai-responses",
                    "credentials": {"api_key": "$ENV:OPENAI_KEY"},
                    "options": {"base_url": server.base_url, "allow_private_base_url": True,
                                "max_retries": 0, "transport": transport},
                }
            },
            "agents": {"assistant": {"provider": "main", "model": "gpt-5-mini",
                                     "reasoning_effort": "max"}},
        }  # fmt: skip
        resolver = agentrig.env_resolver({"OPENAI_KEY": KEY})
        async with open_runtime(config, resolver=resolver, environ={}) as rt:
            result = await rt.agent("assistant").run("hello")
        (seen,) = server.seen
    assert seen.transport == transport
    assert seen.body["reasoning"]["effort"] == "high"  # gpt-5-mini: minimal ... high
    (audit,) = result.invocation.reasoning
    assert (audit.disposition, audit.effective) == ("clamped", "high")
    assert audit.native == {"reasoning": {"effort": "high"}}
    assert audit.native_sent
