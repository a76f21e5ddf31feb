"""The installed ``anthropic`` provider passes the provider conformance suite.

The factory comes from the ``agentrig.providers`` entry point; each scenario is answered in
the Messages wire format (SSE events for streams) through ``httpx.MockTransport``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

import httpx
from _provider_fixtures import MockTransportConformance, TrackingStream

from agentrig.testing.conformance_provider import (
    RETRY_AFTER,
    SLOW_FIRST_DELTA,
    TEXT,
    TEXT_DELTAS,
    TEXT_USAGE,
    TOOL_CALLS,
    TOOL_USAGE,
    Scenario,
)

MODEL_ANSWERING = "claude-sonnet-4-5-20250929"
_ERRORS = {
    Scenario.ERROR_429: (429, "rate_limit_error"),
    Scenario.ERROR_500: (500, "api_error"),
    Scenario.ERROR_400: (400, "invalid_request_error"),
    Scenario.ERROR_401: (401, "authentication_error"),
}


def _usage(scenario: Scenario) -> dict[str, int] | None:
    usage = {Scenario.TEXT: TEXT_USAGE, Scenario.TOOL_CALLS: TOOL_USAGE}.get(scenario)
    if usage is None:
        return None
    return {"input_tokens": usage.prompt, "output_tokens": usage.completion}


def _event(name: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()


def _message_start(scenario: Scenario) -> bytes:
    message: dict[str, Any] = {
        "id": "msg_conf",
        "type": "message",
        "role": "assistant",
        "model": MODEL_ANSWERING,
        "content": [],
        "stop_reason": None,
    }
    usage = _usage(scenario)
    if usage is not None:
        message["usage"] = {"input_tokens": usage["input_tokens"], "output_tokens": 1}
    return _event("message_start", {"message": message})


def stream_events(scenario: Scenario) -> list[bytes]:
    events = [_message_start(scenario)]
    if scenario is Scenario.TOOL_CALLS:
        stop = "tool_use"
        for index, call in enumerate(TOOL_CALLS):
            block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
            events.append(_event("content_block_start", {"index": index, "content_block": block}))
            events += [
                _event(
                    "content_block_delta",
                    {"index": index, "delta": {"type": "input_json_delta", "partial_json": p}},
                )
                for p in call.pieces
            ]
            events.append(_event("content_block_stop", {"index": index}))
    else:
        stop = "end_turn"
        block = {"type": "text", "text": ""}
        events.append(_event("content_block_start", {"index": 0, "content_block": block}))
        events += [
            _event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": t}})
            for t in TEXT_DELTAS
        ]
        events.append(_event("content_block_stop", {"index": 0}))
    delta: dict[str, Any] = {"delta": {"stop_reason": stop, "stop_sequence": None}}
    usage = _usage(scenario)
    if usage is not None:
        delta["usage"] = {"output_tokens": usage["output_tokens"]}
    events.append(_event("message_delta", delta))
    events.append(_event("message_stop", {}))
    return events


def complete_body(scenario: Scenario) -> dict[str, Any]:
    if scenario is Scenario.TOOL_CALLS:
        content: list[dict[str, Any]] = [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
            for c in TOOL_CALLS
        ]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": TEXT}]
        stop = "end_turn"
    body: dict[str, Any] = {
        "id": "msg_conf",
        "type": "message",
        "role": "assistant",
        "model": MODEL_ANSWERING,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
    }
    usage = _usage(scenario)
    if usage is not None:
        body["usage"] = usage
    return body


class AnthropicScenarioServer:
    """Answers every Messages request with one scenario; keeps what was sent."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.bodies: list[dict[str, Any]] = []
        self.slow: list[TrackingStream] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        scenario = self.scenario
        if scenario in _ERRORS:
            status, kind = _ERRORS[scenario]
            headers = {"retry-after": str(int(RETRY_AFTER))} if status == 429 else {}
            error = {"type": "error", "error": {"type": kind, "message": f"conformance {status}"}}
            return httpx.Response(status, headers=headers, json=error)
        if not body.get("stream"):
            return httpx.Response(200, json=complete_body(scenario))
        sse = {"content-type": "text/event-stream"}
        if scenario is Scenario.SLOW_STREAM:
            block = {"type": "text", "text": ""}
            first = [
                _message_start(scenario),
                _event("content_block_start", {"index": 0, "content_block": block}),
                _event(
                    "content_block_delta",
                    {"index": 0, "delta": {"type": "text_delta", "text": SLOW_FIRST_DELTA}},
                ),
            ]
            stream = TrackingStream(first, hang_after=len(first))
            self.slow.append(stream)
            return httpx.Response(200, headers=sse, stream=stream)
        return httpx.Response(200, headers=sse, stream=TrackingStream(stream_events(scenario)))


class TestAnthropicConformance(MockTransportConformance):
    kind = "anthropic"
    api_key = "sk-ant-conformance"
    model = "claude-sonnet-4-5"
    capability_models: ClassVar[tuple[str, ...]] = ("claude-sonnet-4-5", "claude-haiku-4-5")

    def scenario_server(self, scenario: Scenario) -> AnthropicScenarioServer:
        return AnthropicScenarioServer(scenario)


class TestAnthropicNativeSchemaConformance(TestAnthropicConformance):
    """Declared native structured output (``output_format``) must reach the wire."""

    options: ClassVar[dict[str, Any]] = {"structured_output": "native"}


class TestAnthropicNoSchemaConformance(TestAnthropicConformance):
    """Declared ``structured_output = "none"``: schema requests are refused before sending."""

    options: ClassVar[dict[str, Any]] = {"structured_output": "none"}
