"""Pre-aggregated histograms: the plugin's metric points without the SDK's per-record work.

Recording a point through the SDK (1.45) builds a ``Measurement`` (cleaning its attributes),
looks the context up for the exemplar filter, hashes the attribute set, takes two locks and
bisects twice (the aggregation and the aligned exemplar reservoir): several microseconds for a
point the reader sees only as part of a sum.  For the pipeline the plugin builds itself (one
``PeriodicExportingMetricReader``, no views) :func:`pre_aggregate` returns an
:class:`Aggregator` instead: per instrument and attribute set an explicit-bucket accumulator
(one dict lookup keyed by the attribute key the caller keeps, a bisect, a few adds, the
exemplar the SDK's reservoir would keep), merged at each collection into what the reader
receives exactly as the SDK's own histograms would have produced it -- same names, units,
descriptions, scope and resource, bucket boundaries, count, sum, min and max, temporality,
start times, cardinality overflow and exemplars (``tests/plugins/test_otel_metrics.py``
compares both, point for point).

How the points reach the reader: the SDK has no ``MetricProducer`` through which a reader could
take points aggregated elsewhere (open-telemetry/opentelemetry-python#4768).  A reader
subclass overriding ``_receive_metrics`` would not do: ``MetricReader.collect`` calls it only
when the SDK's own storage returned something, and with every point here it returns None.  So
the reader's collect callback (what ``MeterProvider`` registered with
``_set_collect_callback``) is wrapped: it asks the SDK's storage, then adds these points.  The
reader itself is untouched -- its export, its timer thread, and ``force_flush`` / ``shutdown``,
whose last collection goes through the same callback and so exports the last points.
:func:`pre_aggregate` checks every private name it reads and returns None (the caller keeps
the SDK's instruments) when one is not what it expects, and whenever the reader's histograms
would not be the explicit-bucket aggregation with the instrument's advisory boundaries.
"""

from __future__ import annotations

import logging
import math
import threading
from bisect import bisect_left
from collections.abc import Callable, Hashable, Mapping, Sequence
from time import time_ns
from typing import Any, Protocol

from opentelemetry import trace
from opentelemetry.metrics import Histogram as ApiHistogram
from opentelemetry.metrics import Meter
from opentelemetry.sdk.metrics import (
    AlwaysOffExemplarFilter,
    AlwaysOnExemplarFilter,
    Exemplar,
    MeterProvider,
    TraceBasedExemplarFilter,
)
from opentelemetry.sdk.metrics import Meter as SdkMeter
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    HistogramDataPoint,
    Metric,
    MetricReader,
    MetricsData,
    ResourceMetrics,
    ScopeMetrics,
)
from opentelemetry.sdk.metrics.export import Histogram as HistogramData
from opentelemetry.sdk.metrics.view import DefaultAggregation, ExplicitBucketHistogramAggregation
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import INVALID_SPAN, Span
from opentelemetry.trace.propagation import _SPAN_KEY

from agentrig_otel._light import _CURRENT, LiveSpan

__all__ = [
    "DURATION_BOUNDARIES",
    "TOKEN_BOUNDARIES",
    "Aggregator",
    "Instruments",
    "pre_aggregate",
    "series_key",
]

log = logging.getLogger("agentrig.otel")

#: ``gen_ai.client.token.usage``: the GenAI semantic conventions' ExplicitBucketBoundaries
TOKEN_BOUNDARIES: tuple[int, ...] = (
    1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
)  # fmt: skip
#: ``gen_ai.client.operation.duration`` (seconds); the plugin's tool durations use them too
DURATION_BOUNDARIES: tuple[float, ...] = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip

_INF = math.inf
_SAMPLED = 1  # TraceFlags.SAMPLED
#: the attribute set of the point that takes measurements beyond the cardinality limit
_OVERFLOW: dict[str, Any] = {"otel.metric.overflow": True}
_OVERFLOW_KEY: Hashable = ("otel.metric.overflow",)

#: an exemplar decision: None (not offered), ``()`` (offered outside any span), or the ids
Sample = tuple[int, int] | tuple[()] | None


def series_key(attributes: Mapping[str, Any]) -> Hashable:
    """A key equal for equal attribute sets (``True`` and ``1`` differ, as in the SDK)."""
    return tuple(sorted((k, type(v).__name__, v) for k, v in attributes.items()))


