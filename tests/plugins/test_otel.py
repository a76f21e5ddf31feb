"""agentrig-otel: exact spans, attributes, parent/child structure and metrics.

Spans are checked with the OpenTelemetry SDK's in-memory exporter; the end-to-end test lets
the plugin (discovered through its entry points, configured by ``[otel]``) export over
OTLP/HTTP to a small receiver on 127.0.0.1 that decodes the protobuf it got.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from _otel_global import global_spans
from agentrig_otel import Telemetry, redact
from opentelemetry.context import Context
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import DEFAULT_ON, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind, StatusCode, TraceState
from opentelemetry.util.types import Attributes

import agentrig
from agentrig.cli import plugin_report
from agentrig.errors import ConfigError
from agentrig.ids import AgentId
from agentrig.kernel import MemorySource, open_runtime
from agentrig.lifecycle import ExecutionSuspended

pytestmark = pytest.mark.anyio


@agentrig.tool(risk="inspect")
def lookup(city: str) -> str:
    """Look a city's weather up."""
    return f"sunny in {city}"


@agentrig.tool(risk="inspect")
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


def config(script: Sequence[object], **extra: Any) -> dict[str, Any]:
    return {
        "providers": {"local": {"kind": "scripted", "options": {"script": script}}},
        "agents": {
            "assistant": {
                "provider": "local",
                "model": "scripted-1",
                "tools": ["lookup", "explode"],
            }
        },
        **extra,
    }


SCRIPT: list[dict[str, Any]] = [
    {
        "text": "Looking it up.",
        "tool_calls": [
            {"name": "lookup", "arguments": {"city": "Lisbon"}, "id": "call_a"},
            {"name": "explode", "arguments": {"reason": "boom"}, "id": "call_b"},
        ],
        "usage": {"prompt": 100, "completion": 20},
    },
    {"text": "Sunny in Lisbon.", "usage": {"prompt": 150, "completion": 10}},
]


def memory() -> MemorySource:
    source = MemorySource()
    source.add("tools", "lookup", lookup)
    source.add("tools", "explode", explode)
    return source


class Recorder:
    def __init__(self, *, capture_content: bool = False) -> None:
        self.spans = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.metrics = InMemoryMetricReader()
        meter_provider = MeterProvider(metric_readers=[self.metrics])
        self.telemetry = Telemetry(
            tracer_provider.get_tracer("agentrig"),
            meter_provider.get_meter("agentrig"),
            capture_content=capture_content,
        )

    def by_name(self) -> dict[str, ReadableSpan]:
        return {span.name: span for span in self.spans.get_finished_spans()}

    def metric_points(self) -> dict[str, list[Any]]:
        data = self.metrics.get_metrics_data()
        assert data is not None
        out: dict[str, list[Any]] = {}
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out[metric.name] = list(metric.data.data_points)
        return out


async def run_once(recorder: Recorder, script: Sequence[object] = SCRIPT) -> Any:
    async with open_runtime(
        config(script), memory=memory(), plugins=[("otel-test", recorder.telemetry)], environ={}
    ) as rt:
        return await rt.agent(AgentId("assistant")).run("Weather in Lisbon?")


async def test_a_run_is_one_agent_span_with_its_calls_as_children() -> None:
    recorder = Recorder()
    result = await run_once(recorder)
    spans = recorder.by_name()
    assert set(spans) == {
        "invoke_agent assistant",
        "chat scripted-1",
        "execute_tool lookup",
        "execute_tool explode",
    }
    chats = [s for s in recorder.spans.get_finished_spans() if s.name == "chat scripted-1"]
    assert len(chats) == 2
    run = spans["invoke_agent assistant"]
    assert run.parent is None
    for span in recorder.spans.get_finished_spans():
        if span is not run:
            assert span.parent is not None
            assert span.parent.span_id == run.context.span_id
            assert span.context.trace_id == run.context.trace_id
            assert run.start_time is not None
            assert span.start_time is not None
            assert span.end_time is not None
            assert run.end_time is not None
            assert run.start_time <= span.start_time <= span.end_time <= run.end_time
    attributes = dict(run.attributes or {})
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.agent.name"] == "assistant"
    assert attributes["gen_ai.conversation.id"] == result.invocation.session_id
    assert attributes["agentrig.run.id"] == result.invocation.run_id
    assert attributes["gen_ai.usage.input_tokens"] == 250
    assert attributes["gen_ai.usage.output_tokens"] == 30
    assert attributes["agentrig.turn.reason"] == "completed"
    assert run.status.status_code is StatusCode.UNSET


