"""No silent loss: spans and metric points the export pipeline drops are counted and reported.

The SDK's ``BatchSpanProcessor`` drops a span when its queue is full and says so only in a
debug-level way that differs between releases.  :class:`BoundedSpanProcessor` wraps it with
the SDK's public seams alone: it counts the spans it hands over and (through
:class:`CountingSpanExporter`) the spans the batch processor hands to the exporter; when the
difference -- what waits in the queue -- reaches the queue's size, it drops the span itself
and counts it, so the batch processor never drops one unseen.  Spans a failed export lost
are counted too.  Metric points wait in no queue: the periodic reader collects them when it
exports (and the SDK logs an export that failed).

Every drop goes to :class:`Drops`: a counter ``agentrig.otel.dropped`` (by signal and
reason) when the pipeline has a meter, and a warning at most once per interval with what was
dropped since the last one (and at shutdown, for what is left).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

from opentelemetry.context import Context
from opentelemetry.metrics import Meter
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

__all__ = [
    "WARN_INTERVAL",
    "BoundedSpanProcessor",
    "CountingSpanExporter",
    "Drops",
]

log = logging.getLogger("agentrig.otel")

#: the SDK's default export batch (``OTEL_BSP_MAX_EXPORT_BATCH_SIZE``)
DEFAULT_BATCH = 512
#: seconds between two drop warnings (drops in between are summed into the next)
WARN_INTERVAL = 60.0


class Drops:
    """Counts of dropped spans and metric points: a metric, and a warning per interval."""

    def __init__(self, interval: float = WARN_INTERVAL) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        #: (signal, reason) -> dropped since the start
        self.total: dict[tuple[str, str], int] = {}
        self._unreported: dict[tuple[str, str], int] = {}
        self._warned_at: float | None = None
        self._counter: Any = None

    def measure(self, meter: Meter) -> None:
        """Count drops on ``meter`` as ``agentrig.otel.dropped`` from now on."""
        self._counter = meter.create_counter(
            "agentrig.otel.dropped",
            "{item}",
            "Spans and metric points the export pipeline dropped, by signal and reason",
        )

    def add(self, signal: str, reason: str, count: int) -> None:
        """``count`` items of ``signal`` (``spans`` / ``metric_points``) dropped for ``reason``."""
        if count <= 0:
            return
        key = (signal, reason)
        now = time.monotonic()
        with self._lock:
            self.total[key] = self.total.get(key, 0) + count
            self._unreported[key] = self._unreported.get(key, 0) + count
            due = self._warned_at is None or now - self._warned_at >= self.interval
            report = self._take() if due else None
            if due:
                self._warned_at = now
        counter = self._counter
        if counter is not None:
            counter.add(count, {"agentrig.otel.signal": signal, "agentrig.otel.reason": reason})
        if report:
            _warn(report)

    def flush(self) -> None:
        """Warn about what was dropped since the last warning (at shutdown)."""
        with self._lock:
            report = self._take()
        if report:
            _warn(report)

    def _take(self) -> dict[tuple[str, str], int]:
        taken, self._unreported = self._unreported, {}
        return taken


def _warn(report: dict[tuple[str, str], int]) -> None:
    what = ", ".join(f"{n} {signal} ({reason})" for (signal, reason), n in sorted(report.items()))
    log.warning(
        "agentrig-otel dropped %s; see the agentrig.otel.dropped metric and "
        "docs/observability.md (no silent loss)",
        what,
    )


class CountingSpanExporter(SpanExporter):
    """An exporter that counts the spans it is given (and those a failed export lost)."""

    def __init__(self, exporter: SpanExporter, drops: Drops) -> None:
        self.exporter = exporter
        self._drops = drops
        self._lock = threading.Lock()
        self.taken = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            self.taken += len(spans)
        try:
            result = self.exporter.export(spans)
        except Exception:
            self._drops.add("spans", "export_failed", len(spans))
            raise
        if result is not SpanExportResult.SUCCESS:
            self._drops.add("spans", "export_failed", len(spans))
        return result

    def shutdown(self) -> None:
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.exporter.force_flush(timeout_millis)


class BoundedSpanProcessor(SpanProcessor):
    """The SDK's ``BatchSpanProcessor`` with its queue bound kept here, and counted."""

    def __init__(
        self,
        exporter: SpanExporter,
        drops: Drops,
        *,
        max_queue_size: int,
        schedule_delay_millis: float | None = None,
        max_export_batch_size: int | None = None,
    ) -> None:
        self._exporter = CountingSpanExporter(exporter, drops)
        self._drops = drops
        self.max_queue_size = max_queue_size
        self._lock = threading.Lock()
        self.handed = 0
        if max_export_batch_size is None and max_queue_size < DEFAULT_BATCH:
            max_export_batch_size = max_queue_size  # the SDK refuses a batch above the queue
        self.batch = BatchSpanProcessor(
            self._exporter,
            max_queue_size=max_queue_size,
            schedule_delay_millis=schedule_delay_millis,
            max_export_batch_size=max_export_batch_size,
        )

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.batch.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        with self._lock:
            queued = self.handed - self._exporter.taken
            full = queued >= self.max_queue_size
            if not full:
                self.handed += 1
        if full:
            self._drops.add("spans", "queue_full", 1)
            return
        self.batch.on_end(span)

    def shutdown(self) -> None:
        batch: Any = self.batch  # shutdown is untyped in some SDK releases
        batch.shutdown()
        self._drops.flush()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.batch.force_flush(timeout_millis)
