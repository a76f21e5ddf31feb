"""Tracer and meter providers built from ``[otel]`` (only when the table enables the plugin)."""

from __future__ import annotations

import importlib
import os
from typing import Any

import attrs
from opentelemetry import metrics, trace
from opentelemetry.metrics import Meter
from opentelemetry.sdk.environment_variables import (
    OTEL_BSP_MAX_QUEUE_SIZE,
    OTEL_METRICS_EXEMPLAR_FILTER,
)
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import Tracer

from agentrig.errors import ConfigError, Issue, did_you_mean
from agentrig_otel._config import OtelConfig
from agentrig_otel._drops import BoundedSpanProcessor, Drops
from agentrig_otel._sampler import default_sampler

__all__ = ["OtelSetupError", "Pipeline", "build_pipeline", "exporting_pipeline"]


class OtelSetupError(ConfigError):
    """``[otel]`` asks for something this installation cannot do."""

    def __init__(self, message: str, path: tuple[str, ...] = ("otel", "exporter")) -> None:
        super().__init__([Issue("config.otel", message, path)])


INSTRUMENTATION = "agentrig"
#: spans the batch span processor may hold before it drops (and counts) one, unless
#: ``OTEL_BSP_MAX_QUEUE_SIZE`` says otherwise: the SDK's 2048 is filled by a busy event loop
#: whose export thread waits for the GIL (benchmarks/README.md, "Tracing on public APIs")
SPAN_QUEUE_SIZE = 32768
#: the values of ``OTEL_METRICS_EXEMPLAR_FILTER`` the SDK knows (``trace_based`` by default)
EXEMPLAR_FILTERS = ("trace_based", "always_on", "always_off")


def _check_exemplar_filter() -> None:
    """Refuse an ``OTEL_METRICS_EXEMPLAR_FILTER`` the SDK's meter provider would fail on."""
    value = os.environ.get(OTEL_METRICS_EXEMPLAR_FILTER)
    if value is None or value in EXEMPLAR_FILTERS:
        return
    hint = did_you_mean(value.strip().lower(), EXEMPLAR_FILTERS)
    raise OtelSetupError(
        f"{OTEL_METRICS_EXEMPLAR_FILTER}={value!r} is not one of "
        f"{', '.join(EXEMPLAR_FILTERS)}{hint}",
        ("otel", "metrics"),
    )


@attrs.define
class Pipeline:
    """A tracer and meter, and how to flush and close what was built for them."""

    tracer: Tracer
    meter: Meter | None
    tracer_provider: TracerProvider | None = None
    meter_provider: MeterProvider | None = None
    #: what the export pipeline dropped (spans of a full queue, failed exports)
    drops: Drops = attrs.field(factory=Drops)

    @property
    def metrics(self) -> Meter | None:
        """Where :class:`~agentrig_otel.Telemetry` records its metrics."""
        return self.meter

    def shutdown(self) -> None:
        """Flush and close the providers built here (never the application's global ones)."""
        if self.tracer_provider is not None:
            self.tracer_provider.shutdown()
        if self.meter_provider is not None:
            self.meter_provider.shutdown()


def _exporters(config: OtelConfig) -> tuple[SpanExporter | None, MetricExporter | None]:
    if config.exporter == "console":
        return ConsoleSpanExporter(), ConsoleMetricExporter()
    if config.exporter == "none":
        return None, None
    headers = dict(config.headers) or None
    base = config.endpoint.rstrip("/") if config.endpoint else None
    if config.exporter == "otlp-grpc":
        # an optional extra, imported by name so the plugin installs and type-checks without it
        try:
            spans = importlib.import_module("opentelemetry.exporter.otlp.proto.grpc.trace_exporter")
            metric = importlib.import_module(
                "opentelemetry.exporter.otlp.proto.grpc.metric_exporter"
            )
        except ImportError as exc:
            raise OtelSetupError(
                "otel.exporter = 'otlp-grpc' needs the gRPC exporter: "
                "pip install 'agentrig-otel[grpc]'"
            ) from exc
        span_exporter: SpanExporter = spans.OTLPSpanExporter(endpoint=base, headers=headers)
        metric_exporter: MetricExporter = metric.OTLPMetricExporter(endpoint=base, headers=headers)
        return span_exporter, metric_exporter
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    # the HTTP exporter takes each signal's full URL; without one it reads the standard
    # OTEL_EXPORTER_OTLP_* variables itself
    return (
        OTLPSpanExporter(endpoint=f"{base}/v1/traces" if base else None, headers=headers),
        OTLPMetricExporter(endpoint=f"{base}/v1/metrics" if base else None, headers=headers),
    )


def build_pipeline(config: OtelConfig) -> Pipeline:
    """The tracer and meter ``config`` asks for."""
    if config.exporter == "global":
        meter = metrics.get_meter(INSTRUMENTATION) if config.metrics else None
        return Pipeline(trace.get_tracer(INSTRUMENTATION), meter)
    if config.metrics:
        _check_exemplar_filter()
    span_exporter, metric_exporter = _exporters(config)
    return exporting_pipeline(
        span_exporter,
        metric_exporter if config.metrics else None,
        service_name=config.service_name,
    )


def exporting_pipeline(
    span_exporter: SpanExporter | None,
    metric_exporter: MetricExporter | None,
    *,
    service_name: str | None = None,
    span_queue_size: int | None = None,
) -> Pipeline:
    """The providers the plugin builds, sending to these exporters (what ``build_pipeline``
    builds for ``console`` and ``otlp-*``; a benchmark or test passes exporters of its own).

    ``span_exporter`` goes behind the SDK's ``BatchSpanProcessor`` (None: spans are recorded,
    not exported) with a queue of ``span_queue_size`` spans (default: ``OTEL_BSP_MAX_QUEUE_SIZE``,
    else :data:`SPAN_QUEUE_SIZE`); a span that finds it full is dropped, counted and reported
    (``_drops``).  Spans are sampled as ``OTEL_TRACES_SAMPLER`` says, by default as the
    SDK's ``ParentBased(ALWAYS_ON)`` decides (``_sampler``).  ``metric_exporter`` goes behind
    a ``PeriodicExportingMetricReader``.
    Without a metric exporter there is no meter at all: no reader could ever read a
    measurement.
    """
    attributes: dict[str, Any] = {}
    if service_name:
        attributes[SERVICE_NAME] = service_name
    resource = Resource.create(attributes)
    drops = Drops()
    meter_provider = meter = None
    if metric_exporter is not None:
        _check_exemplar_filter()
        reader = PeriodicExportingMetricReader(metric_exporter)
        meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
        meter = meter_provider.get_meter(INSTRUMENTATION)
        drops.measure(meter)
    tracer_provider = TracerProvider(sampler=default_sampler(), resource=resource)
    if span_exporter is not None:
        queue = span_queue_size or _env_queue_size() or SPAN_QUEUE_SIZE
        processor = BoundedSpanProcessor(span_exporter, drops, max_queue_size=queue)
        tracer_provider.add_span_processor(processor)
    tracer = tracer_provider.get_tracer(INSTRUMENTATION)
    return Pipeline(tracer, meter, tracer_provider, meter_provider, drops)


def _env_queue_size() -> int | None:
    """``OTEL_BSP_MAX_QUEUE_SIZE`` when it is a positive integer (else the plugin's default)."""
    value = os.environ.get(OTEL_BSP_MAX_QUEUE_SIZE, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) <= 0:
        raise OtelSetupError(
            f"{OTEL_BSP_MAX_QUEUE_SIZE}={value!r} is not a positive integer", ("otel", "exporter")
        )
    return int(value)
