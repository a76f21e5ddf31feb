"""The server continues a trace that arrives with a request (agentrig-otel as the tracer)."""

from __future__ import annotations

import httpx
import pytest
from agentrig_otel import Telemetry
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from server_support import KEY, RunningServer, scripted_config

pytestmark = pytest.mark.integration

SETTINGS = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"assistant": {}}}
ENV = {"SERVER_KEY": KEY}
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENTS = {False: "b7ad6b7169203331", True: "00f067aa0ba902b7"}


@pytest.mark.parametrize("stream", [False, True])
def test_a_request_with_traceparent_makes_the_run_its_child(stream: bool) -> None:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    telemetry = Telemetry(provider.get_tracer("agentrig"))
    parent = PARENTS[stream]
    with RunningServer(
        scripted_config(), SETTINGS, environ=ENV, plugins=[("otel-test", telemetry)]
    ) as server:
        response = httpx.post(
            f"{server.base_url}/v1/chat/completions",
            headers={
                "authorization": f"Bearer {KEY}",
                "traceparent": f"00-{TRACE_ID}-{parent}-01",
                "tracestate": "vendor=1",
            },
            json={
                "model": "assistant",
                "messages": [{"role": "user", "content": "Hi"}],
                "stream": stream,
            },
            timeout=30,
        )
        assert response.status_code == 200
        assert "Hello" in response.text
        # a request without one starts a trace of its own
        plain = httpx.post(
            f"{server.base_url}/v1/chat/completions",
            headers={"authorization": f"Bearer {KEY}"},
            json={"model": "assistant", "messages": [{"role": "user", "content": "Hi"}]},
            timeout=30,
        )
        assert plain.status_code == 200
    runs = [s for s in spans.get_finished_spans() if s.name.startswith("invoke_agent")]
    assert [run.name for run in runs] == ["invoke_agent assistant"] * 2
    # named after the configured agent (low cardinality); the per-request agent id kept apart
    ids = set()
    for span in spans.get_finished_spans():
        attributes = dict(span.attributes or {})
        if span.name.startswith("invoke_agent"):  # (chat spans leave the agent to it)
            assert attributes["gen_ai.agent.name"] == "assistant"
            assert str(attributes["gen_ai.agent.id"]).startswith("assistant.srv-")
            ids.add(attributes["gen_ai.agent.id"])
    assert len(ids) == 2
    continued, fresh = runs
    assert format(continued.context.trace_id, "032x") == TRACE_ID
    assert continued.parent is not None
    assert continued.parent.is_remote
    assert format(continued.parent.span_id, "016x") == parent
    assert continued.context.trace_state.to_header() == "vendor=1"
    assert fresh.parent is None
    assert format(fresh.context.trace_id, "032x") != TRACE_ID
