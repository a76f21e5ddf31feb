"""The process-wide OpenTelemetry tracer provider of the otel tests (it can be set once).

Tests that use ``exporter = "global"`` install it; once installed, every library in the
process that traces through the global API records into it -- the mcp 2.x SDK opens a client
span per request that way -- so the tests that compare trace ids read it as well.
"""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = ["global_spans", "installed_global_spans"]

_GLOBAL: list[InMemorySpanExporter] = []


def global_spans() -> InMemorySpanExporter:
    """The global tracer provider's recorded spans, installing the provider on first use."""
    if not _GLOBAL:
        from opentelemetry import trace

        provider = TracerProvider()
        _GLOBAL.append(InMemorySpanExporter())
        provider.add_span_processor(SimpleSpanProcessor(_GLOBAL[0]))
        trace.set_tracer_provider(provider)
    return _GLOBAL[0]


def installed_global_spans() -> tuple[ReadableSpan, ...]:
    """The spans the global provider recorded, or none when no test installed it."""
    return tuple(_GLOBAL[0].get_finished_spans()) if _GLOBAL else ()
