"""The least tracing the public OpenTelemetry API allows on the W loop (``bench_otel.py
--instructions --anatomy``): what agentrig-otel could cost at best, part by part.

A trace context (``agentrig.plugin.TraceContext``) that does only what any tracer of agentrig's
loop must: start a span where the loop opens a scope, make it current with OpenTelemetry's
context API, hand its ids to the session's events, set attributes and end it.  The attributes
are prebuilt: the ones agentrig-otel writes on a W run (same keys, same value types), so no
work goes into reading them from observations.  Four steps, each adding one part:

* ``least_scopes`` -- the scopes over OpenTelemetry's no-op tracer (the context API alone);
* ``least_spans`` -- the SDK's spans (the tracer agentrig-otel builds for ``exporter = "none"``),
  no attributes, each ended when its scope closes;
* ``least_attributes`` -- with the attributes, the end ones set when the scope closes: what a
  tracer that the loop handed each operation's outcome at ``close()`` would cost;
* ``least_observed`` -- the same ended by an ``observe`` listener, as agentrig-otel does: the
  loop builds its observations for it.

Not a plugin (its attributes are the benchmark's, whatever the run): a measuring device.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar, Token
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Tracer

from agentrig.plugin import TRACE_CONTEXT, Composition, Observation, compose_step, hookimpl

__all__ = ["LEAST", "least_trace"]

#: the variants, each adding one part to the one before
LEAST = ("least_scopes", "least_spans", "least_attributes", "least_observed")

#: what agentrig-otel writes on a W run: (name, kind, start attributes) by scope kind
_START: dict[str, tuple[str, SpanKind, dict[str, Any]]] = {
    "model_call": (
        "chat bench-model",
        SpanKind.CLIENT,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "scripted",
            "gen_ai.request.model": "bench-model",
            "agentrig.provider.id": "local",
        },
    ),
    "tool_call": (
        "execute_tool noop",
        SpanKind.INTERNAL,
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "noop",
            "gen_ai.tool.type": "function",
            "gen_ai.tool.description": "Does nothing.",
        },
    ),
    "turn": (
        "invoke_agent w",
        SpanKind.INTERNAL,
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "w", "gen_ai.agent.id": "w"},
    ),
}
_ID = "0123456789abcdef0123456789abcdef"
#: ... and the attributes it sets when the operation ended
_END: dict[str, dict[str, Any]] = {
    "model_call": {
        "gen_ai.conversation.id": _ID,
        "gen_ai.response.finish_reasons": ["tool_call"],
        "gen_ai.response.time_to_first_chunk": 0.0001,
    },
    "tool_call": {"gen_ai.tool.call.id": "call_0", "agentrig.permission.outcome": "allow"},
    "turn": {
        "gen_ai.conversation.id": _ID,
        "agentrig.run.id": _ID,
        "agentrig.turn": 1,
        "agentrig.turn.trigger": "prompt",
        "agentrig.turn.reason": "completed",
        "gen_ai.provider.name": "scripted",
        "gen_ai.request.model": "bench-model",
        "gen_ai.response.finish_reasons": ["stop"],
    },
}

_LIVE: ContextVar[_Scope | None] = ContextVar("least_scope", default=None)


class _Scope:
    __slots__ = ("end", "ids", "kind", "live", "span", "token")

    def __init__(
        self, kind: str, span: Span, context: otel_context.Context, end: Mapping[str, Any] | None
    ) -> None:
        self.kind, self.span, self.end = kind, span, end
        ids = span.get_span_context()
        self.ids = (format(ids.trace_id, "032x"), format(ids.span_id, "016x"))
        self.token = otel_context.attach(trace.set_span_in_context(span, context))
        self.live: Token[_Scope | None] = _LIVE.set(self)

    def close(self) -> None:
        _LIVE.reset(self.live)
        otel_context.detach(self.token)
        if self.end is not None:  # no observe listener ends it: the scope does
            if self.end:
                self.span.set_attributes(self.end)
            self.span.end()


class _Inbound:
    """An inbound request's trace context, current until closed (no span of its own)."""

    __slots__ = ("token",)

    def __init__(self, headers: Mapping[str, str]) -> None:
        self.token = otel_context.attach(propagate.extract(dict(headers)))

    def close(self) -> None:
        otel_context.detach(self.token)


class _LeastTrace:
    """The trace context; spans end when their scope closes."""

    #: the end attributes by kind, None: an observe listener ends the span
    ends: dict[str, dict[str, Any]] | None

    def __init__(self, tracer: Tracer, attributes: bool) -> None:
        self.tracer = tracer
        self.starts = {k: (n, s, a if attributes else None) for k, (n, s, a) in _START.items()}
        self.ends = {k: v if attributes else {} for k, v in _END.items()}

    def open(self, kind: str, agent_id: str, subject: str, provider: str | None = None) -> _Scope:
        name, span_kind, attributes = self.starts[kind]
        context = otel_context.get_current()
        span = self.tracer.start_span(name, context, span_kind, attributes)
        return _Scope(kind, span, context, None if self.ends is None else self.ends[kind])

    def headers(self) -> dict[str, str]:
        carrier: dict[str, str] = {}
        propagate.inject(carrier)  # the W loop asks for none: nothing calls out over HTTP
        return carrier

    def ids(self) -> tuple[str, str] | None:
        live = _LIVE.get()
        return live.ids if live is not None else None

    def continue_from(self, headers: Mapping[str, str]) -> _Inbound:
        return _Inbound(headers)  # the W loop serves no inbound request: never on its path

    @compose_step("check")
    def provide_trace_context(self, payload: Composition) -> None:
        payload.runtime.services.provide(TRACE_CONTEXT, self, source="least")


class _LeastObserved(_LeastTrace):
    """The trace context whose spans an ``observe`` listener ends (agentrig-otel's design)."""

    def __init__(self, tracer: Tracer) -> None:
        super().__init__(tracer, attributes=True)
        self.observed = self.ends or {}
        self.ends = None

    @hookimpl
    def observe(self, payload: Observation) -> None:
        live = _LIVE.get()
        if live is not None and live.kind == payload.kind:
            live.span.set_attributes(self.observed[payload.kind])
            live.span.end()


def least_trace(name: str) -> object:
    """The plugin of variant ``name`` (one of :data:`LEAST`)."""
    from agentrig_otel import exporting_pipeline

    if name == "least_scopes":
        return _LeastTrace(trace.NoOpTracer(), attributes=False)
    tracer = exporting_pipeline(None, None).tracer  # the tracer of exporter = "none"
    if name == "least_observed":
        return _LeastObserved(tracer)
    return _LeastTrace(tracer, attributes=name == "least_attributes")
