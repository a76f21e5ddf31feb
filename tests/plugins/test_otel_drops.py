"""No silent loss: what the export pipeline drops is counted, measured and reported.

The plugin's own pipeline (``agentrig_otel.exporting_pipeline``, what ``[otel]`` builds for
``console`` / ``otlp-*``) with real exporters of the SDK's interface: one that holds the
export thread (so the queue fills), one that fails, one that drops what it gets.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

import pytest
from agentrig_otel import Telemetry, exporting_pipeline
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    MetricsData,
    NumberDataPoint,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import agentrig
from agentrig.errors import ConfigError
from agentrig.kernel import MemorySource, open_runtime

pytestmark = pytest.mark.anyio


class Held(SpanExporter):
    """Takes the first batch and holds the export thread until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.exported = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.release.wait(30)
        self.exported += len(spans)
        return SpanExportResult.SUCCESS


class Failing(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.FAILURE


class Counting(SpanExporter):
    def __init__(self) -> None:
        self.exported = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.exported += len(spans)
        return SpanExportResult.SUCCESS


class Metrics(MetricExporter):
    """Keeps the metric data it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.data: list[MetricsData] = []

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        self.data.append(metrics_data)
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        return None

    def dropped(self) -> dict[tuple[str, str], int]:
        found: dict[tuple[str, str], int] = {}
        for data in self.data[-1:]:
            for resource in data.resource_metrics:
                for scope in resource.scope_metrics:
                    for metric in scope.metrics:
                        if metric.name == "agentrig.otel.dropped":
                            for point in metric.data.data_points:
                                assert isinstance(point, NumberDataPoint)
                                attributes = dict(point.attributes or {})
                                key = (
                                    str(attributes["agentrig.otel.signal"]),
                                    str(attributes["agentrig.otel.reason"]),
                                )
                                found[key] = int(point.value)
        return found


def config(rounds: int) -> dict[str, Any]:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "noop", "arguments": {"x": i}, "id": f"c{i}"}]}
        for i in range(rounds)
    ]
    script.append({"text": "done"})
    return {
        "providers": {"local": {"kind": "scripted", "options": {"rounds": script}}},
    }


@agentrig.tool(risk="inspect")
def noop(x: int = 0) -> str:
    """Do nothing."""
    return "ok"


def memory() -> MemorySource:
    source = MemorySource()
    source.add("tools", "noop", noop)
    return source


async def run(telemetry: Telemetry, runs: int, rounds: int = 1) -> None:
    async with open_runtime(
        config(rounds), memory=memory(), plugins=[("otel-test", telemetry)], environ={}
    ) as rt:
        for i in range(runs):  # a fresh agent per run, as the W benchmark has
            agent = await rt.agents.create(f"w{i}", provider="local", model="m", tools=[noop])
            await agent.run("go")
            await rt.agents.dispose(agent.id)


async def test_spans_a_full_queue_drops_are_counted_measured_and_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    held, metrics = Held(), Metrics()
    pipeline = exporting_pipeline(held, metrics, span_queue_size=4)
    ended = InMemorySpanExporter()  # every span that ended, beside the pipeline
    assert pipeline.tracer_provider is not None
    assert pipeline.meter_provider is not None
    pipeline.tracer_provider.add_span_processor(SimpleSpanProcessor(ended))
    with caplog.at_level(logging.WARNING, logger="agentrig.otel"):
        await run(Telemetry(pipeline.tracer, pipeline.metrics), runs=3)
        total = len(ended.get_finished_spans())
        assert total == 3 * 4  # per run: the turn, two model calls, one tool call
        dropped = pipeline.drops.total[("spans", "queue_full")]
        # 4 wait in the queue, and up to 4 more once the export thread took a batch
        assert total - 8 <= dropped <= total - 4
        pipeline.meter_provider.force_flush()
        assert metrics.dropped() == {("spans", "queue_full"): dropped}
        held.release.set()
        pipeline.shutdown()
    # nothing lost unseen: every span was exported or counted as dropped
    assert held.exported + dropped == total
    # once per interval: at the first drop, then what was dropped since at shutdown
    warnings = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert warnings == [
        "agentrig-otel dropped 1 spans (queue_full); see the agentrig.otel.dropped metric and "
        "docs/observability.md (no silent loss)",
        f"agentrig-otel dropped {dropped - 1} spans (queue_full); see the agentrig.otel.dropped "
        "metric and docs/observability.md (no silent loss)",
    ]


async def test_spans_a_failed_export_lost_are_counted() -> None:
    pipeline = exporting_pipeline(Failing(), None)
    await run(Telemetry(pipeline.tracer), runs=2)
    pipeline.shutdown()
    assert pipeline.drops.total == {("spans", "export_failed"): 8}


@pytest.mark.slow
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_default_pipeline_drops_nothing_under_the_w_benchmarks_load() -> None:
    """The W workload of benchmarks/bench_otel.py (runs of 5 tool rounds, back to back, the
    event loop never idle) through the default pipeline with exporters that drop what they
    get: every span reaches the exporter, none is dropped."""
    spans, metrics = Counting(), Metrics()
    pipeline = exporting_pipeline(spans, metrics)
    ended = InMemorySpanExporter()
    assert pipeline.tracer_provider is not None
    pipeline.tracer_provider.add_span_processor(SimpleSpanProcessor(ended))
    await run(Telemetry(pipeline.tracer, pipeline.metrics), runs=300, rounds=5)
    pipeline.shutdown()
    total = len(ended.get_finished_spans())
    assert total == 300 * (1 + 6 + 5)
    assert pipeline.drops.total == {}
    assert spans.exported == total


def test_the_queue_size_comes_from_otel_bsp_max_queue_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "1")
    held = Held()
    pipeline = exporting_pipeline(held, None)
    tracer = pipeline.tracer
    for _ in range(4):  # one waits in the queue (the timer may take it); the rest are dropped
        tracer.start_span("s").end()
    dropped = pipeline.drops.total[("spans", "queue_full")]
    assert dropped in (2, 3)
    held.release.set()
    pipeline.shutdown()
    assert held.exported + dropped == 4


@pytest.mark.parametrize("value", ["many", "0", "-5"])
def test_an_otel_bsp_max_queue_size_that_is_no_size_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", value)
    with pytest.raises(ConfigError, match="OTEL_BSP_MAX_QUEUE_SIZE"):
        exporting_pipeline(Counting(), None)
