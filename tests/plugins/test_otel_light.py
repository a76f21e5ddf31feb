"""agentrig-otel's light spans: what an SDK tracer's configuration says still holds.

With an SDK tracer the plugin writes its own live spans (``agentrig_otel._light``) and hands
them to the tracer's span processors.  These tests pin what that must keep from the SDK:
the sampler's decision (once per trace), span processors seeing a span start, OpenTelemetry
code inside a tool call finding the tool's span current, the Span API on that span, and the
SDK's own spans when the tracer is configured in ways light spans cannot follow (a sampler
deciding per span, span limits).
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Sequence
from typing import Any

import pytest
from agentrig_otel import Telemetry, _light
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint
from opentelemetry.sdk.trace import (
    Event,
    ReadableSpan,
    SpanLimits,
    SpanProcessor,
    TracerProvider,
)
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_OFF,
    ALWAYS_ON,
    Decision,
    ParentBased,
    Sampler,
    SamplingResult,
)
from opentelemetry.trace import Link, SpanContext, SpanKind, StatusCode, TraceFlags, TraceState

import agentrig
from agentrig.ids import AgentId
from agentrig.kernel import MemorySource, open_runtime
from agentrig.plugin import Observation

pytestmark = pytest.mark.anyio

#: what the ``probe`` tool saw while it ran: the current span and the headers to send
SEEN: dict[str, Any] = {}


@agentrig.tool(risk="inspect")
def probe(city: str) -> str:
    """Look at the current OpenTelemetry context, as instrumented code would."""
    current = trace.get_current_span()
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    SEEN["span"] = current.get_span_context()
    SEEN["headers"] = carrier
    # a library's own span, started the ordinary way, inside the call
    with trace.get_tracer("library", tracer_provider=SEEN["provider"]).start_as_current_span(
        "library work"
    ):
        pass
    current.set_attribute("app.cities", [city, city.upper()])
    invalid: Any = None  # not an attribute value: dropped, as the SDK does
    current.set_attribute("app.skipped", invalid)
    current.add_link(SpanContext(1, 2, is_remote=True, trace_flags=TraceFlags(1)), {"k": "v"})
    current.record_exception(ValueError("a handled problem"))
    return f"sunny in {city}"


SCRIPT = [
    {"tool_calls": [{"name": "probe", "arguments": {"city": "Rome"}, "id": "call_p"}]},
    {"text": "Sunny."},
]


def config() -> dict[str, Any]:
    return {
        "providers": {"local": {"kind": "scripted", "options": {"script": SCRIPT}}},
        "agents": {"assistant": {"provider": "local", "model": "scripted-1", "tools": ["probe"]}},
    }


def memory() -> MemorySource:
    source = MemorySource()
    source.add("tools", "probe", probe)
    return source


async def run(
    provider: TracerProvider, inbound: str | None = None
) -> tuple[InMemorySpanExporter, list[Any]]:
    """One run traced by ``provider``'s tracer; returns its exported spans and the events."""
    spans = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    SEEN.clear()
    SEEN["provider"] = provider
    telemetry = Telemetry(provider.get_tracer("agentrig"))
    async with open_runtime(
        config(), memory=memory(), plugins=[("otel-test", telemetry)], environ={}
    ) as rt:
        assert rt.trace is not None
        scope = rt.trace.continue_from({"traceparent": inbound}) if inbound else None
        try:
            await rt.agent(AgentId("assistant")).run("Rome?")
        finally:
            if scope is not None:
                scope.close()
        events = list(rt.agent(AgentId("assistant")).session.events)
    return spans, events


def named(spans: InMemorySpanExporter, prefix: str) -> list[ReadableSpan]:
    return [s for s in spans.get_finished_spans() if s.name.startswith(prefix)]


def sampled(traceparent: str) -> bool:
    return bool(int(traceparent.rsplit("-", 1)[1], 16) & int(TraceFlags.SAMPLED))


def hex_ids(context: SpanContext) -> tuple[str, str]:
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


