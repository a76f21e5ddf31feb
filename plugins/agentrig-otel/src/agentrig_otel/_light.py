"""Light live spans for an SDK tracer: the loop's spans without the SDK span's per-call work.

The SDK's ``Span`` takes a lock, cleans every attribute into ``BoundedAttributes`` and asks
the sampler once per span; on the agent loop that was most of the plugin's cost.  A
:class:`LiveSpan` is the same thing made for this one writer: a ``ReadableSpan`` (so the
tracer's span processors take it as it is at ``on_end``) that is also a live
``opentelemetry.trace.Span`` (so it can be the current span: OpenTelemetry code running
inside a turn or tool call -- an instrumented HTTP client, a tool starting its own span --
sees it as its parent, and propagators read its ids).

:func:`light_tracer` says when this is exact: an SDK ``Tracer`` (not a subclass that starts
spans its own way), a sampler whose decision is the same for every span of a trace below a
local root (``ParentBased`` with the default local-parent delegates -- the SDK's default --,
``ALWAYS_ON``/``ALWAYS_OFF``, ``TraceIdRatioBased``), default span limits and the SDK's
internal span metrics off.  Otherwise the plugin keeps starting SDK spans.  The sampler is
asked once per local root (a span without a live parent of ours) with the current context,
as the SDK would; spans below it follow its decision, which is what those samplers decide.

Making a span current is the API's ``attach(set_span_in_context(span))``; with the API's
default runtime context (a ``ContextVar``, unless ``OTEL_PYTHON_CONTEXT`` names another) the
light path sets that variable itself -- the same ``Context`` the API would build, without five
Python calls per scope.  ``_CURRENT`` is None otherwise, and the API's functions are used.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar, Token
from random import getrandbits
from time import time_ns
from types import MappingProxyType
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace as trace_api
from opentelemetry.context import Context
from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext
from opentelemetry.sdk.environment_variables import OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED
from opentelemetry.sdk.trace import (
    Event,
    ReadableSpan,
    SpanLimits,
    SynchronousMultiSpanProcessor,
    Tracer,
)
from opentelemetry.sdk.trace import sampling as sampling_api
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.trace.sampling import Decision
from opentelemetry.trace import (
    DEFAULT_TRACE_STATE,
    INVALID_SPAN,
    Link,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    TraceState,
)
from opentelemetry.trace.propagation import _SPAN_KEY
from opentelemetry.util import types

__all__ = ["LIVE", "LightTracer", "LiveSpan", "event", "light_tracer"]

#: the scope of ours current in this context (a :class:`LiveSpan` or the SDK path's scope);
#: None inside an inbound trace context (``continue_from``)
LIVE: ContextVar[Any] = ContextVar("agentrig_otel_scope", default=None)

_UNSET = Status(StatusCode.UNSET)
_SAMPLED = int(TraceFlags.SAMPLED)
_RANDOM = int(TraceFlags.RANDOM_TRACE_ID)
_FLAGS = {flags: TraceFlags(flags) for flags in range(4)}  # the flags a span of ours has
_TRACE_ID_MAX = (1 << 128) - 1
_SPAN_ID_MAX = (1 << 64) - 1
_new_tuple = tuple.__new__
#: the local-parent delegates of the SDK's ``ParentBased`` default: a child follows its parent
_LOCAL_DEFAULT = "localParentSampled:AlwaysOnSampler,localParentNotSampled:AlwaysOffSampler}"
#: at least this many attributes and events per span must fit (the SDK's default is 128)
_MIN_LIMIT = 64


def _context_var() -> ContextVar[Context] | None:
    """The variable holding the API's current ``Context``, when the runtime context is the
    API's default one (else None: the API's ``attach`` / ``detach`` are used)."""
    runtime = getattr(otel_context, "_RUNTIME_CONTEXT", None)
    if type(runtime) is not ContextVarsRuntimeContext:
        return None
    var = getattr(runtime, "_current_context", None)
    return var if isinstance(var, ContextVar) else None


_CURRENT = _context_var()


def _per_trace(sampler: sampling_api.Sampler) -> bool:
    """Whether ``sampler`` decides the same for every span below a local root."""
    if isinstance(sampler, sampling_api.StaticSampler | sampling_api.TraceIdRatioBased):
        return True
    if not isinstance(sampler, sampling_api.ParentBased):
        return False
    described: Any = sampler  # get_description is untyped in the SDK
    return str(described.get_description()).endswith(_LOCAL_DEFAULT)


def _default_limits(limits: Any) -> bool:
    if not isinstance(limits, SpanLimits):
        return False
    counts = (limits.max_span_attributes, limits.max_events, limits.max_event_attributes)
    return (
        limits.max_span_attribute_length is None
        and all(n is None or n >= _MIN_LIMIT for n in counts)
        and (limits.max_links is None or limits.max_links >= _MIN_LIMIT)
    )


def light_tracer(tracer: Any) -> LightTracer | None:
    """A :class:`LightTracer` for ``tracer`` when its spans can be light ones (else None)."""
    if not isinstance(tracer, Tracer) or type(tracer).start_span is not Tracer.start_span:
        return None
    if not _per_trace(tracer.sampler):
        return None
    if not _default_limits(getattr(tracer, "_span_limits", None)):
        return None
    flag = os.environ.get(OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED, "")
    if flag.strip().lower() == "true":  # the SDK counts its spans itself then
        return None
    return LightTracer(tracer)


class LightTracer:
    """Starts :class:`LiveSpan` s with an SDK tracer's sampler, ids, resource and processors."""

    __slots__ = ("_ids", "_random", "_scope", "_tracer", "info", "processor", "sampler")

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer
        self.sampler = tracer.sampler
        self.processor: Any = tracer.span_processor  # typed for the SDK's own Span
        self.info = tracer.instrumentation_info
        self._scope = getattr(tracer, "_instrumentation_scope", None)
        self._ids = tracer.id_generator
        # the SDK's default generator is getrandbits(64) (never 0): called here directly
        self._random = type(self._ids) is RandomIdGenerator

    def open(self, name: str, kind: SpanKind, owner: Any, scope_kind: str) -> LiveSpan:
        """A started span, child of the current context's span, made current in this context
        until its ``close()`` (a scope of ``agentrig.kernel.tracing`` opened by ``owner``)."""
        var = _CURRENT
        if var is not None:
            context: Context | None = var.get()
            parent: Any = context.get(_SPAN_KEY) if context is not None else None
            if parent is None:
                parent = INVALID_SPAN
        else:
            context, parent = None, trace_api.get_current_span()
        span = self.start(name, kind, parent)
        span.owner = owner
        span.scope_kind = scope_kind
        if context is not None and var is not None:
            # what ``attach(set_span_in_context(span))`` builds and sets
            span._token = var.set(Context({**context, _SPAN_KEY: span}))
        else:
            span._token = otel_context.attach(trace_api.set_span_in_context(span))
        span._live = LIVE.set(span)
        return span

    def start(self, name: str, kind: SpanKind, parent: Any = None) -> LiveSpan:
        """A started span, child of ``parent`` (the current context's span by default)."""
        span = LiveSpan.__new__(LiveSpan)
        span._name = name
        span._kind = kind
        span._resource = self._tracer.resource  # read each time: the SDK may set it later
        span._instrumentation_info = self.info
        span._instrumentation_scope = self._scope
        span._attributes = span._values = {}
        span._processor = processor = self.processor
        ids = self._ids
        span_id = getrandbits(64) if self._random else 0
        if not span_id:
            span_id = ids.generate_span_id()
        if parent is None:
            parent = trace_api.get_current_span()
        if type(parent) is LiveSpan:  # below a span of ours: its trace, its decision
            span.trace_id = parent.trace_id
            span._flags = parent._flags
            span._state = parent._state
            span._recording = parent._flags & _SAMPLED == _SAMPLED
            span._parent_span = parent
        else:
            context = parent.get_span_context() if isinstance(parent, trace_api.Span) else None
            if context is not None and context.is_valid:
                trace_id = context.trace_id
                random_id = context.trace_flags.random_trace_id
                span._remote_parent = context
            else:
                trace_id = ids.generate_trace_id()
                random_id = ids.is_trace_id_random()
            result = self.sampler.should_sample(None, trace_id, name, kind)
            decision = result.decision
            span.trace_id = trace_id
            sampled = decision is Decision.RECORD_AND_SAMPLE
            span._flags = (_SAMPLED if sampled else 0) | (_RANDOM if random_id else 0)
            span._state = result.trace_state
            span._recording = decision is not Decision.DROP
            if result.attributes:
                span._values.update(result.attributes)
        span.span_id = span_id
        span._start_time = time_ns()
        # the tracer provider's default multi-processor: its loop (none with ``exporter =
        # "none"``), without its frame; read per span, as it does (see LiveSpan.end)
        if span._recording:
            if type(processor) is _MULTI:
                each: Any  # typed for the SDK's own Span
                for each in processor._span_processors:
                    each.on_start(span, parent_context=None)
            else:
                processor.on_start(span, parent_context=None)
        return span