async def test_model_call_spans_carry_the_genai_attributes() -> None:
    recorder = Recorder()
    result = await run_once(recorder)
    first, second = sorted(
        (s for s in recorder.spans.get_finished_spans() if s.name == "chat scripted-1"),
        key=lambda s: s.start_time or 0,
    )
    assert first.kind is SpanKind.CLIENT
    attributes = dict(first.attributes or {})
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.provider.name"] == "scripted"
    assert attributes["gen_ai.request.model"] == "scripted-1"
    assert attributes["gen_ai.usage.input_tokens"] == 100
    assert attributes["gen_ai.usage.output_tokens"] == 20
    # agentrig's stop reasons mapped to the conventions' finish reasons
    assert attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert attributes["gen_ai.conversation.id"] == result.invocation.session_id
    assert "gen_ai.agent.name" not in attributes  # the parent invoke_agent span's
    assert dict(second.attributes or {})["gen_ai.response.finish_reasons"] == ("stop",)


class SeenBySampler(Sampler):
    """The SDK's default sampler, remembering what each span showed it at creation."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        self.seen.append((name, dict(attributes or {})))
        return DEFAULT_ON.should_sample(
            parent_context, trace_id, name, kind, attributes, links, trace_state
        )

    def get_description(self) -> str:
        return "SeenBySampler"


async def test_spans_start_named_with_the_attributes_a_sampler_decides_on() -> None:
    """The GenAI conventions want the operation, provider, model and server at creation: the
    sampler sees each span's final name and those attributes."""
    sampler = SeenBySampler()
    telemetry = Telemetry(TracerProvider(sampler=sampler).get_tracer("agentrig"))
    async with open_runtime(
        config(SCRIPT), memory=memory(), plugins=[("otel-test", telemetry)], environ={}
    ) as rt:
        await rt.agent(AgentId("assistant")).run("Weather in Lisbon?")
    seen = dict(sampler.seen)
    names = [name for name, _ in sampler.seen]
    assert names[:2] == ["invoke_agent assistant", "chat scripted-1"]
    # the two tool calls run side by side: either may start first
    assert sorted(names[2:4]) == ["execute_tool explode", "execute_tool lookup"]
    assert names[4:] == ["chat scripted-1"]
    assert seen["invoke_agent assistant"] == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "assistant",
        "gen_ai.agent.id": "assistant",
    }
    assert seen["chat scripted-1"] == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "scripted",
        "gen_ai.request.model": "scripted-1",
        "agentrig.provider.id": "local",
    }
    assert seen["execute_tool lookup"] == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Look a city's weather up.",
    }


async def test_a_provider_named_as_its_kind_has_no_provider_id_beside_its_name() -> None:
    """``agentrig.provider.id`` says which configured provider answered; one whose id is its
    kind would only restate ``gen_ai.provider.name``."""
    sampler = SeenBySampler()
    telemetry = Telemetry(TracerProvider(sampler=sampler).get_tracer("agentrig"))
    named = config(SCRIPT)
    named["providers"] = {"scripted": named["providers"]["local"]}
    named["agents"]["assistant"]["provider"] = "scripted"
    async with open_runtime(
        named, memory=memory(), plugins=[("otel-test", telemetry)], environ={}
    ) as rt:
        await rt.agent(AgentId("assistant")).run("Weather in Lisbon?")
    assert dict(sampler.seen)["chat scripted-1"] == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "scripted",
        "gen_ai.request.model": "scripted-1",
    }


async def test_an_agent_created_again_under_a_disposed_ones_id_gets_its_own_description() -> None:
    """How an agent's spans start is kept per agent, and forgotten when the agent goes."""
    recorder = Recorder()
    async with open_runtime(
        config(SCRIPT + SCRIPT), memory=memory(), plugins=[("otel-test", recorder.telemetry)]
    ) as rt:
        for description in ("The first one.", "The second one."):
            agent = await rt.agents.create(
                "helper", provider="local", model="scripted-1", description=description
            )
            await agent.run("Weather in Lisbon?")
            await rt.agents.dispose(agent.id)
    described = [
        dict(span.attributes or {}).get("gen_ai.agent.description")
        for span in recorder.spans.get_finished_spans()
        if span.name == "invoke_agent helper"
    ]
    assert described == ["The first one.", "The second one."]


