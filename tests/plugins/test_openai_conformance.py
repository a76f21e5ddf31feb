"""The installed ``openai`` provider passes the provider conformance suite.

The factory comes from the ``agentrig.providers`` entry point (as a user gets it); each
scenario is answered in the Chat Completions wire format through ``httpx.MockTransport``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import httpx
from _provider_fixtures import MockTransportConformance, TrackingStream, served_provider

from agentrig.llm import Provider
from agentrig.testing import MockReply, MockRequest
from agentrig.testing.conformance_provider import (
    RETRY_AFTER,
    SLOW_FIRST_DELTA,
    TEXT,
    TEXT_DELTAS,
    TEXT_USAGE,
    TOOL_CALLS,
    TOOL_USAGE,
    ProviderConformance,
    Scenario,
    ScenarioCall,
)

MODEL_ANSWERING = "gpt-4o-2024-08-06"
ERRORS = {
    Scenario.ERROR_429: (429, "requests", "rate_limit_exceeded"),
    Scenario.ERROR_500: (500, "server_error", None),
    Scenario.ERROR_400: (400, "invalid_request_error", "invalid_value"),
    Scenario.ERROR_401: (401, "invalid_request_error", "invalid_api_key"),
}


def _usage(scenario: Scenario) -> dict[str, int] | None:
    usage = {Scenario.TEXT: TEXT_USAGE, Scenario.TOOL_CALLS: TOOL_USAGE}.get(scenario)
    if usage is None:
        return None
    return {
        "prompt_tokens": usage.prompt,
        "completion_tokens": usage.completion,
        "total_tokens": usage.total,
    }


def _chunk(delta: Mapping[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-conf",
        "object": "chat.completion.chunk",
        "model": MODEL_ANSWERING,
        "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}],
    }


def _sse(chunks: Sequence[Mapping[str, Any]], *, done: bool = True) -> list[bytes]:
    events = [f"data: {json.dumps(c)}\n\n".encode() for c in chunks]
    if done:
        events.append(b"data: [DONE]\n\n")
    return events


def _call_chunks(index: int, call: ScenarioCall) -> list[dict[str, Any]]:
    first = {
        "index": index,
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": ""},
    }
    out = [_chunk({"tool_calls": [first]})]
    out += [
        _chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        for piece in call.pieces
    ]
    return out


def stream_events(scenario: Scenario) -> list[dict[str, Any]]:
    chunks = [_chunk({"role": "assistant", "content": ""})]
    if scenario is Scenario.TOOL_CALLS:
        for index, call in enumerate(TOOL_CALLS):
            chunks += _call_chunks(index, call)
        chunks.append(_chunk({}, "tool_calls"))
    else:
        chunks += [_chunk({"content": piece}) for piece in TEXT_DELTAS]
        chunks.append(_chunk({}, "stop"))
    usage = _usage(scenario)
    if usage is not None:
        chunks.append({**_chunk({}), "choices": [], "usage": usage})
    return chunks


def complete_body(scenario: Scenario) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": TEXT}
    finish = "stop"
    if scenario is Scenario.TOOL_CALLS:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": "".join(call.pieces)},
                }
                for call in TOOL_CALLS
            ],
        }
        finish = "tool_calls"
    body: dict[str, Any] = {
        "id": "chatcmpl-conf",
        "object": "chat.completion",
        "model": MODEL_ANSWERING,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    usage = _usage(scenario)
    if usage is not None:
        body["usage"] = usage
    return body


class OpenAIScenarioServer:
    """Answers every Chat Completions request with one scenario; keeps what was sent."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.bodies: list[dict[str, Any]] = []
        self.slow: list[TrackingStream] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        scenario = self.scenario
        failed = error_reply(scenario)
        if failed is not None:
            return httpx.Response(failed.status, headers=failed.headers, json=failed.body)
        if not body.get("stream"):
            return httpx.Response(200, json=complete_body(scenario))
        sse = {"content-type": "text/event-stream"}
        if scenario is Scenario.SLOW_STREAM:
            first = [_chunk({"role": "assistant", "content": SLOW_FIRST_DELTA})]
            stream = TrackingStream(_sse(first, done=False), hang_after=1)
            self.slow.append(stream)
            return httpx.Response(200, headers=sse, stream=stream)
        return httpx.Response(
            200, headers=sse, stream=TrackingStream(_sse(stream_events(scenario)))
        )


class TestOpenAIConformance(MockTransportConformance):
    kind = "openai"
    model = "gpt-4o"
    capability_models: ClassVar[tuple[str, ...]] = ("gpt-4o", "gpt-5-mini", "o3-mini")

    def scenario_server(self, scenario: Scenario) -> OpenAIScenarioServer:
        return OpenAIScenarioServer(scenario)


class TestOpenAICompatibleServerConformance(TestOpenAIConformance):
    """An OpenAI-compatible server configured without a response-schema transport."""

    model = "llama3.1"
    capability_models: ClassVar[tuple[str, ...]] = ("llama3.1",)
    options: ClassVar[dict[str, Any]] = {
        "base_url": "http://127.0.0.1:11434/v1",
        "allow_private_base_url": True,
        "structured_output": "none",
    }
    expected_exemption: ClassVar[tuple[str, ...]] = ("127.0.0.1:11434",)


def error_reply(scenario: Scenario) -> MockReply | None:
    """An error scenario's answer as OpenAI's APIs give it (``None``: not an error)."""
    if scenario not in ERRORS:
        return None
    status, kind, code = ERRORS[scenario]
    headers = {"retry-after": str(int(RETRY_AFTER))} if status == 429 else {}
    error = {"error": {"message": f"conformance {status}", "type": kind, "code": code}}
    return MockReply(status=status, body=error, headers=headers)


def wire_reply(scenario: Scenario, body: Mapping[str, Any]) -> MockReply:
    """The Chat Completions answer to ``body`` in ``scenario``, for the suite to serve."""
    failed = error_reply(scenario)
    if failed is not None:
        return failed
    if not body.get("stream"):
        return MockReply(body=complete_body(scenario))
    if scenario is Scenario.SLOW_STREAM:
        return MockReply(events=[_chunk({"role": "assistant", "content": SLOW_FIRST_DELTA})])
    return MockReply(events=[*stream_events(scenario), "[DONE]"])


class TestOpenAIServedConformance(ProviderConformance):
    """The same provider against the suite's own server: ``text/event-stream`` with its
    charset, chunked, cut into 5-byte writes, a keep-alive comment before every event."""

    model = "gpt-4o"
    capability_models: ClassVar[tuple[str, ...]] = ("gpt-4o",)

    def wire_reply(self, scenario: Scenario, request: MockRequest) -> MockReply:
        return wire_reply(scenario, request.body)

    def make_provider(self, scenario: Scenario) -> Provider:
        return served_provider("openai", "openai-served", self.base_url)