async def test_code_inside_a_tool_call_finds_the_tool_span_current() -> None:
    spans, _ = await run(TracerProvider())
    (tool,) = named(spans, "execute_tool ")
    (library,) = named(spans, "library work")
    assert SEEN["span"] == tool.context
    assert library.parent is not None
    assert library.parent.span_id == tool.context.span_id  # the library's span is its child
    trace_id, span_id = hex_ids(tool.context)
    assert (
        SEEN["headers"]["traceparent"]
        == f"00-{trace_id}-{span_id}-{int(tool.context.trace_flags):02x}"
    )
    assert sampled(SEEN["headers"]["traceparent"])


async def test_the_span_api_on_a_live_span_records_what_the_sdk_would() -> None:
    spans, _ = await run(TracerProvider())
    (tool,) = named(spans, "execute_tool ")
    attributes = dict(tool.attributes or {})
    assert attributes["app.cities"] == ("Rome", "ROME")  # a list becomes a tuple
    assert "app.skipped" not in attributes
    assert attributes["gen_ai.tool.name"] == "probe"
    (link,) = tool.links
    assert (link.context.span_id, dict(link.attributes or {})) == (2, {"k": "v"})
    (exception,) = [e for e in tool.events if e.name == "exception"]
    recorded = dict(exception.attributes or {})
    assert recorded["exception.type"] == "ValueError"
    assert recorded["exception.message"] == "a handled problem"
    assert tool.status.status_code is StatusCode.UNSET
    assert tool.resource is not None
    assert tool.instrumentation_scope is not None
    assert tool.instrumentation_scope.name == "agentrig"


async def test_a_sampler_that_drops_the_trace_exports_nothing_but_ids_still_flow() -> None:
    spans, events = await run(TracerProvider(sampler=ALWAYS_OFF))
    assert spans.get_finished_spans() == ()
    # as with the SDK's non-recording spans: the ids go out (unsampled) and name the events
    traceparent = SEEN["headers"]["traceparent"]
    assert not sampled(traceparent)
    assert all(e.trace is not None for e in events if e.type != "system/prompt")
    (result,) = [e for e in events if e.type == "tool/result"]
    assert result.trace is not None
    assert traceparent.split("-")[1:3] == [result.trace.trace_id, result.trace.span_id]


async def test_an_unsampled_inbound_trace_stays_unsampled() -> None:
    inbound = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
    spans, _ = await run(TracerProvider(), inbound)  # ParentBased(ALWAYS_ON), the default
    assert spans.get_finished_spans() == ()
    traceparent = SEEN["headers"]["traceparent"]
    assert traceparent.startswith("00-0af7651916cd43dd8448eb211c80319c-")
    assert not sampled(traceparent)


async def test_a_sampled_inbound_trace_is_continued() -> None:
    inbound = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    spans, _ = await run(TracerProvider(), inbound)
    (run_span,) = named(spans, "invoke_agent ")
    assert run_span.parent is not None
    assert run_span.parent.is_remote
    assert all(
        format(s.context.trace_id, "032x") == "0af7651916cd43dd8448eb211c80319c"
        for s in spans.get_finished_spans()
    )