async def test_tool_spans_say_which_call_and_whether_it_failed() -> None:
    recorder = Recorder()
    await run_once(recorder)
    spans = recorder.by_name()
    ok = dict(spans["execute_tool lookup"].attributes or {})
    assert ok["gen_ai.operation.name"] == "execute_tool"
    assert ok["gen_ai.tool.name"] == "lookup"
    assert ok["gen_ai.tool.call.id"] == "call_a"
    # a success is the absence of error.type (the conventions'): no status restates it
    assert "agentrig.tool.status" not in ok
    assert "error.type" not in ok
    assert spans["execute_tool lookup"].status.status_code is StatusCode.UNSET
    failed = spans["execute_tool explode"]
    assert failed.status.status_code is StatusCode.ERROR
    assert dict(failed.attributes or {})["error.type"] == "RuntimeError"
    assert dict(failed.attributes or {})["agentrig.tool.status"] == "error"
    assert "gen_ai.tool.call.arguments" not in ok  # content is off by default


async def test_metrics_record_tokens_durations_and_tool_outcomes() -> None:
    recorder = Recorder()
    await run_once(recorder)
    points = recorder.metric_points()
    tokens = {
        (p.attributes["gen_ai.token.type"]): p.sum for p in points["gen_ai.client.token.usage"]
    }
    assert tokens == {"input": 250, "output": 30}
    (duration,) = points["gen_ai.client.operation.duration"]
    assert duration.count == 2
    calls = {
        p.attributes["gen_ai.tool.name"]: (p.attributes["agentrig.tool.status"], p.count)
        for p in points["agentrig.tool.duration"]
    }
    assert calls == {"lookup": ("ok", 1), "explode": ("error", 1)}


async def test_content_is_recorded_only_when_asked_and_secrets_are_redacted() -> None:
    recorder = Recorder(capture_content=True)
    script = [
        {
            "tool_calls": [
                {"name": "lookup", "arguments": {"city": "Oslo"}, "id": "call_c"},
            ]
        },
        {"text": "Cold in Oslo."},
    ]
    await run_once(recorder, script)
    spans = recorder.by_name()
    run = dict(spans["invoke_agent assistant"].attributes or {})
    assert "Weather in Lisbon?" in str(run["gen_ai.input.messages"])
    assert "Cold in Oslo." in str(run["gen_ai.output.messages"])
    tool = dict(spans["execute_tool lookup"].attributes or {})
    assert '"city": "Oslo"' in str(tool["gen_ai.tool.call.arguments"])
    assert "sunny in Oslo" in str(tool["gen_ai.tool.call.result"])
    assert redact({"api_key": "k", "nested": [{"Authorization": "b", "ok": 1}]}) == {
        "api_key": "[REDACTED]",
        "nested": [{"Authorization": "[REDACTED]", "ok": 1}],
    }


async def test_an_interrupted_run_says_so() -> None:
    recorder = Recorder()
    async with open_runtime(
        config([{"text": "slow answer", "delay": 30}]),
        memory=memory(),
        plugins=[("otel-test", recorder.telemetry)],
        environ={},
    ) as rt:
        agent = rt.agent(AgentId("assistant"))
        signal = agentrig.CancelSignal()
        async with agentrig_task_group() as tg:
            tg.start_soon(cancel_soon, signal)
            await agent.run("hi", signal=signal)
    run = recorder.by_name()["invoke_agent assistant"]
    assert dict(run.attributes or {})["agentrig.turn.reason"] == "interrupted"
    assert run.status.status_code is StatusCode.ERROR
    assert [e.name for e in run.events] == ["agentrig.run.interrupted"]
    chat = recorder.by_name()["chat scripted-1"]
    assert dict(chat.attributes or {})["error.type"] in {"interrupted", "AbortError"}


async def test_a_run_past_its_deadline_says_timeout() -> None:
    recorder = Recorder()
    async with open_runtime(
        config([{"text": "slow answer", "delay": 30}]),
        memory=memory(),
        plugins=[("otel-test", recorder.telemetry)],
        environ={},
    ) as rt:
        await rt.agent(AgentId("assistant")).run("hi", deadline="50ms")
    run = recorder.by_name()["invoke_agent assistant"]
    attributes = dict(run.attributes or {})
    assert attributes["agentrig.turn.reason"] == "timeout"
    assert attributes["error.type"] == "timeout"
    assert run.status.status_code is StatusCode.ERROR
    assert [e.name for e in run.events] == ["agentrig.run.timeout"]