class _Point:
    """One attribute set's accumulator: this interval, and the running totals (cumulative)."""

    __slots__ = (
        "attributes",
        "buckets",
        "exemplars",
        "max",
        "min",
        "previous",
        "start",
        "sum",
        "total_max",
        "total_min",
        "total_sum",
    )

    def __init__(self, attributes: dict[str, Any], buckets: int, start: int) -> None:
        self.attributes = attributes
        self.start = start
        self.buckets = [0] * buckets
        self.sum: float = 0
        self.min: float = _INF
        self.max: float = -_INF
        # per bucket: (value, time, measurement attributes, (trace id, span id) or ()) -- the
        # aligned reservoir's last measurement of the bucket in this interval
        self.exemplars: list[tuple[float, int, Mapping[str, Any], Sample] | None]
        self.exemplars = [None] * buckets
        self.previous: list[int] | None = None  # cumulative bucket counts before this interval
        self.total_sum: float = 0
        self.total_min: float = _INF
        self.total_max: float = -_INF

    def take_exemplars(self) -> list[Exemplar]:
        """The interval's exemplars by bucket, then none (the reservoir resets per collection)."""
        found = []
        point = self.attributes
        for slot in self.exemplars:
            if slot is not None:
                value, when, attributes, ids = slot
                trace_id, span_id = ids or (None, None)
                filtered = (
                    {k: v for k, v in attributes.items() if k not in point} if attributes else None
                )
                found.append(Exemplar(filtered, value, when, span_id, trace_id))
        self.exemplars = [None] * len(self.buckets)
        return found


class Histogram:
    """A pre-aggregated explicit-bucket histogram (created by :meth:`Aggregator.histogram`)."""

    __slots__ = (
        "_bounds",
        "_lock",
        "_owner",
        "_points",
        "_previous_start",
        "_seen",
        "description",
        "name",
        "unit",
    )

    def __init__(
        self, owner: Aggregator, name: str, unit: str, description: str, bounds: Sequence[float]
    ) -> None:
        self._owner = owner
        self._lock = owner.lock
        self.name = name
        self.unit = unit
        self.description = description
        self._bounds = tuple(bounds)
        self._points: dict[Hashable, _Point] = {}
        self._previous_start: int | None = None  # the last delta collection's time
        self._seen = False

    def record(
        self, value: float, key: Hashable, attributes: Mapping[str, Any], sample: Sample
    ) -> None:
        """Add ``value`` to the point of ``attributes`` (``key`` is its :func:`series_key`)."""
        if not 0 <= value < _INF:  # the SDK drops these too (NaN fails the comparison)
            log.warning("histogram %s: %r is not a finite non-negative value", self.name, value)
            return
        index = bisect_left(self._bounds, value)
        lock = self._lock
        lock.acquire()  # half the cost of ``with lock:`` in CPython 3.11
        try:
            point = self._points.get(key)
            if point is None:
                point = self._new_point(key, attributes)
            point.buckets[index] += 1
            point.sum += value
            if value < point.min:
                point.min = value
            if value > point.max:
                point.max = value
            if sample is not None:
                if not sample:  # outside a span the SDK's bucket keeps the ids it had
                    kept = point.exemplars[index]
                    sample = kept[3] if kept is not None else ()
                point.exemplars[index] = (value, time_ns(), attributes, sample)
        finally:
            lock.release()

    def _new_point(self, key: Hashable, attributes: Mapping[str, Any]) -> _Point:
        points = self._points
        if len(points) >= self._owner.cardinality_limit:
            key, attributes = _OVERFLOW_KEY, _OVERFLOW
            point = points.get(key)
            if point is not None:
                return point
        start = self._previous_start or time_ns()
        point = points[key] = _Point(dict(attributes), len(self._bounds) + 1, start)
        if not self._seen:  # the SDK lists instruments in the order they were first used
            self._seen = True
            self._owner.used.append(self)
        return point

    def collect(self, now: int, temporality: AggregationTemporality) -> Metric | None:
        """The metric as the SDK's storage would give it now (called with the lock held)."""
        # per point: its accumulator, and the counts, sum, min and max it exports now
        rows: list[tuple[_Point, list[int], float, float, float]] = []
        if temporality is AggregationTemporality.DELTA:
            taken, self._points = self._points, {}
            self._previous_start = now
            rows = [(p, p.buckets, p.sum, p.min, p.max) for p in taken.values()]
        else:
            for p in self._points.values():
                # folded as the SDK folds them (the same float additions in the same order)
                previous = p.previous or [0] * len(p.buckets)
                p.previous = [a + b for a, b in zip(p.buckets, previous, strict=True)]
                p.total_min = min(p.min, p.total_min)
                p.total_max = max(p.max, p.total_max)
                p.total_sum = p.sum + p.total_sum
                p.buckets = [0] * len(p.buckets)
                p.sum, p.min, p.max = 0, _INF, -_INF
                rows.append((p, p.previous, p.total_sum, p.total_min, p.total_max))
        points = [
            HistogramDataPoint(
                attributes=p.attributes,
                start_time_unix_nano=p.start,
                time_unix_nano=now,
                count=sum(counts),
                sum=total,
                bucket_counts=tuple(counts),
                explicit_bounds=self._bounds,
                min=low,
                max=high,
                exemplars=p.take_exemplars(),
            )
            for p, counts, total, low, high in rows
        ]
        if not points:
            return None
        return Metric(
            name=self.name,
            description=self.description,
            unit=self.unit,
            data=HistogramData(data_points=points, aggregation_temporality=temporality),
        )