class ChatOnly(Sampler):
    """Decides per span, by name: only model calls are kept."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def should_sample(
        self,
        parent_context: otel_context.Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Any = None,
        links: Sequence[Link] | None = None,
        trace_state: Any = None,
    ) -> SamplingResult:
        self.asked.append(name)
        keep = name.startswith("chat")
        return SamplingResult(Decision.RECORD_AND_SAMPLE if keep else Decision.DROP)

    def get_description(self) -> str:
        return "ChatOnly"


async def test_a_sampler_deciding_per_span_is_asked_for_every_span() -> None:
    sampler = ChatOnly()
    spans, _ = await run(TracerProvider(sampler=sampler))
    # asked when a span starts, before the observation names it after the model
    assert [s.name for s in spans.get_finished_spans()] == ["chat scripted-1"] * 2
    assert sorted(sampler.asked) == [
        "chat",
        "chat",
        "execute_tool",
        "invoke_agent assistant",
        "library work",
    ]


async def test_a_parent_based_sampler_with_other_local_delegates_is_asked_per_span() -> None:
    # children of a sampled local parent dropped: not what light spans would do, so the
    # plugin starts SDK spans and the sampler decides each one
    sampler = ParentBased(root=ALWAYS_ON, local_parent_sampled=ALWAYS_OFF)
    spans, _ = await run(TracerProvider(sampler=sampler))
    assert [s.name for s in spans.get_finished_spans()] == ["invoke_agent assistant"]


class Tagging(SpanProcessor):
    """Adds an attribute to every span as it starts (as vendor processors do)."""

    def on_start(self, span: Any, parent_context: otel_context.Context | None = None) -> None:
        span.set_attribute("app.tenant", "acme")


async def test_span_processors_see_each_span_start() -> None:
    provider = TracerProvider()
    provider.add_span_processor(Tagging())
    spans, _ = await run(provider)
    assert len(spans.get_finished_spans()) == 5
    for span in spans.get_finished_spans():
        assert dict(span.attributes or {})["app.tenant"] == "acme", span.name


async def test_span_limits_are_kept_by_sdk_spans() -> None:
    spans, _ = await run(TracerProvider(span_limits=SpanLimits(max_span_attributes=3)))
    (tool,) = named(spans, "execute_tool ")
    assert len(tool.attributes or {}) == 3
    assert tool.dropped_attributes > 0


async def test_the_sdks_own_span_metrics_still_count_every_span(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED: the SDK counts the spans it starts itself,
    # so the plugin starts SDK spans for it
    monkeypatch.setenv("OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED", "true")
    reader = InMemoryMetricReader()
    spans, _ = await run(TracerProvider(meter_provider=MeterProvider(metric_readers=[reader])))
    data = reader.get_metrics_data()
    assert data is not None
    (started,) = [
        metric
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "otel.sdk.span.started"
    ]
    counted = [p for p in started.data.data_points if isinstance(p, NumberDataPoint)]
    assert len(spans.get_finished_spans()) == 5
    assert sum(p.value for p in counted) == 5


#: attributes whose values differ from run to run (ids, timings)
_PER_RUN = {"gen_ai.conversation.id", "agentrig.run.id", "agentrig.time_to_first_chunk_ms"}


def _shape(spans: InMemorySpanExporter) -> list[tuple[Any, ...]]:
    """What a run's spans say, without their ids and times (which differ between runs)."""
    finished = spans.get_finished_spans()
    names = {s.context.span_id: s.name for s in finished}
    return sorted(
        (
            s.name,
            s.kind,
            names.get(s.parent.span_id) if s.parent is not None else None,
            sorted((k, v) for k, v in (s.attributes or {}).items() if k not in _PER_RUN),
            [e.name for e in s.events],
            s.status.status_code,
        )
        for s in finished
    )


async def test_setting_the_context_variable_directly_is_what_the_api_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the light path sets the API's context variable itself; with another runtime context
    # it goes through the API: both give the same spans, parents and current span
    assert _light._CURRENT is not None  # the API's default runtime context
    fast, _ = await run(TracerProvider())
    fast_seen = SEEN["span"]
    monkeypatch.setattr(_light, "_CURRENT", None)
    general, _ = await run(TracerProvider())
    assert _shape(fast) == _shape(general)
    assert len(_shape(fast)) == 5
    (tool,) = named(fast, "execute_tool ")
    assert fast_seen == tool.context


def test_an_open_scope_is_the_apis_current_span_and_closing_restores_the_context() -> None:
    light = _light.light_tracer(TracerProvider().get_tracer("agentrig"))
    assert light is not None
    before = otel_context.get_current()
    token = otel_context.attach(otel_context.set_value("app.key", "kept"))
    try:
        outer = light.open("outer", SpanKind.INTERNAL, None, "turn")
        inner = light.open("inner", SpanKind.CLIENT, None, "model_call")
        assert trace.get_current_span() is inner
        assert otel_context.get_value("app.key") == "kept"  # the rest of the context stays
        assert inner.parent == outer.get_span_context()
        inner.close()
        assert trace.get_current_span() is outer
        outer.close()
        assert trace.get_current_span() is trace.INVALID_SPAN
        assert otel_context.get_value("app.key") == "kept"
    finally:
        otel_context.detach(token)
    assert otel_context.get_current() == before