class Waits:
    """An approver that suspends the run: the answer will come later (see journal.md)."""

    @agentrig.hookimpl
    async def permission_approver(self, payload: Any) -> str:
        raise ExecutionSuspended(f"waiting for an answer on call {payload.call_id!r}")


async def test_a_suspended_run_says_so_and_is_no_error() -> None:
    recorder = Recorder()
    async with open_runtime(
        config(SCRIPT, permissions={"mode": "default", "ask": ["explode"]}),
        memory=memory(),
        plugins=[("otel-test", recorder.telemetry), ("waits", Waits())],
        environ={},
    ) as rt:
        with pytest.raises(ExecutionSuspended):
            await rt.agent(AgentId("assistant")).run("Weather in Lisbon?")
    run = recorder.by_name()["invoke_agent assistant"]
    assert dict(run.attributes or {})["agentrig.turn.reason"] == "suspended"
    assert run.status.status_code is StatusCode.UNSET  # it waits; it did not fail
    assert "error.type" not in dict(run.attributes or {})


def agentrig_task_group() -> Any:
    import anyio

    return anyio.create_task_group()


async def cancel_soon(signal: Any) -> None:
    import anyio

    await anyio.sleep(0.05)
    signal.cancel("stop")


# ---- configured from agentrig.toml, exported over OTLP/HTTP ----------------------------


