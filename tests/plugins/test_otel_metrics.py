"""agentrig-otel's pre-aggregated histograms export what the SDK's own histograms would.

The same measurements (values on bucket edges, several attribute sets, inside a sampled span,
an unsampled one or none) go (a) through SDK histograms and (b) through the plugin's
pre-aggregated path, each read by an ``InMemoryMetricReader``; the collected data must be
equal but for the timestamps (whose order is checked on its own).  Then the pipeline the
plugin builds from ``[otel]``: semconv bucket boundaries, trace-based exemplars naming the
model call's span, nothing measured without a reader, the SDK's instruments where the
reader wants another aggregation.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
from agentrig_otel import OtelConfig, Telemetry, build_pipeline, exporting_pipeline
from agentrig_otel._metrics import (
    DURATION_BOUNDARIES,
    TOKEN_BOUNDARIES,
    Instruments,
    pre_aggregate,
    series_key,
)
from opentelemetry import trace
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.metrics import (
    AlwaysOffExemplarFilter,
    AlwaysOnExemplarFilter,
    ExemplarFilter,
    Histogram,
    MeterProvider,
    TraceBasedExemplarFilter,
)
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    ExponentialHistogram,
    InMemoryMetricReader,
    MetricExporter,
    MetricExportResult,
    MetricsData,
)
from opentelemetry.sdk.metrics.view import (
    ExplicitBucketHistogramAggregation,
    ExponentialBucketHistogramAggregation,
    View,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from test_otel import SCRIPT, Collector, config, memory, receiver

from agentrig.errors import ConfigError
from agentrig.ids import AgentId
from agentrig.kernel import open_runtime

__all__ = ["receiver"]  # the loopback OTLP receiver fixture, shared with test_otel

RESOURCE = Resource.create({"service.name": "equivalence"})

SAMPLED = SpanContext(0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331, False, TraceFlags(1))
OTHER = SpanContext(0x1AF7651916CD43DD8448EB211C80319C, 0xC7AD6B7169203331, False, TraceFlags(1))
UNSAMPLED = SpanContext(
    0x2AF7651916CD43DD8448EB211C80319C, 0xD7AD6B7169203331, False, TraceFlags(0)
)

COMMON = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai"}
ATTRIBUTES: list[dict[str, Any]] = [
    {**COMMON, "gen_ai.request.model": "m1", "gen_ai.token.type": "input"},
    {**COMMON, "gen_ai.request.model": "m1", "gen_ai.token.type": "output"},
    {**COMMON, "gen_ai.request.model": "m2", "error.type": "timeout"},
    {"gen_ai.tool.name": "lookup", "agentrig.tool.status": "ok"},
    {"gen_ai.tool.name": "lookup", "agentrig.tool.status": "error"},
]

#: (instrument, value, attribute set, current span): edges of both boundary sets, 0, above the
#: last bucket, sums whose float order matters, a bucket offered in and then outside a span
Step = tuple[str, float, int, SpanContext | None]
FIRST: list[Step] = [
    ("tokens", 1, 0, SAMPLED),
    ("tokens", 4, 1, SAMPLED),
    ("tokens", 0, 0, None),
    ("tokens", 5, 0, UNSAMPLED),
    ("tokens", 67108864, 1, OTHER),
    ("tokens", 67108865, 1, None),
    ("duration", 0.01, 2, SAMPLED),
    ("duration", 0.1, 2, UNSAMPLED),
    ("duration", 0.2, 2, None),
    ("duration", 0.3, 2, OTHER),
    ("duration", 81.92, 2, SAMPLED),
    ("tool_duration", 0.02, 3, SAMPLED),
    ("tool_duration", 0.015, 3, None),  # the same bucket, outside a span: ids kept (SDK)
    ("tokens", -1, 0, SAMPLED),  # dropped by both
    ("duration", math.nan, 2, SAMPLED),  # dropped by both
]
SECOND: list[Step] = [
    ("tool_duration", 0.7, 4, UNSAMPLED),  # a new attribute set first
    ("tokens", 16, 1, None),
    ("tokens", 17, 0, SAMPLED),
    ("duration", 0.1, 2, SAMPLED),  # (0.1 + 0.3) + sum1 != (sum1 + 0.1) + 0.3
    ("duration", 0.3, 2, OTHER),
    ("tool_duration", 0.02, 3, OTHER),
]

FILTERS: dict[str, type[ExemplarFilter]] = {
    "trace_based": TraceBasedExemplarFilter,
    "always_on": AlwaysOnExemplarFilter,
    "always_off": AlwaysOffExemplarFilter,
}


def _reader(temporality: AggregationTemporality, **options: Any) -> InMemoryMetricReader:
    return InMemoryMetricReader(preferred_temporality={Histogram: temporality}, **options)


def _sdk(reader: InMemoryMetricReader, exemplars: str) -> Instruments:
    provider = MeterProvider(
        [reader], RESOURCE, exemplar_filter=FILTERS[exemplars](), shutdown_on_exit=False
    )
    return Instruments(provider.get_meter("agentrig"))


def _aggregated(reader: InMemoryMetricReader, exemplars: str) -> Instruments:
    provider = MeterProvider(
        [reader], RESOURCE, exemplar_filter=FILTERS[exemplars](), shutdown_on_exit=False
    )
    aggregator = pre_aggregate(provider, provider.get_meter("agentrig"), reader)
    assert aggregator is not None
    return Instruments(aggregator)


@contextmanager
def _current(span: SpanContext | None) -> Iterator[None]:
    if span is None:
        yield
        return
    with trace.use_span(NonRecordingSpan(span)):
        yield


def _play(instruments: Instruments, steps: Sequence[Step]) -> None:
    for name, value, index, span in steps:
        attributes = ATTRIBUTES[index]
        with _current(span):
            histogram = getattr(instruments, name)
            histogram.record(value, series_key(attributes), attributes, instruments.sample())


def _untimed(data: MetricsData | None) -> Any:
    """``data`` with every timestamp zeroed (compared on their own)."""
    if data is None:
        return None
    out = []
    for resource in data.resource_metrics:
        scopes = []
        for scope in resource.scope_metrics:
            metrics = []
            for metric in scope.metrics:
                points = [
                    replace(
                        p,
                        start_time_unix_nano=0,
                        time_unix_nano=0,
                        exemplars=[replace(e, time_unix_nano=0) for e in p.exemplars],
                    )
                    for p in metric.data.data_points
                ]
                histogram: Any = metric.data
                kind = (metric.name, metric.description, metric.unit, type(histogram))
                metrics.append((*kind, histogram.aggregation_temporality, points))
            scopes.append((scope.scope, scope.schema_url, metrics))
        out.append((resource.resource, resource.schema_url, scopes))
    return out


def _times(data: MetricsData | None) -> dict[tuple[str, Any], tuple[int, int, list[int]]]:
    """(metric, attributes) -> (start, time, exemplar times)."""
    found = {}
    for resource in data.resource_metrics if data is not None else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for p in metric.data.data_points:
                    key = (metric.name, series_key(p.attributes or {}))
                    exemplars = [e.time_unix_nano for e in p.exemplars]
                    found[key] = (p.start_time_unix_nano, p.time_unix_nano, exemplars)
    return found


@pytest.mark.parametrize("exemplars", sorted(FILTERS))
@pytest.mark.parametrize(
    "temporality", [AggregationTemporality.CUMULATIVE, AggregationTemporality.DELTA]
)
def test_pre_aggregated_points_equal_the_sdks(
    temporality: AggregationTemporality, exemplars: str
) -> None:
    sdk_reader, ours_reader = _reader(temporality), _reader(temporality)
    sdk, ours = _sdk(sdk_reader, exemplars), _aggregated(ours_reader, exemplars)
    collections: list[tuple[Any, Any]] = []
    for steps in (FIRST, SECOND, []):  # the last collection follows no measurement at all
        _play(sdk, steps)
        _play(ours, steps)
        collections.append((sdk_reader.get_metrics_data(), ours_reader.get_metrics_data()))
    for expected, got in collections:
        assert _untimed(got) == _untimed(expected)
    assert collections[0][1] is not None
    (first, _), _, (third, _) = collections
    points = _untimed(first)[0][2][0][2]
    # the edges: 1 and 4 are the first buckets' upper bounds (inclusive), 0 the first bucket
    tokens = {p.attributes["gen_ai.token.type"]: p for p in points[0][5]}
    assert tokens["input"].bucket_counts[:3] == (2, 0, 1)
    assert tokens["output"].bucket_counts[1] == 1
    assert tokens["output"].bucket_counts[-2:] == (1, 1)
    if exemplars == "always_off":
        assert not any(p.exemplars for metric in points for p in metric[5])
    if temporality is AggregationTemporality.DELTA:
        assert third is None  # nothing new: nothing to export
    # timestamps: each point's start precedes its time and its exemplars lie in between
    for _, got in collections:
        for start, end, exemplar_times in _times(got).values():
            assert start <= end
            assert all(start <= t <= end for t in exemplar_times)
    times = [_times(got) for _, got in collections]
    for key, (start, _, _) in times[1].items():
        if temporality is AggregationTemporality.CUMULATIVE and key in times[0]:
            assert start == times[0][key][0]  # cumulative: the same start all along
        if temporality is AggregationTemporality.DELTA:
            assert start == next(iter(times[0].values()))[1]  # since the last collection


@pytest.mark.parametrize(
    "temporality", [AggregationTemporality.CUMULATIVE, AggregationTemporality.DELTA]
)
def test_attribute_sets_beyond_the_cardinality_limit_overflow_as_in_the_sdk(
    temporality: AggregationTemporality,
) -> None:
    limits = {Histogram: 2}
    sdk_reader = _reader(temporality, cardinality_limits=limits)
    ours_reader = _reader(temporality, cardinality_limits=limits)
    sdk, ours = _sdk(sdk_reader, "always_on"), _aggregated(ours_reader, "always_on")
    steps: list[Step] = [("tool_duration", 0.05 * i, i % 5, SAMPLED) for i in range(12)]
    for _ in range(2):
        _play(sdk, steps)
        _play(ours, steps)
        expected, got = sdk_reader.get_metrics_data(), ours_reader.get_metrics_data()
        assert _untimed(got) == _untimed(expected)
    assert got is not None
    (metric,) = got.resource_metrics[0].scope_metrics[0].metrics
    assert {"otel.metric.overflow": True} in [p.attributes for p in metric.data.data_points]


def test_the_sdk_instruments_get_the_semconv_boundaries() -> None:
    reader = _reader(AggregationTemporality.CUMULATIVE)
    sdk = _sdk(reader, "trace_based")
    _play(sdk, FIRST)
    data = reader.get_metrics_data()
    assert data is not None
    metrics: list[Any] = list(data.resource_metrics[0].scope_metrics[0].metrics)
    bounds = {m.name: tuple(m.data.data_points[0].explicit_bounds) for m in metrics}
    assert bounds == {
        "gen_ai.client.token.usage": TOKEN_BOUNDARIES,
        "gen_ai.client.operation.duration": DURATION_BOUNDARIES,
        "agentrig.tool.duration": DURATION_BOUNDARIES,
    }
    assert TOKEN_BOUNDARIES[:3] == (1, 4, 16)
    assert DURATION_BOUNDARIES[-1] == 81.92


def _provider(reader: InMemoryMetricReader, **options: Any) -> MeterProvider:
    return MeterProvider([reader], RESOURCE, shutdown_on_exit=False, **options)


class _OwnFilter(ExemplarFilter):
    def should_sample(self, *args: Any) -> bool:
        return True


@pytest.mark.parametrize(
    ("reader_options", "provider_options"),
    [
        ({"preferred_aggregation": {Histogram: ExponentialBucketHistogramAggregation()}}, {}),
        ({"preferred_aggregation": {Histogram: ExplicitBucketHistogramAggregation((1, 2))}}, {}),
        ({}, {"views": [View(instrument_name="gen_ai.*")]}),
        ({}, {"exemplar_filter": _OwnFilter()}),
    ],
    ids=["exponential", "own-boundaries", "views", "own-exemplar-filter"],
)
def test_what_cannot_be_matched_exactly_keeps_the_sdk_instruments(
    reader_options: dict[str, Any], provider_options: dict[str, Any]
) -> None:
    reader = InMemoryMetricReader(**reader_options)
    provider = _provider(reader, **provider_options)
    assert pre_aggregate(provider, provider.get_meter("agentrig"), reader) is None


def test_the_otlp_exporters_default_aggregation_is_pre_aggregated() -> None:
    # what the OTLP exporters prefer by default: explicit buckets, the advisory boundaries
    reader = InMemoryMetricReader(
        preferred_aggregation={Histogram: ExplicitBucketHistogramAggregation()}
    )
    provider = _provider(reader)
    assert pre_aggregate(provider, provider.get_meter("agentrig"), reader) is not None


def test_a_reader_not_registered_with_a_provider_is_not_pre_aggregated() -> None:
    reader = InMemoryMetricReader()
    provider = _provider(InMemoryMetricReader())
    assert pre_aggregate(provider, provider.get_meter("agentrig"), reader) is None


def test_points_of_the_sdks_own_instruments_are_kept_beside_the_pre_aggregated_ones() -> None:
    sdk_reader = _reader(AggregationTemporality.CUMULATIVE)
    ours_reader = _reader(AggregationTemporality.CUMULATIVE)
    for reader, aggregate in ((sdk_reader, False), (ours_reader, True)):
        provider = MeterProvider([reader], RESOURCE, shutdown_on_exit=False)
        meter = provider.get_meter("agentrig")
        aggregator = pre_aggregate(provider, meter, reader) if aggregate else None
        instruments = Instruments(aggregator or meter)
        meter.create_counter("mine").add(3, {"k": "v"})  # on the same scope
        provider.get_meter("elsewhere").create_counter("theirs").add(1)
        _play(instruments, FIRST)
    expected, got = sdk_reader.get_metrics_data(), ours_reader.get_metrics_data()
    assert got is not None

    def by_scope(data: Any) -> dict[str, dict[str, Any]]:
        ((_, _, scopes),) = _untimed(data)
        return {scope.name: {m[0]: m for m in metrics} for scope, _, metrics in scopes}

    assert by_scope(got) == by_scope(expected)
    assert set(by_scope(got)["agentrig"]) == {
        "mine",
        "gen_ai.client.token.usage",
        "gen_ai.client.operation.duration",
        "agentrig.tool.duration",
    }


def test_a_histogram_asked_for_again_is_the_same_one() -> None:
    reader = InMemoryMetricReader()
    provider = _provider(reader)
    aggregator = pre_aggregate(provider, provider.get_meter("agentrig"), reader)
    assert aggregator is not None
    first, second = Instruments(aggregator), Instruments(aggregator)
    assert first.tokens is second.tokens  # two Telemetry on one pipeline: one metric stream
    assert first.duration is not first.tool_duration


def test_a_disabled_sdk_measures_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    reader = InMemoryMetricReader()
    provider = _provider(reader)
    assert pre_aggregate(provider, provider.get_meter("agentrig"), reader) is None


class Keep(MetricExporter):
    """A metric exporter that keeps what it gets."""

    def __init__(self, **preferences: Any) -> None:
        super().__init__(**preferences)
        self.exported: list[MetricsData] = []

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        self.exported.append(metrics_data)
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        return None


def _exported(exporter: Keep) -> dict[str, Any]:
    return {
        metric.name: metric.data
        for data in exporter.exported
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }


async def _run_with(pipeline: Any, *, flush: bool = False) -> None:
    """One run of SCRIPT recorded into ``pipeline``, then flushed (or shut down)."""
    telemetry = Telemetry(pipeline.tracer, pipeline.metrics)
    async with open_runtime(
        config(SCRIPT), memory=memory(), plugins=[("otel-test", telemetry)], environ={}
    ) as rt:
        await rt.agent(AgentId("assistant")).run("Weather in Lisbon?")
    if flush:
        pipeline.meter_provider.force_flush()
    else:
        pipeline.shutdown()


@pytest.mark.anyio
async def test_shutdown_exports_the_last_pre_aggregated_points() -> None:
    exporter = Keep()
    pipeline = exporting_pipeline(None, exporter)
    assert pipeline.aggregator is not None
    assert pipeline.metrics is pipeline.aggregator
    await _run_with(pipeline, flush=True)
    assert len(exporter.exported) == 1  # force_flush exported the points so far
    pipeline.shutdown()
    # cumulative: the reader's last collection, at shutdown, exports them again
    data = exporter.exported[-1]
    (resource,) = data.resource_metrics
    assert pipeline.meter_provider is not None
    assert resource.resource == pipeline.meter_provider._sdk_config.resource
    (scope,) = resource.scope_metrics
    assert scope.scope.name == "agentrig"
    exported = _exported(exporter)
    tokens = {
        p.attributes["gen_ai.token.type"]: p.sum
        for p in exported["gen_ai.client.token.usage"].data_points
    }
    assert tokens == {"input": 250, "output": 30}
    assert exported["gen_ai.client.operation.duration"].data_points[0].count == 2
    tools = {
        (p.attributes["gen_ai.tool.name"], p.attributes["agentrig.tool.status"]): p.count
        for p in exported["agentrig.tool.duration"].data_points
    }
    assert tools == {("lookup", "ok"): 1, ("explode", "error"): 1}


@pytest.mark.anyio
async def test_an_exporter_preferring_exponential_histograms_gets_them_from_the_sdk() -> None:
    exporter = Keep(preferred_aggregation={Histogram: ExponentialBucketHistogramAggregation()})
    pipeline = exporting_pipeline(None, exporter)
    assert pipeline.aggregator is None
    assert pipeline.metrics is pipeline.meter
    await _run_with(pipeline)
    exported = _exported(exporter)
    assert isinstance(exported["gen_ai.client.token.usage"], ExponentialHistogram)
    assert exported["gen_ai.client.operation.duration"].data_points[0].count == 2


def test_without_a_reader_nothing_is_measured() -> None:
    pipeline = build_pipeline(OtelConfig(exporter="none"))
    assert pipeline.meter is None
    assert pipeline.meter_provider is None
    assert pipeline.metrics is None
    assert exporting_pipeline(None, None).metrics is None


@pytest.mark.anyio
@pytest.mark.parametrize("metrics", [True, False])
async def test_metrics_with_exporter_none_is_refused(metrics: bool) -> None:
    with pytest.raises(ConfigError) as info:
        async with open_runtime({"otel": {"exporter": "none", "metrics": metrics}}, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.location() == "otel"
    assert "metrics would have no effect with exporter 'none'" in issue.message
    assert "no metric is measured" in issue.message


def test_the_plugins_console_pipeline_is_pre_aggregated() -> None:
    pipeline = build_pipeline(OtelConfig(exporter="console"))
    try:
        assert pipeline.aggregator is not None
    finally:
        pipeline.shutdown()


@pytest.mark.anyio
async def test_the_configured_plugin_exports_semconv_histograms_with_exemplars(
    receiver: Collector,
) -> None:
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
    otel = {"exporter": "otlp-http", "endpoint": endpoint}
    async with open_runtime(config(SCRIPT, otel=otel), memory=memory(), environ={}) as rt:
        await rt.agent(AgentId("assistant")).run("Weather in Lisbon?")
    chat_spans: set[bytes] = set()
    metrics: dict[str, Any] = {}
    for path, body in receiver.received:
        if path == "/v1/traces":
            traces = ExportTraceServiceRequest()
            traces.ParseFromString(body)
            for resource_spans in traces.resource_spans:
                for scope_spans in resource_spans.scope_spans:
                    chat_spans.update(
                        s.span_id for s in scope_spans.spans if s.name.startswith("chat ")
                    )
        elif path == "/v1/metrics":
            request = ExportMetricsServiceRequest()
            request.ParseFromString(body)
            for resource_metrics in request.resource_metrics:
                for scope_metrics in resource_metrics.scope_metrics:
                    assert scope_metrics.scope.name == "agentrig"
                    metrics.update({m.name: m for m in scope_metrics.metrics})
    assert set(metrics) == {
        "gen_ai.client.token.usage",
        "gen_ai.client.operation.duration",
        "agentrig.tool.duration",
    }
    tokens = metrics["gen_ai.client.token.usage"].histogram
    assert [tuple(p.explicit_bounds) for p in tokens.data_points] == [TOKEN_BOUNDARIES] * 2
    assert sorted(p.sum for p in tokens.data_points) == [30, 250]
    duration = metrics["gen_ai.client.operation.duration"].histogram
    (point,) = duration.data_points
    assert tuple(point.explicit_bounds) == DURATION_BOUNDARIES
    assert point.count == 2
    # trace-based exemplars: the last measurement of each bucket, recorded in a chat span
    assert point.exemplars
    assert {e.span_id for e in point.exemplars} <= chat_spans
    tools = metrics["agentrig.tool.duration"].histogram
    assert {tuple(p.explicit_bounds) for p in tools.data_points} == {DURATION_BOUNDARIES}


@pytest.mark.anyio
async def test_the_otlp_exporters_delta_preference_is_honoured(
    receiver: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta")
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
    pipeline = build_pipeline(OtelConfig(exporter="otlp-http", endpoint=endpoint))
    assert pipeline.aggregator is not None
    assert pipeline.aggregator.temporality is AggregationTemporality.DELTA
    await _run_with(pipeline)
    temporalities: set[int] = set()
    for path, body in receiver.received:
        if path == "/v1/metrics":
            request = ExportMetricsServiceRequest()
            request.ParseFromString(body)
            for resource_metrics in request.resource_metrics:
                for scope_metrics in resource_metrics.scope_metrics:
                    temporalities.update(
                        m.histogram.aggregation_temporality for m in scope_metrics.metrics
                    )
    assert temporalities == {AggregationTemporality.DELTA.value}