class Recording(SpanProcessor):
    """Records the calls a span processor gets, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def on_start(self, span: Any, parent_context: otel_context.Context | None = None) -> None:
        self.calls.append(("on_start", span.name))

    def _on_ending(self, span: Any) -> None:
        self.calls.append(("_on_ending", span.name))

    def on_end(self, span: ReadableSpan) -> None:
        self.calls.append(("on_end", span.name))


def _light_and_sdk_spans(provider: TracerProvider) -> tuple[Any, Any]:
    """A light span and an SDK span started by ``provider``'s tracer, children of the same
    parent (a light span, ended)."""
    tracer = provider.get_tracer("agentrig")
    light = _light.light_tracer(tracer)
    assert light is not None
    parent = light.start("parent", SpanKind.INTERNAL, trace.INVALID_SPAN)
    context = trace.set_span_in_context(parent)
    return (
        light.start("child", SpanKind.CLIENT, parent),
        tracer.start_span("child", kind=SpanKind.CLIENT, context=context),
    )


def test_processors_get_what_the_sdk_gives_them_also_when_added_while_a_span_is_open() -> None:
    # without a processor the light path hands a span to no one; one added while the span is
    # open sees its end (not its start), as the SDK's multi-processor does
    for added_before in (True, False):
        provider = TracerProvider()
        before = Recording()
        if added_before:
            provider.add_span_processor(before)
        light, sdk = _light_and_sdk_spans(provider)
        after = Recording()
        provider.add_span_processor(after)
        light.end()
        sdk.end()
        expected_after = [("_on_ending", "child"), ("on_end", "child")] * 2
        assert after.calls == expected_after
        if added_before:
            assert before.calls[1:] == [
                ("on_start", "child"),
                ("on_start", "child"),
                *expected_after,
            ]


def test_a_span_ended_without_processors_reads_as_one_handed_to_them() -> None:
    bare, handed = TracerProvider(), TracerProvider()
    handed.add_span_processor(Recording())
    read = []
    for provider in (bare, handed):
        light, sdk = _light_and_sdk_spans(provider)
        light.end()
        sdk.end()
        assert light.context == light.get_span_context()
        assert light.parent is not None
        assert light.parent == sdk.parent
        assert light.context.trace_id == sdk.context.trace_id
        shown = json.loads(light.to_json())
        assert shown["context"] == {
            "trace_id": f"0x{light.context.trace_id:032x}",
            "span_id": f"0x{light.context.span_id:016x}",
            "trace_state": "[]",
        }
        assert shown["parent_id"] == f"0x{light.parent.span_id:016x}"
        sdk_shown = json.loads(sdk.to_json())
        assert shown.keys() == sdk_shown.keys()
        read.append(
            {
                k: v
                for k, v in shown.items()
                if k not in ("context", "parent_id", "start_time", "end_time")
            }
        )
    assert read[0] == read[1]


def test_an_event_made_without_its_init_is_the_sdks_event() -> None:
    attributes = {"agentrig.permission.outcome": "allow"}
    made, built = _light.event("e", attributes, 7), Event("e", attributes, 7)
    assert type(made) is Event
    assert vars(made) == vars(built)
    assert (made.name, made.attributes, made.timestamp) == ("e", attributes, 7)


def _model_call(**changes: Any) -> Observation:
    data: dict[str, Any] = {
        "session_id": "ses_1",
        "agent_name": "w",
        "run_id": "run_1",
        "turn": 1,
        "step": 1,
        "round": 1,
        "attempt": 1,
        "provider": "local",
        "provider_kind": "scripted",
        "model": "m-1",
        "response_model": None,
        "outcome": "success",
        "stop_reason": "tool_calls",
        "usage": None,
        "started_at": 1.0,
        "ended_at": 2.0,
        "duration_ms": 1000.0,
        "time_to_first_chunk_ms": 0.5,
        "error_type": None,
        "error_code": None,
    }
    data.update(changes)
    return Observation("model_call", AgentId("a1"), data)


def _chat_spans(observations: Sequence[Observation], fresh: bool) -> list[Any]:
    """The spans of ``observations``, each in its scope: all seen by one plugin (its
    attributes built once per agent, session and model) or each by a new one."""
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    telemetry = Telemetry(provider.get_tracer("agentrig"))
    for observation in observations:
        if fresh:
            telemetry = Telemetry(provider.get_tracer("agentrig"))
        scope = telemetry.open("model_call", "a1")
        telemetry.observe(observation)
        scope.close()
    return [
        (s.name, s.kind, dict(s.attributes or {}), s.status.status_code, s.status.description)
        for s in spans.get_finished_spans()
    ]


def test_model_call_attributes_built_once_are_each_calls_own() -> None:
    observations = [
        _model_call(),
        _model_call(attempt=2, outcome="failure", error_type="Boom", error_code="p.x"),
        _model_call(model="m-2", response_model="m-2-0613"),
        _model_call(session_id="ses_2", stop_reason=None),
        _model_call(),
    ]
    shared = _chat_spans(observations, fresh=False)
    assert shared == _chat_spans(observations, fresh=True)
    names = [name for name, *_ in shared]
    assert names == ["chat m-1", "chat m-1", "chat m-2", "chat m-1", "chat m-1"]
    assert shared[1][2]["agentrig.attempt"] == 2
    assert shared[1][2]["error.type"] == "Boom"
    assert "error.type" not in shared[4][2]  # not left behind by the failed call
    assert "agentrig.attempt" not in shared[4][2]
    assert shared[3][2]["gen_ai.conversation.id"] == "ses_2"


def _observed_spans(provider: TracerProvider) -> tuple[Telemetry, list[Any]]:
    """A turn with a failing model call, a refused tool call (its permission decision seen
    before the turn) and an interrupted end, observed by a plugin on ``provider``:
    the spans the plugin opened (read after their end)."""
    telemetry = Telemetry(provider.get_tracer("agentrig"))
    ids = {"session_id": "ses_1", "agent_name": "w", "run_id": "run_1", "turn": 1, "step": 1}
    telemetry.observe(  # outside any scope of ours: kept for the tool call's span
        Observation(
            "permission",
            AgentId("a1"),
            {"session_id": "ses_1", "tool": "t", "call_id": "c1", "allowed": False, "reason": "no"},
        )
    )
    opened = [telemetry.open("turn", "a1")]
    opened.append(telemetry.open("model_call", "a1"))
    telemetry.observe(
        _model_call(outcome="failure", error_type="Boom", error_code="p.x", stop_reason=None)
    )
    opened[-1].close()
    opened.append(telemetry.open("tool_call", "a1"))
    tool: dict[str, Any] = {"call_id": "c1", "invocation_id": None, "tool": "t", "status": "error"}
    tool.update(executed=False, started_at=1.5, duration_ms=0.0, error_type="ToolRefusedError")
    telemetry.observe(Observation("tool_call", AgentId("a1"), {**ids, **tool}))
    opened[-1].close()
    turn: dict[str, Any] = {"trigger": "prompt", "reason": "interrupted", "rounds": 1}
    turn.update(tool_calls=1, model="m-1", usage=None, started_at=1.0, duration_ms=2.0)
    telemetry.observe(Observation("turn", AgentId("a1"), {**ids, **turn}))
    opened[0].close()
    return telemetry, opened


def _read(span: Any) -> tuple[Any, ...]:
    shown = json.loads(span.to_json())
    for key in ("context", "parent_id", "start_time", "end_time"):
        del shown[key]
    for event in shown["events"]:
        del event["timestamp"]
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    status = (span.status.status_code, span.status.description)
    return span.name, dict(span.attributes or {}), events, status, shown


def test_spans_no_processor_takes_read_as_the_ones_processors_get() -> None:
    # without a span processor the observation's writes wait until the span is read: what
    # is read then is what a processor gets when there is one
    taken = InMemorySpanExporter()
    handed = TracerProvider()
    handed.add_span_processor(SimpleSpanProcessor(taken))
    _, spans = _observed_spans(handed)
    kept, bare = _observed_spans(TracerProvider())
    ended = time.time_ns()
    assert all(span._deferred is not None for span in bare)  # nothing written yet
    assert not kept._by_call  # the events kept for the tool span were taken at its end
    exported = {s.name: s for s in taken.get_finished_spans()}
    assert [_read(s) for s in bare] == [_read(s) for s in spans]
    assert [_read(s)[:4] for s in bare] == [_read(exported[s.name])[:4] for s in bare]
    names = [s.name for s in bare]
    assert names == ["invoke_agent w", "chat m-1", "execute_tool t"]
    tool = _read(bare[2])
    assert [name for name, _ in tool[2]] == ["agentrig.permission", "agentrig.tool.not_executed"]
    assert tool[3] == (StatusCode.ERROR, "ToolRefusedError")
    assert _read(bare[1])[1]["error.type"] == "Boom"
    assert _read(bare[0])[2] == [("agentrig.run.interrupted", {})]
    # written when read, but timed when the turn's observation ended the span
    assert bare[0].events[0].timestamp <= ended


def test_a_span_context_built_without_its_constructor_is_the_constructors() -> None:
    state = TraceState([("vendor", "v1")])
    cases = [
        (1, 1, 0, None),
        ((1 << 128) - 1, (1 << 64) - 1, 1, state),
        (0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7, 3, TraceState()),
        (0, 5, 1, None),  # invalid ids: through the constructor
        (5, 1 << 64, 1, None),
    ]
    light = _light.light_tracer(TracerProvider().get_tracer("agentrig"))
    assert light is not None
    for trace_id, span_id, flags, trace_state in cases:
        span = light.start("s", SpanKind.INTERNAL, trace.INVALID_SPAN)
        span.trace_id, span.span_id = trace_id, span_id  # before its context is first read
        span._flags, span._state = flags, trace_state
        made = span.context
        built = SpanContext(trace_id, span_id, False, TraceFlags(flags), trace_state)
        assert type(made) is SpanContext
        assert made == built
        assert [type(field) for field in made] == [type(field) for field in built]
        assert made.trace_state is built.trace_state  # the default's own object when None
        assert made.is_valid is built.is_valid
        assert made.trace_flags.sampled is built.trace_flags.sampled


class ReadsContext(SpanProcessor):
    """Reads the span's context as a batch span processor does (twice in ``on_end``)."""

    def __init__(self) -> None:
        self.read: list[SpanContext] = []

    def _on_ending(self, span: Any) -> None:
        self.read.append(span.context)

    def on_end(self, span: ReadableSpan) -> None:
        self.read += [span.context, span.context]