class Collector(ThreadingHTTPServer):
    """A tiny OTLP/HTTP receiver: keeps each request's path and (decompressed) body."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Receiver)
        self.received: list[tuple[str, bytes]] = []
        self.headers: list[dict[str, str]] = []


class _Receiver(BaseHTTPRequestHandler):
    server: Collector

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        self.server.received.append((self.path, body))
        self.server.headers.append({k.lower(): v for k, v in self.headers.items()})
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def receiver() -> Iterator[Collector]:
    server = Collector()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


async def test_the_configured_plugin_exports_over_otlp_http(
    receiver: Collector,
) -> None:
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
    otel = {"exporter": "otlp-http", "endpoint": endpoint, "service_name": "agentrig-test"}
    async with open_runtime(config(SCRIPT, otel=otel), memory=memory(), environ={}) as rt:
        assert {
            (r.kind, r.id, r.distribution) for r in plugin_report(rt.index) if r.id == "otel"
        } == {
            ("plugins", "otel", "agentrig-otel"),
            ("config_sections", "otel", "agentrig-otel"),
        }
        await rt.agent(AgentId("assistant")).run("Weather in Lisbon?")
    # closing the runtime flushed the exporter
    traces = [body for path, body in receiver.received if path == "/v1/traces"]
    assert traces, receiver.received
    names: set[str] = set()
    services: set[str] = set()
    for body in traces:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource_spans in request.resource_spans:
            for attribute in resource_spans.resource.attributes:
                if attribute.key == "service.name":
                    services.add(attribute.value.string_value)
            for scope in resource_spans.scope_spans:
                names.update(span.name for span in scope.spans)
    assert services == {"agentrig-test"}
    assert names == {
        "invoke_agent assistant",
        "chat scripted-1",
        "execute_tool lookup",
        "execute_tool explode",
    }
    assert any(path == "/v1/metrics" for path, _ in receiver.received)


async def test_without_an_otel_table_nothing_listens() -> None:
    async with open_runtime(config(SCRIPT), memory=memory(), environ={}) as rt:
        assert not rt.hooks.has_listeners("observe")


async def test_a_bad_otel_table_is_a_config_error_at_its_path() -> None:
    with pytest.raises(ConfigError) as caught:
        async with open_runtime(
            config(SCRIPT, otel={"exporter": "zipkin"}), memory=memory(), environ={}
        ):
            pass
    assert "otel.exporter" in str(caught.value)


async def test_an_unknown_exemplar_filter_is_a_config_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the SDK's meter provider raises a bare ValueError on it; the plugin names it instead
    monkeypatch.setenv("OTEL_METRICS_EXEMPLAR_FILTER", "always-off")
    otel = {"exporter": "none"}
    with pytest.raises(ConfigError) as caught:
        async with open_runtime(config(SCRIPT, otel=otel), memory=memory(), environ={}):
            pass
    message = str(caught.value)
    assert "OTEL_METRICS_EXEMPLAR_FILTER='always-off'" in message
    assert "did you mean 'always_off'?" in message
    assert caught.value.issues[0].code == "config.otel"
    monkeypatch.setenv("OTEL_METRICS_EXEMPLAR_FILTER", "always_off")  # a known one opens
    async with open_runtime(config(SCRIPT, otel=otel), memory=memory(), environ={}) as rt:
        assert rt.hooks.has_listeners("observe")


@pytest.mark.subprocess
def test_the_example_runs_offline_and_prints_its_span_tree() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "otel" / "run.py"
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "answer: That sentence has 4 words." in done.stdout
    tree = done.stdout.split("span tree:")[1].split()
    assert [w for w in tree if not w.startswith("(") and w != "ms)"] == [
        "invoke_agent",
        "assistant",
        "chat",
        "scripted-demo",
        "execute_tool",
        "word_count",
        "chat",
        "scripted-demo",
    ]
    assert '"name": "execute_tool word_count"' in done.stdout  # the console exporter's JSON


@agentrig.tool(risk="execute")
def deploy(target: str) -> str:
    """Deploy (asks for permission: nobody answers here, so it is refused)."""
    return f"deployed {target}"


@pytest.mark.subprocess
async def test_hook_executions_are_span_events_and_decisions_tool_span_attributes() -> None:
    recorder = Recorder()
    script = [
        {
            "tool_calls": [
                {"name": "lookup", "arguments": {"city": "Rome"}, "id": "call_l"},
                {"name": "deploy", "arguments": {"target": "prod"}, "id": "call_d"},
            ]
        },
        {"text": "Done."},
    ]
    cfg = config(script)
    cfg["agents"]["assistant"]["tools"] = ["lookup", "deploy"]
    cfg["hooks"] = {
        "PreToolUse": [
            {"strategy": "command", "matcher": "lookup", "options": {"command": "exit 0"}}
        ]
    }
    source = memory()
    source.add("tools", "deploy", deploy)
    async with open_runtime(
        cfg, memory=source, plugins=[("otel-test", recorder.telemetry)], environ={}
    ) as rt:
        await rt.agent(AgentId("assistant")).run("Look Rome up, then deploy.")
    spans = recorder.by_name()
    lookup_events = {e.name: dict(e.attributes or {}) for e in spans["execute_tool lookup"].events}
    hook = lookup_events["agentrig.hook PreToolUse"]
    assert hook["agentrig.hook.strategy"] == "command"
    assert hook["agentrig.hook.outcome"] == "allow"
    lookup_attributes = dict(spans["execute_tool lookup"].attributes or {})
    assert lookup_attributes["agentrig.permission.outcome"] == "allow"
    assert "agentrig.permission" not in lookup_events  # a property of the call, not an event
    deploy_span = spans["execute_tool deploy"]
    deploy_attributes = dict(deploy_span.attributes or {})
    assert deploy_attributes["agentrig.permission.outcome"] == "deny"
    assert deploy_attributes["agentrig.permission.reason"]
    assert not [e for e in deploy_span.events if e.name == "agentrig.permission"]
    assert deploy_span.status.status_code is StatusCode.ERROR


async def test_headers_go_to_the_collector_and_metrics_can_be_switched_off(
    receiver: Collector,
) -> None:
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
    otel = {"endpoint": endpoint, "headers": {"x-api-key": "k-123"}, "metrics": False}
    async with open_runtime(config(SCRIPT, otel=otel), memory=memory(), environ={}) as rt:
        await rt.agent(AgentId("assistant")).run("Weather in Lisbon?")
    paths = [path for path, _ in receiver.received]
    assert "/v1/traces" in paths
    assert "/v1/metrics" not in paths
    assert all(h.get("x-api-key") == "k-123" for h in receiver.headers)


async def test_enabled_false_records_nothing() -> None:
    otel = {"enabled": False, "exporter": "console"}
    async with open_runtime(config(SCRIPT, otel=otel), memory=memory(), environ={}) as rt:
        assert not rt.hooks.has_listeners("observe")


async def test_exporter_none_records_without_exporting() -> None:
    otel = {"exporter": "none"}
    async with open_runtime(config(SCRIPT, otel=otel), memory=memory(), environ={}) as rt:
        assert rt.hooks.has_listeners("observe")
        result = await rt.agent(AgentId("assistant")).run("Weather in Lisbon?")
    assert result.value == "Sunny in Lisbon."


async def test_exporter_global_uses_the_applications_tracer_provider() -> None:
    spans = global_spans()
    spans.clear()
    otel = {"exporter": "global", "metrics": False}
    async with open_runtime(config(SCRIPT, otel=otel), memory=memory(), environ={}) as rt:
        await rt.agent(AgentId("assistant")).run("Weather in Lisbon?")
    assert "invoke_agent assistant" in {s.name for s in spans.get_finished_spans()}


async def test_otlp_grpc_without_its_extra_is_a_config_error_naming_the_install() -> None:
    import importlib.util

    if importlib.util.find_spec("opentelemetry.exporter.otlp.proto.grpc") is not None:
        return  # the extra is installed here: the exporter is built instead
    with pytest.raises(ConfigError, match=r"agentrig-otel\[grpc\]") as caught:
        async with open_runtime(
            config(SCRIPT, otel={"exporter": "otlp-grpc"}), memory=memory(), environ={}
        ):
            pass
    assert "otel.exporter" in str(caught.value)


# ---- sub-agents: a delegated child's spans nest under the parent's call --------------------


async def test_a_delegated_childs_invoke_agent_span_is_a_child_of_the_delegation_call() -> None:
    from agentrig.testing import Reply, ScriptedCall, ScriptedProvider

    lead = ScriptedProvider(
        [
            Reply(tool_calls=(ScriptedCall("delegate_reviewer", {"prompt": "Review x"}),)),
            Reply(text="Reviewed."),
        ]
    )
    reviewer = ScriptedProvider(
        [Reply(tool_calls=(ScriptedCall("lookup", {"city": "Oslo"}),)), Reply(text="- fine")]
    )
    recorder = Recorder()
    tools = {"lookup": lookup}
    source = MemorySource()
    for name, tool in tools.items():
        source.add("tools", name, tool)
    async with open_runtime(
        {
            "providers": {"lead_llm": {"kind": "scripted"}, "reviewer_llm": {"kind": "scripted"}},
            "agents": {
                "lead": {"provider": "lead_llm", "model": "m-lead", "subagents": ["reviewer"]},
                "reviewer": {
                    "provider": "reviewer_llm",
                    "model": "m-review",
                    "description": "Reviews a change.",
                    "tools": ["lookup"],
                },
            },
        },
        memory=source,
        overrides=[("providers", "lead_llm", lead), ("providers", "reviewer_llm", reviewer)],
        plugins=[("otel-test", recorder.telemetry)],
        environ={},
    ) as rt:
        await rt.agent(AgentId("lead")).run("Fix x")
    spans = recorder.spans.get_finished_spans()
    by_name = {span.name: span for span in spans}
    parent = by_name["invoke_agent lead"]
    call = by_name["execute_tool delegate_reviewer"]
    child = by_name["invoke_agent reviewer"]
    assert parent_id(call) == parent.context.span_id
    # the child's run nests under the parent's delegation call, in the parent's trace
    assert parent_id(child) == call.context.span_id
    assert child.context.trace_id == parent.context.trace_id
    child_chats = [s for s in spans if s.name == "chat m-review"]
    assert len(child_chats) == 2
    assert [parent_id(s) for s in child_chats] == [child.context.span_id] * 2
    assert parent_id(by_name["execute_tool lookup"]) == child.context.span_id
    assert str(dict(call.attributes or {})["gen_ai.tool.description"]).endswith("Reviews a change.")
    assert dict(child.attributes or {})["gen_ai.request.model"] == "m-review"


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


async def test_a_sampled_out_trace_records_nothing_and_keeps_its_ids() -> None:
    """The application's sampler decides (the SDK's own ``ALWAYS_OFF`` here): no span reaches
    a processor, the run is as it would be, and session events still name the spans."""
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    spans = InMemorySpanExporter()
    provider = TracerProvider(sampler=ALWAYS_OFF)
    provider.add_span_processor(SimpleSpanProcessor(spans))
    telemetry = Telemetry(provider.get_tracer("agentrig"))
    async with open_runtime(
        config(SCRIPT), memory=memory(), plugins=[("otel-test", telemetry)], environ={}
    ) as rt:
        agent = rt.agent(AgentId("assistant"))
        result = await agent.run("Weather in Lisbon?")
        traced = [e.trace for e in agent.session.events if e.trace is not None]
    assert result.value == "Sunny in Lisbon."
    assert spans.get_finished_spans() == ()
    assert traced  # the ids of the (unrecorded) spans still name the events
    assert len({t.trace_id for t in traced}) == 1