class Aggregator:
    """The pre-aggregated histograms of one reader (see the module docstring)."""

    def __init__(
        self,
        provider: MeterProvider,
        scope: InstrumentationScope,
        temporality: AggregationTemporality,
        exemplars: str,
        cardinality_limit: int,
    ) -> None:
        self._provider = provider
        self.scope = scope
        self.temporality = temporality
        #: ``trace_based``, ``always_on`` or ``always_off`` (the provider's exemplar filter)
        self.exemplars = exemplars
        self.cardinality_limit = cardinality_limit
        self.lock = threading.Lock()  # records come from the loop, collections from the reader
        self.used: list[Histogram] = []
        self._made: dict[tuple[str, str, str, tuple[float, ...]], Histogram] = {}

    def histogram(
        self, name: str, unit: str, description: str, boundaries: Sequence[float]
    ) -> Histogram:
        """A histogram with these explicit bucket boundaries (the same one when asked again,
        as a meter returns the instrument it registered)."""
        spec = (name, unit, description, tuple(boundaries))
        made = self._made.get(spec)
        if made is None:
            made = self._made[spec] = Histogram(self, name, unit, description, boundaries)
        return made

    def sample(self) -> Sample:
        """The exemplar decision for a measurement in the current context (the SDK's filter)."""
        mode = self.exemplars
        if mode == "always_off":
            return None
        var = _CURRENT  # the API's own context variable, read directly (see _light)
        found = var.get().get(_SPAN_KEY) if var is not None else trace.get_current_span()
        if type(found) is LiveSpan:  # ours: its ids and flags as they are
            if mode == "trace_based" and not found._flags & _SAMPLED:
                return None
            return found.trace_id, found.span_id
        if found is None or found is INVALID_SPAN or not isinstance(found, Span):
            return () if mode == "always_on" else None
        context = found.get_span_context()
        if mode == "trace_based" and not context.trace_flags.sampled:
            return None
        return context.trace_id, context.span_id

    def collect(self, data: MetricsData | None) -> MetricsData | None:
        """``data`` (the SDK's own collection) with this aggregator's metrics added."""
        now = time_ns()
        with self.lock:
            metrics = [m for h in self.used if (m := h.collect(now, self.temporality)) is not None]
        if not metrics:
            return data
        if data is None or not data.resource_metrics:
            resource = self._resource()
            scopes = [ScopeMetrics(self.scope, metrics, self.scope.schema_url or "")]
            return MetricsData([ResourceMetrics(resource, scopes, resource.schema_url)])
        first, *rest = data.resource_metrics
        scopes = list(first.scope_metrics)
        for i, scope in enumerate(scopes):
            if scope.scope == self.scope:
                scopes[i] = ScopeMetrics(scope.scope, [*scope.metrics, *metrics], scope.schema_url)
                break
        else:
            scopes.append(ScopeMetrics(self.scope, metrics, self.scope.schema_url or ""))
        return MetricsData([ResourceMetrics(first.resource, scopes, first.schema_url), *rest])

    def _resource(self) -> Resource:
        # read at each collection: the provider merges process attributes in after a fork
        resource: Resource = self._provider._sdk_config.resource
        return resource


_FILTERS: dict[type, str] = {
    TraceBasedExemplarFilter: "trace_based",
    AlwaysOnExemplarFilter: "always_on",
    AlwaysOffExemplarFilter: "always_off",
}