def test_a_live_spans_context_is_one_object_for_its_processors_and_not_kept() -> None:
    provider = TracerProvider()
    first, second = ReadsContext(), ReadsContext()
    for processor in (first, second):
        provider.add_span_processor(processor)
    light = _light.light_tracer(provider.get_tracer("agentrig"))
    assert light is not None
    span = light.start("s", SpanKind.INTERNAL, trace.INVALID_SPAN)
    flags = TraceFlags(span._flags)
    built = SpanContext(span.trace_id, span.span_id, False, flags, None)
    assert span.context == built
    span.end()
    read = first.read + second.read
    assert len(read) == 6
    assert all(context is read[0] for context in read)  # one object at the end ...
    assert read[0] == built
    assert span._set_context is None  # ... not kept by the span waiting for export
    assert span.context == span.get_span_context() == span._context == built
    replaced = SpanContext(7, 8, False, TraceFlags(1))
    span._context = replaced  # what ReadableSpan's own code may set
    assert span.context is replaced
    assert span.get_span_context() is replaced


def test_a_closed_scope_keeps_no_context_token() -> None:
    light = _light.light_tracer(TracerProvider().get_tracer("agentrig"))
    assert light is not None
    span = light.open("s", SpanKind.INTERNAL, None, "turn")
    assert trace.get_current_span() is span
    span.close()
    assert span._token is None  # the token (and the context it restores) is not retained
    assert trace.get_current_span() is trace.INVALID_SPAN
    span.close()  # closing again is harmless
    assert trace.get_current_span() is trace.INVALID_SPAN