_MULTI = SynchronousMultiSpanProcessor


def event(name: str, attributes: types.Attributes, timestamp: int) -> Event:
    """``Event(name, attributes, timestamp)``: the same three fields, set without its two
    ``__init__`` frames."""
    made = _new_event(Event)
    made._name = name
    made._timestamp = timestamp
    made._attributes = attributes
    return made


_new_event = Event.__new__


class LiveSpan(trace_api.Span, ReadableSpan):
    """One span of the loop, live until :meth:`end`, then handed to the span processors.

    Mutations after the end are ignored (as the SDK's span does); a span the sampler dropped
    keeps its ids (for ``traceparent`` and session events) and records nothing.
    """

    trace_id: int
    span_id: int
    ended = False
    # what every span starts with (class defaults: fewer stores per span)
    _links: Sequence[Link] = ()
    _status = _UNSET
    _end_time: int | None = None
    _remote_parent: SpanContext | None = None  # a parent that is not a span of ours
    _parent_span: LiveSpan | None = None
    #: a context set as ``_context`` (ReadableSpan's), or the one the processors read at the end
    _set_context: SpanContext | None = None
    _hex: tuple[str, str] | None = None
    #: the trace context that opened it and the scope kind (``agentrig.kernel.tracing``)
    owner: Any
    scope_kind: str
    _token: Token[Context] | None
    _live: Token[Any] | None = None
    _flags: int
    _state: TraceState | None
    _recording: bool
    _processor: Any
    #: the same objects as ``_attributes`` / ``_events``, typed for writing (the events'
    #: list made by the first event)
    _values: dict[str, types.AnyValue]
    _events: Sequence[Event] = ()
    _event_list: list[Event] | None = None
    #: writes put off until the span is read, with when they were put off (see :meth:`defer`)
    _deferred: list[tuple[Callable[..., None], tuple[Any, ...], int]] | None = None
    _written_at: int | None = None  # while they are written: the time an event without one gets

    # ---- the scope (agentrig.kernel.tracing.TraceScope) ------------------------------------
    @property
    def span(self) -> LiveSpan:
        return self

    def close(self) -> None:
        live = self._live
        if live is not None and LIVE.get() is self:  # the context that opened it
            self._live = None
            LIVE.reset(live)
            token, self._token = self._token, None  # not kept while the span waits for export
            if token is not None:
                var = _CURRENT
                if var is not None and token.var is var:
                    var.reset(token)
                else:
                    otel_context.detach(token)
        if not self.ended:  # no observation came (no listener saw it): end it here
            self.end()

    # ---- identity ------------------------------------------------------------------------
    def get_span_context(self) -> SpanContext:
        """``SpanContext(trace_id, span_id, False, flags, state)``, built on each read: kept by
        a span waiting for export, it would be one more object for the garbage collector to
        walk (most of what retaining the span costs); built without the constructor's frame
        when the ids are valid (from the SDK's generator; others go through it)."""
        context = self._set_context
        if context is not None:
            return context
        trace_id, span_id, state = self.trace_id, self.span_id, self._state
        if 0 < trace_id <= _TRACE_ID_MAX and 0 < span_id <= _SPAN_ID_MAX:
            made: SpanContext = _new_tuple(
                SpanContext,
                (
                    trace_id,
                    span_id,
                    False,
                    _FLAGS[self._flags],
                    DEFAULT_TRACE_STATE if state is None else state,
                    True,
                ),
            )
            return made
        return SpanContext(trace_id, span_id, False, _FLAGS[self._flags], state)

    context = property(get_span_context)  # ReadableSpan's

    # what ReadableSpan's own methods (``to_json``) read, like ``context``
    @property
    def _context(self) -> SpanContext:
        return self.get_span_context()

    @_context.setter
    def _context(self, context: SpanContext) -> None:
        self._set_context = context

    @property
    def parent(self) -> SpanContext | None:
        if self._parent_span is not None:
            return self._parent_span.get_span_context()
        return self._remote_parent

    @property
    def _parent(self) -> SpanContext | None:
        return self.parent

    @_parent.setter
    def _parent(self, context: SpanContext | None) -> None:
        self._parent_span = None
        self._remote_parent = context

    def hex_ids(self) -> tuple[str, str]:
        """``(trace_id, span_id)`` as lowercase hex (built once)."""
        ids = self._hex
        if ids is None:
            # bytes.hex: half the time of format(n, "032x"), the same lowercase digits; the
            # trace id's as the parent has it when it has it (one trace, one string)
            parent = self._parent_span
            above = parent._hex if parent is not None else None
            ids = self._hex = (
                above[0] if above is not None else self.trace_id.to_bytes(16, "big").hex(),
                self.span_id.to_bytes(8, "big").hex(),
            )
        return ids

    ids = hex_ids  # the scope's ids (agentrig.kernel.tracing)

    def is_recording(self) -> bool:
        return self._recording and not self.ended

    # ---- writing -------------------------------------------------------------------------
    def set_attributes(self, attributes: Mapping[str, types.AnyValue]) -> None:
        for key, value in attributes.items():
            self.set_attribute(key, value)

    def set_attribute(self, key: str, value: types.AnyValue) -> None:
        if not self._recording or self.ended or value is None:
            return
        self._values[key] = tuple(value) if isinstance(value, list) else value

    def put_clean(self, attributes: Mapping[str, types.AnyValue]) -> None:
        """Merge attributes whose values are already valid (no list, no None)."""
        if self._recording and not self.ended:
            self._values.update(attributes)

    def add_event(
        self,
        name: str,
        attributes: types.Attributes = None,
        timestamp: int | None = None,
    ) -> None:
        if not self._recording or self.ended:
            return
        events = self._event_list
        if events is None:
            self._events = self._event_list = events = []
        if timestamp is None:
            timestamp = self._written_at or time_ns()
        events.append(event(name, attributes, timestamp))

    def add_link(self, context: SpanContext, attributes: types.Attributes = None) -> None:
        if self._recording and not self.ended and context.is_valid:
            self._links = (*self._links, Link(context, attributes))

    def update_name(self, name: str) -> None:
        if not self.ended:
            self._name = name

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if self.ended or self._status.status_code is StatusCode.OK:  # OK is final
            return
        if isinstance(status, Status):
            self._status = status
        elif status is not StatusCode.UNSET:
            self._status = Status(status, description)

    def record_exception(
        self,
        exception: BaseException,
        attributes: types.Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        kind = type(exception)
        module = kind.__module__
        recorded: dict[str, types.AnyValue] = {
            "exception.type": f"{module}.{kind.__qualname__}"
            if module and module != "builtins"
            else kind.__qualname__,
            "exception.message": str(exception),
            "exception.stacktrace": "".join(traceback.format_exception(exception)),
            "exception.escaped": str(escaped),
        }
        recorded.update(attributes or {})
        self.add_event("exception", recorded, timestamp)

    def end(self, end_time: int | None = None) -> None:
        if self.ended:
            return
        self.ended = True
        self._end_time = end_time if end_time is not None else time_ns()
        processor = self._processor
        multi = type(processor) is _MULTI
        if not self._recording or (multi and not processor._span_processors):
            return
        if self._deferred is not None:
            self._write_deferred()
        # one context for the processors to read (the batch processor reads it twice), not
        # kept after them (see get_span_context)
        held = self._set_context is None
        if held:
            self._set_context = self.get_span_context()
        try:
            if multi:
                # the SDK's span and multi-processor: ``_on_ending`` with the span for each
                # processor, then ``on_end`` for each (their loops, without their frames)
                for each in processor._span_processors:
                    each._on_ending(self)
                for each in processor._span_processors:
                    each.on_end(self)
            else:
                processor._on_ending(self)
                processor.on_end(self)
        finally:
            if held:
                self._set_context = None

    # ---- writes put off until read ---------------------------------------------------------
    def defer(self, write: Callable[..., None], *args: Any) -> bool:
        """Call ``write(*args, self)`` when the span is first read, as if before its end --
        when ending the span now hands it to no span processor (the tracer provider's
        multi-processor holds none, as with ``exporter = "none"``); else False, and the
        caller writes now.

        For the writes of the observation that ends the span: its name, attributes, status
        and events are then built only if something reads them -- code holding the span,
        its ``to_json()`` -- and are what they would have been.
        """
        processor = self._processor
        if type(processor) is not _MULTI or processor._span_processors:
            return False
        deferred = self._deferred
        if deferred is None:
            self._deferred = [(write, args, time_ns())]
        else:
            deferred.append((write, args, time_ns()))
        return True

    def _write_deferred(self) -> None:
        deferred = self._deferred
        if deferred is None:
            return
        self._deferred = None
        ended = self.ended
        self.ended = False  # the writes land as they would have before the end ...
        try:
            for write, args, at in deferred:
                self._written_at = at  # ... and at the time they would have
                write(*args, self)
        finally:
            self.ended = ended
            self._written_at = None

    # ---- reading (the deferred writes first) -----------------------------------------------
    @property
    def name(self) -> str:
        if self._deferred is not None:
            self._write_deferred()
        return self._name

    @property
    def attributes(self) -> types.Attributes:
        if self._deferred is not None:
            self._write_deferred()
        return MappingProxyType(self._values)  # what ReadableSpan.attributes gives

    @property
    def events(self) -> Sequence[Event]:
        if self._deferred is not None:
            self._write_deferred()
        return tuple(self._events)

    @property
    def status(self) -> Status:
        if self._deferred is not None:
            self._write_deferred()
        return self._status

    def to_json(self, indent: int | None = 4) -> str:
        self._write_deferred()
        shown: str = super().to_json(indent)
        return shown