def _sdk_histogram_class() -> type | None:
    try:
        from opentelemetry.sdk.metrics._internal.instrument import _Histogram
    except ImportError:
        return None
    return _Histogram


def _advisory_buckets(aggregation: Any) -> bool:
    """Whether ``aggregation`` makes a histogram explicit-bucket with its advisory boundaries."""
    if type(aggregation) is DefaultAggregation:
        return True
    return (
        type(aggregation) is ExplicitBucketHistogramAggregation
        and getattr(aggregation, "_boundaries", ()) is None
        and getattr(aggregation, "_record_min_max", False) is True
    )


def pre_aggregate(provider: MeterProvider, meter: Meter, reader: MetricReader) -> Aggregator | None:
    """An :class:`Aggregator` whose points ``reader`` (the only reader of ``provider``, already
    registered) collects with the SDK's -- or None when that cannot be exact."""
    histogram = _sdk_histogram_class()
    config = getattr(provider, "_sdk_config", None)
    scope = getattr(meter, "_instrumentation_scope", None)
    if histogram is None or not isinstance(meter, SdkMeter) or config is None:
        return None
    if not isinstance(scope, InstrumentationScope):
        return None
    exemplars = _FILTERS.get(type(getattr(config, "exemplar_filter", None)))
    if exemplars is None or list(getattr(config, "views", [None])):
        return None  # a filter of the application's own, or views: the SDK decides
    if not isinstance(getattr(config, "resource", None), Resource):
        return None
    temporality = getattr(reader, "_instrument_class_temporality", {}).get(histogram)
    aggregation = getattr(reader, "_instrument_class_aggregation", {}).get(histogram)
    limit = getattr(reader, "_instrument_class_cardinality_limit", {}).get(histogram)
    collect: Callable[..., MetricsData | None] | None = getattr(reader, "_collect", None)
    if temporality not in (AggregationTemporality.CUMULATIVE, AggregationTemporality.DELTA):
        return None
    if not _advisory_buckets(aggregation) or not isinstance(limit, int) or not callable(collect):
        return None
    aggregator = Aggregator(provider, scope, temporality, exemplars, limit)

    def collect_with_ours(reader: MetricReader, timeout_millis: float = 10_000) -> Any:
        return aggregator.collect(collect(reader, timeout_millis=timeout_millis))

    setter: Any = getattr(reader, "_set_collect_callback", None)
    if not callable(setter):
        return None
    setter(collect_with_ours)
    return aggregator


class _Recorder(Protocol):
    def record(
        self, value: float, key: Hashable, attributes: Mapping[str, Any], sample: Sample
    ) -> None: ...


class _SdkHistogram:
    """An API histogram behind the same ``record`` (the key and the sample are the SDK's own)."""

    __slots__ = ("_histogram",)

    def __init__(self, histogram: ApiHistogram) -> None:
        self._histogram = histogram

    def record(
        self, value: float, key: Hashable, attributes: Mapping[str, Any], sample: Sample
    ) -> None:
        self._histogram.record(value, attributes)


def _no_sample() -> Sample:
    return None


class Instruments:
    """The plugin's three histograms, pre-aggregated or the meter's, and the exemplar decision."""

    __slots__ = ("duration", "sample", "tokens", "tool_duration")

    def __init__(self, meter: Meter | Aggregator) -> None:
        specs: list[tuple[str, str, str, Sequence[float]]] = [
            ("gen_ai.client.token.usage", "{token}", "Tokens per model call", TOKEN_BOUNDARIES),
            ("gen_ai.client.operation.duration", "s", "Model call duration", DURATION_BOUNDARIES),
            # its count is the number of calls by tool and outcome: no separate counter
            ("agentrig.tool.duration", "s", "Tool calls by tool and outcome", DURATION_BOUNDARIES),
        ]
        made: list[_Recorder] = []
        self.sample: Callable[[], Sample]
        if isinstance(meter, Aggregator):
            made = [meter.histogram(*spec) for spec in specs]
            self.sample = meter.sample
        else:
            for name, unit, description, bounds in specs:
                created = meter.create_histogram(
                    name, unit, description, explicit_bucket_boundaries_advisory=bounds
                )
                made.append(_SdkHistogram(created))
            self.sample = _no_sample
        self.tokens, self.duration, self.tool_duration = made