def test_chat_spans_waiting_for_export_share_their_finish_reasons() -> None:
    taken = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(taken))
    telemetry = Telemetry(provider.get_tracer("agentrig"))
    for reason in ("tool_calls", "tool_calls", "end", ["odd"]):
        scope = telemetry.open("model_call", "a1")
        telemetry.observe(_model_call(stop_reason=reason))
        scope.close()
    spans = taken.get_finished_spans()
    reasons = [(s.attributes or {})["gen_ai.response.finish_reasons"] for s in spans]
    assert reasons == [("tool_calls",), ("tool_calls",), ("end",), ("['odd']",)]
    assert reasons[0] is reasons[1]  # one tuple per reason
    gc.collect()  # the shared tuple holds only strings: the collector stops tracking it ...
    scope = telemetry.open("model_call", "a1")
    telemetry.observe(_model_call(stop_reason="end"))
    scope.close()
    last: Any = taken.get_finished_spans()[-1]
    assert last.attributes["gen_ai.response.finish_reasons"] is reasons[2]
    assert not gc.is_tracked(last._values)  # ... and a span's attributes are left untracked


def _tool_spans(provider: TracerProvider, tools: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The spans of tool calls of ``tools`` observed in their scopes (each with a permission
    decision; the odd ones refused) and one without a scope, as an exporter gets them."""
    taken = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(taken))
    telemetry = Telemetry(provider.get_tracer("agentrig"))
    ids = {"session_id": "ses_1", "agent_name": "w", "run_id": "run_1", "turn": 1, "step": 1}
    for n, tool in enumerate(tools):
        call: dict[str, Any] = {**ids, "call_id": f"c{n}", "invocation_id": None, "tool": tool}
        refused = n % 2 == 1
        call.update(status="error" if refused else "ok", executed=not refused, started_at=1.5)
        call.update(duration_ms=2.0, error_type="ToolRefusedError" if refused else None)
        decision = {**ids, "tool": tool, "call_id": f"c{n}", "allowed": not refused}
        scope = telemetry.open("tool_call", "a1") if n < len(tools) - 1 else None
        telemetry.observe(Observation("permission", AgentId("a1"), decision))
        telemetry.observe(Observation("tool_call", AgentId("a1"), call))
        if scope is not None:
            scope.close()
    return [
        (
            s.name,
            s.kind,
            list((s.attributes or {}).items()),  # in order
            [(e.name, dict(e.attributes or {})) for e in s.events],
            s.status.status_code,
            s.status.description,
        )
        for s in taken.get_finished_spans()
    ]


def test_tool_span_attributes_built_once_per_tool_are_what_sdk_spans_get() -> None:
    tools = ["noop", "noop", "grep", ["unhashable"], "noop", "grep", "noop"]
    light = _tool_spans(TracerProvider(), tools)
    # span limits the light path cannot follow: the plugin starts the SDK's spans
    sdk = _tool_spans(TracerProvider(span_limits=SpanLimits(max_span_attribute_length=99)), tools)
    assert light == sdk
    assert [name for name, *_ in light] == [f"execute_tool {tool}" for tool in tools]
    assert light[3][2][:2] == [
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", "['unhashable']"),  # a tool's name is a string
    ]
    assert light[1][2][2:] == [
        ("gen_ai.tool.call.id", "c1"),
        ("agentrig.tool.status", "error"),
        ("error.type", "ToolRefusedError"),
    ]
