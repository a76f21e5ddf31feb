"""The installed ``openai-responses`` provider passes the provider conformance suite.

Served mode: the suite's own loopback server answers each scenario in the Responses wire
format (:mod:`_responses_reference`) as ``text/event-stream``, chunked, cut into 5-byte
writes with keep-alive comments; the provider talks to it over HTTP/SSE.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from _provider_fixtures import served_provider
from _responses_reference import function_call, message, response_object, stream_events
from test_openai_conformance import ERRORS, error_reply

from agentrig.llm import Provider, Usage
from agentrig.testing import MockReply, MockRequest
from agentrig.testing.conformance_provider import (
    SLOW_FIRST_DELTA,
    TEXT,
    TEXT_DELTAS,
    TEXT_USAGE,
    TOOL_CALLS,
    TOOL_USAGE,
    ProviderConformance,
    Scenario,
)

__all__ = ["ERRORS", "ResponsesConformance", "wire_reply"]

MODEL_ANSWERING = "gpt-5-mini-2025-08-07"


def _usage(scenario: Scenario) -> dict[str, Any] | None:
    found: Usage | None = {Scenario.TEXT: TEXT_USAGE, Scenario.TOOL_CALLS: TOOL_USAGE}.get(scenario)
    if found is None:
        return None
    return {
        "input_tokens": found.prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": found.completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": found.total,
    }


def scenario_response(scenario: Scenario) -> dict[str, Any]:
    if scenario is Scenario.TOOL_CALLS:
        output = [function_call(c.id, c.name, "".join(c.pieces)) for c in TOOL_CALLS]
    else:
        output = [message(TEXT)]
    return response_object("resp_conformance", MODEL_ANSWERING, output, usage=_usage(scenario))


def wire_reply(scenario: Scenario, body: Mapping[str, Any]) -> MockReply:
    """The Responses answer to ``body`` in ``scenario``, for the suite to serve (errors as
    Chat Completions gives them: the same shape and codes)."""
    failed = error_reply(scenario)
    if failed is not None:
        return failed
    final = scenario_response(scenario)
    if not body.get("stream"):
        return MockReply(body=final)
    if scenario is Scenario.SLOW_STREAM:
        events = stream_events(response_object("resp_slow", MODEL_ANSWERING, [message("x")]))
        head = events[:4]  # created, in_progress, output_item.added, content_part.added
        where = {"item_id": head[2]["item"]["id"], "output_index": 0, "content_index": 0}
        delta = {"type": "response.output_text.delta", **where, "delta": SLOW_FIRST_DELTA}
        return MockReply(events=[*head, {**delta, "logprobs": [], "sequence_number": 4}])
    events = stream_events(final)
    if scenario is not Scenario.TOOL_CALLS:  # the suite's own delta boundaries
        events = _with_deltas(events, TEXT_DELTAS)
    return MockReply(events=events)


def _with_deltas(events: list[dict[str, Any]], deltas: tuple[str, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for event in events:
        if event["type"] != "response.output_text.delta":
            out.append(event)
        elif event["delta"] == TEXT[: len(event["delta"])]:  # the first: all of ours instead
            out += [{**event, "delta": piece} for piece in deltas]
    return [{**event, "sequence_number": n} for n, event in enumerate(out)]


class ResponsesConformance(ProviderConformance):
    """What the suite over either transport shares: the model, and asyncio only."""

    model = "gpt-5-mini"

    @pytest.fixture
    def anyio_backend(self) -> str:
        """asyncio only: the transport tests run this transport on trio too, and the suite
        is the slowest of the provider's tests (the CI budget)."""
        return "asyncio"


class TestOpenAIResponsesServedConformance(ResponsesConformance):
    """Over HTTP/SSE against the suite's server (5-byte writes, keep-alive comments)."""

    capability_models: ClassVar[tuple[str, ...]] = ("gpt-5-mini", "gpt-4o", "o3-mini")
    options: ClassVar[dict[str, Any]] = {"transport": "http"}

    def wire_reply(self, scenario: Scenario, request: MockRequest) -> MockReply:
        assert request.path.endswith("/responses"), request.path
        return wire_reply(scenario, request.body)

    def make_provider(self, scenario: Scenario) -> Provider:
        return served_provider(
            "openai-responses", "openai-responses-served", self.base_url, **self.options
        )
