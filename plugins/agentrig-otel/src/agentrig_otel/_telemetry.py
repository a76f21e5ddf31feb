"""Spans and metrics from agentrig's observations, named by the OpenTelemetry GenAI conventions.

Composed into a runtime, :class:`Telemetry` is also its trace context
(``agentrig.kernel.tracing``): the loop opens a scope around each turn, model call attempt and
tool call, and each scope is a live span made current in the task that does the work -- so an
HTTP request, a hook or a session event inside it names that span, and W3C ``traceparent``
goes out with them.  The loop's observation of the operation (``observe``) arrives while its
scope is open; it names the span (``chat {model}``), sets the GenAI attributes and ends it.
An observation without a scope of ours (a direct ``agent.call_tool()``, or another plugin
providing the trace context) becomes a span written from the observation's own timings.
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from contextvars import Token
from types import MappingProxyType
from typing import Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.metrics import Meter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from agentrig.plugin import (
    TRACE_CONTEXT,
    Composition,
    Observation,
    ScopeKind,
    compose_step,
    hookimpl,
)
from agentrig.redaction import redact
from agentrig_otel._light import LIVE, LiveSpan, light_tracer
from agentrig_otel._metrics import Aggregator, Instruments, series_key

__all__ = ["Telemetry", "redact"]  # redact: agentrig's one shared redactor, re-exported

log = logging.getLogger("agentrig.otel")

#: keys of events waiting for their span kept at most (the oldest are dropped beyond it)
MAX_PENDING = 4096
#: distinct metric attribute sets kept for reuse (beyond it the cache starts over)
MAX_ATTRIBUTE_SETS = 1024


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _json(value: Any) -> str:
    return json.dumps(redact(value), ensure_ascii=False, default=str)


def _usage_attributes(usage: Any) -> dict[str, int]:
    if usage is None:
        return {}
    return {
        "gen_ai.usage.input_tokens": usage.prompt,
        "gen_ai.usage.output_tokens": usage.completion,
    }


#: the name and kind a call's span starts with (a turn's is named after its agent)
_OPENED: dict[str, tuple[str, SpanKind]] = {
    "model_call": ("chat", SpanKind.CLIENT),
    "tool_call": ("execute_tool", SpanKind.INTERNAL),
}


def _attributes_to_write(live: Span | None, name: str, common: Mapping[str, Any]) -> dict[str, Any]:
    """Where a span's attributes are written, starting with ``common``: a light span's own
    (named ``name`` here; live and recording, checked by the caller), else a new dict."""
    if type(live) is LiveSpan:
        live._name = name
        attributes = live._values
        attributes.update(common)  # built here: no value to clean
        return attributes
    return dict(common)


def _hex_ids(span: Span) -> tuple[str, str] | tuple[()]:
    """``(trace_id, span_id)`` as hex; ``()`` for a span that records nothing (no-op tracer)."""
    ctx = span.get_span_context()
    if not ctx.is_valid:
        return ()
    return format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")


_K = TypeVar("_K")
_V = TypeVar("_V")


class _Built(dict[_K, _V]):
    """Values built once per key and reused (attribute sets, names): read with ``get``,
    added with :meth:`keep`; beyond ``MAX_ATTRIBUTE_SETS`` keys it starts over."""

    def keep(self, key: _K, value: _V) -> _V:
        if len(self) > MAX_ATTRIBUTE_SETS:
            self.clear()
        self[key] = value
        return value


#: events (name, attributes, unix time) waiting for the span they belong to
_Pending = list[tuple[str, Mapping[str, Any], float]]


class _Scope:
    """A live span made current until :meth:`close` (see ``agentrig.kernel.tracing``)."""

    __slots__ = ("_hex", "_ids", "_live", "_token", "ended", "owner", "scope_kind", "span")

    def __init__(self, owner: Telemetry, kind: ScopeKind, span: Span) -> None:
        self.owner = owner
        self.scope_kind = kind
        self.span = span
        self.ended = False
        self._ids: tuple[str, str] | tuple[()] | None = None  # () once known to be invalid
        self._hex: tuple[str, str] | None = None  # the ids, once known to be valid
        self._token = otel_context.attach(trace.set_span_in_context(span))
        self._live: Token[Any] = LIVE.set(self)

    def ids(self) -> tuple[str, str] | None:
        if self._ids is None:
            self._ids = _hex_ids(self.span)
            self._hex = self._ids or None
        return self._ids or None

    def end(self) -> None:
        self.ended = True
        self.span.end()

    def close(self) -> None:
        if LIVE.get() is self:  # the context that opened it (the loop closes it there)
            LIVE.reset(self._live)
            otel_context.detach(self._token)
        if not self.ended:  # no observation came (no listener saw it): end it here
            self.end()


class _Continued:
    """An inbound trace context made current until :meth:`close`."""

    __slots__ = ("_live", "_token")

    def __init__(self, headers: Mapping[str, str]) -> None:
        self._token = otel_context.attach(propagate.extract(dict(headers)))
        self._live = LIVE.set(None)

    def close(self) -> None:
        LIVE.reset(self._live)
        otel_context.detach(self._token)


class Telemetry:
    """An ``observe`` listener that turns observations into spans and metrics.

    Registered as a plugin (``open_runtime(..., plugins=[("otel", telemetry)])`` or by the
    ``[otel]`` table) it also provides the runtime's trace context: live spans around the
    loop's work and W3C ``traceparent`` on what goes out.
    """

    def __init__(
        self,
        tracer: Tracer,
        meter: Meter | Aggregator | None = None,
        *,
        capture_content: bool = False,
        runtime: Any = None,
    ) -> None:
        self._tracer = tracer
        # light live spans when the tracer is the SDK's and they are exact (see _light)
        self._light = light_tracer(tracer)
        self._capture = capture_content
        self.runtime = runtime
        # hook executions and permission decisions outside any scope of ours, waiting for
        # the span they belong to: the tool call's span by call id, else the session's next turn
        self._by_call: OrderedDict[str, _Pending] = OrderedDict()
        self._by_session: OrderedDict[str, _Pending] = OrderedDict()
        # the histograms: the SDK's on a meter, pre-aggregated on the plugin's own pipeline
        self._metrics = Instruments(meter) if meter is not None else None
        # the attribute sets of metric points (and their keys), built once per combination
        self._metric_attributes: _Built[tuple[Any, ...], _MetricAttributes] = _Built()
        self._tool_attributes: _Built[tuple[str, str], _Series] = _Built()
        self._permission_sets: _Built[tuple[bool, Any], Mapping[str, Any]] = _Built()
        # a model call span's name and common attributes, by what they are made of
        self._call_sets: _Built[tuple[Any, ...], tuple[str, Mapping[str, Any]]] = _Built()
        self._reason_sets: _Built[Any, tuple[str]] = _Built()
        self._tool_sets: _Built[str, tuple[str, Mapping[str, Any]]] = _Built()

    # ---- the trace context (agentrig.kernel.tracing.TraceContext) -------------------------
    def open(self, kind: ScopeKind, agent_id: str) -> _Scope | LiveSpan:
        """A live span of ``kind``, current in this task until the scope closes."""
        name, span_kind = _OPENED.get(kind) or (f"invoke_agent {agent_id}", SpanKind.INTERNAL)
        light = self._light
        if light is not None:
            return light.open(name, span_kind, self, kind)
        return _Scope(self, kind, self._tracer.start_span(name, kind=span_kind))

    def headers(self) -> dict[str, str]:
        """``traceparent`` (and ``tracestate``) of the current context."""
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        return carrier

    def ids(self) -> tuple[str, str] | None:
        """The current span's trace id and span id (hex), or None outside a span."""
        live = LIVE.get()
        if live is not None:
            ids: tuple[str, str] | None = live._hex  # built once per span (the common case)
            return ids if ids is not None else live.ids()
        return _hex_ids(trace.get_current_span()) or None

    def continue_from(self, headers: Mapping[str, str]) -> _Continued:
        """Make an inbound request's trace context current (the run becomes its child)."""
        return _Continued(headers)

    # ---- the hooks -----------------------------------------------------------------------
    @compose_step("check")
    def provide_trace_context(self, payload: Composition) -> None:
        """Be the runtime's trace context (unless another plugin already is)."""
        services = payload.runtime.services
        if not services.has(TRACE_CONTEXT):
            services.provide(TRACE_CONTEXT, self, source="agentrig-otel")

    @hookimpl
    def session_start(self, payload: Any) -> None:
        if self.runtime is None:
            self.runtime = payload.runtime

    @hookimpl
    def observe(self, payload: Observation) -> None:
        kind = payload.kind
        if kind == "model_call":  # the most frequent first
            self._observed(payload, "model_call")
        elif kind == "tool_call":
            self._observed(payload, "tool_call")
        elif kind == "turn":
            self._observed(payload, "turn")
        elif kind == "permission" or kind == "hook":
            self._event(payload)

    def _observed(self, payload: Observation, kind: ScopeKind) -> None:
        """An operation's observation: its metrics, then its span (the live one if open)."""
        data = payload.data
        if kind == "model_call":
            if self._metrics is not None:
                self._record_call_metrics(data)
        elif kind == "tool_call" and self._metrics is not None:
            self._record_tool_metrics(data)
        live = LIVE.get()
        if (
            type(live) is LiveSpan  # the common case: a light span of ours, recording
            and live.owner is self
            and live.scope_kind == kind
            and not live.ended
            and live._recording
        ):
            # without a processor to take the span, its name and attributes are written when
            # something reads it (what they would be now: LiveSpan.defer); content read from
            # the session is read now. The events kept for the span are taken now.
            capture = self._capture
            if kind == "model_call":
                if capture or not live.defer(self._call, payload):
                    self._call(payload, live)
            elif kind == "tool_call":
                pending = self._by_call.pop(data.get("call_id") or "", None)
                if capture or not live.defer(self._tool_span, payload, pending):
                    self._tool_span(payload, pending, live)
            else:
                pending = self._by_session.pop(data.get("session_id") or "", None)
                if capture or not live.defer(self._turn_span, payload, pending):
                    self._turn_span(payload, pending, live)
            live.end()
            return
        span: Span | None = None
        if live is None or live.owner is not self or live.scope_kind != kind or live.ended:
            live = None
        elif not (live._recording if type(live) is LiveSpan else live.span.is_recording()):
            # sampled out: nothing to write (events kept for the span it would have been
            # are dropped with it)
            if kind == "turn":
                self._by_session.pop(data.get("session_id") or "", None)
            elif kind == "tool_call":
                self._by_call.pop(data.get("call_id") or "", None)
            live.end()
            return
        else:  # a light span is its own scope
            span = live if type(live) is LiveSpan else live.span
        if kind == "model_call":
            self._call(payload, span)
        elif kind == "tool_call":
            self._tool(payload, span)
        else:
            self._turn(payload, span)
        if live is not None:
            live.end()

    def _event(self, payload: Observation) -> None:
        """A permission decision or hook execution: an event on the current span of ours,
        else kept for the span it belongs to."""
        data = payload.data
        if payload.kind == "permission":
            name = "agentrig.permission"
            attributes: Mapping[str, Any] = self._permission_attributes(
                bool(data.get("allowed")), data.get("reason")
            )
            when = time.time()
        else:
            name = f"agentrig.hook {data.get('event')}"
            attributes = {
                "agentrig.hook.event": str(data.get("event") or ""),
                "agentrig.hook.name": str(data.get("hook") or ""),
                "agentrig.hook.strategy": str(data.get("strategy") or ""),
                "agentrig.hook.outcome": str(data.get("outcome") or ""),
                "agentrig.hook.duration_ms": float(data.get("duration_ms") or 0.0),
            }
            if data.get("reason"):
                attributes["agentrig.hook.reason"] = str(data["reason"])
            when = float(data.get("started_at") or time.time())
        live = LIVE.get()
        if live is not None and live.owner is self and not live.ended:
            span = live if type(live) is LiveSpan else live.span
            span.add_event(name, attributes, int(when * 1e9))  # _ns(when)
            return
        call_id, session_id = data.get("call_id"), data.get("session_id")
        pending = self._by_call if call_id else self._by_session
        key = call_id or session_id
        if not key:
            return
        pending.setdefault(key, []).append((name, attributes, when))
        if len(pending) > MAX_PENDING:
            pending.popitem(last=False)

    def _permission_attributes(self, allowed: bool, reason: Any) -> Mapping[str, Any]:
        """A decision's event attributes, built once per outcome and reason (read-only)."""
        key = (allowed, reason)
        attributes = self._permission_sets.get(key)
        if attributes is None:
            attributes = self._permission_sets.keep(
                key,
                MappingProxyType(
                    {
                        "agentrig.permission.outcome": "allow" if allowed else "deny",
                        "agentrig.permission.reason": str(reason or ""),
                    }
                ),
            )
        return attributes

    @staticmethod
    def _add_events(span: Any, events: _Pending) -> None:
        for name, attributes, when in events:
            span.add_event(name, attributes, timestamp=_ns(when))

    def _span(
        self,
        live: Span | None,
        name: str,
        kind: SpanKind,
        start: float,
        attributes: dict[str, Any],
    ) -> Span:
        """The live span, named and given its attributes; without one, a span started at the
        observation's own start time (its caller ends it)."""
        if live is None:
            return self._tracer.start_span(
                name, kind=kind, start_time=_ns(start), attributes=attributes
            )
        if type(live) is LiveSpan:  # live and recording (checked by the caller)
            live._name = name
            live._values.update(attributes)  # built here: no value to clean
        else:
            live.update_name(name)
            live.set_attributes(attributes)
        return live

    # ---- spans ---------------------------------------------------------------------------
    def _pending_of(self, payload: Observation) -> _Pending | None:
        """The events kept for the span of a tool call (by call id) or a turn (by session)."""
        data = payload.data
        if payload.kind == "tool_call":
            return self._by_call.pop(data.get("call_id") or "", None)
        return self._by_session.pop(data.get("session_id") or "", None)

    def _turn(self, turn: Observation, live: Span | None) -> None:
        self._turn_span(turn, self._pending_of(turn), live)

    def _turn_span(self, turn: Observation, pending: _Pending | None, live: Span | None) -> None:
        data = turn.data
        agent = data.get("agent_name") or turn.agent_id or "agent"  # the configured name
        start = float(data.get("started_at") or 0.0)
        end = start + float(data.get("duration_ms") or 0.0) / 1000
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "gen_ai.agent.id": turn.agent_id or "",
            "gen_ai.conversation.id": data.get("session_id") or "",
            "agentrig.run.id": data.get("run_id") or "",
            "agentrig.turn": data.get("turn") or 0,
            "agentrig.turn.trigger": data.get("trigger") or "",
            "agentrig.turn.reason": data.get("reason") or "",
        }
        if data.get("model"):
            attributes["gen_ai.request.model"] = data["model"]
        attributes.update(_usage_attributes(data.get("usage")))
        content = self._turn_content(turn) if self._capture else {}
        if content.get("input"):
            attributes["gen_ai.input.messages"] = _json(content["input"])
        if content.get("output"):
            attributes["gen_ai.output.messages"] = _json(content["output"])
        span = self._span(live, f"invoke_agent {agent}", SpanKind.INTERNAL, start, attributes)
        if pending:
            self._add_events(span, pending)
        reason = data.get("reason")
        if reason == "failed":
            span.set_attribute("error.type", data.get("error_type") or "failed")
            span.set_status(Status(StatusCode.ERROR, data.get("error_code") or "failed"))
        elif reason == "interrupted":
            span.add_event("agentrig.run.interrupted")
            span.set_attribute("error.type", "interrupted")
            span.set_status(Status(StatusCode.ERROR, "interrupted"))
        if live is None:
            span.end(end_time=_ns(end))

    def _call(self, call: Observation, live: Span | None) -> None:
        data = call.data
        name, common = self._call_attributes(data, call.agent_id)
        attributes = _attributes_to_write(live, name, common)
        attempt = data.get("attempt")
        if attempt and attempt > 1:  # a retry of the same round
            attributes["agentrig.attempt"] = attempt
        if response_model := data.get("response_model"):
            attributes["gen_ai.response.model"] = response_model
        if stop_reason := data.get("stop_reason"):
            attributes["gen_ai.response.finish_reasons"] = self._finish_reasons(stop_reason)
        if (first := data.get("time_to_first_chunk_ms")) is not None:
            attributes["agentrig.time_to_first_chunk_ms"] = float(first)
        usage = data.get("usage")
        if usage is not None:
            attributes["gen_ai.usage.input_tokens"] = usage.prompt
            attributes["gen_ai.usage.output_tokens"] = usage.completion
        start = 0.0
        if type(live) is LiveSpan:
            span: Span = live
        else:
            start = float(data.get("started_at") or 0.0)
            span = self._span(live, name, SpanKind.CLIENT, start, attributes)
        outcome = data.get("outcome")
        if outcome != "success":
            span.set_attribute("error.type", data.get("error_type") or str(outcome))
            span.set_status(Status(StatusCode.ERROR, data.get("error_code") or str(outcome)))
        if live is None:
            span.end(end_time=_ns(float(data.get("ended_at") or start)))

    def _call_attributes(
        self, data: Mapping[str, Any], agent_id: str | None
    ) -> tuple[str, Mapping[str, Any]]:
        """A model call span's name and the attributes every call of the same agent, session,
        provider and model has (built once for them: read-only)."""
        key: Any = (
            data.get("provider_kind"),
            data.get("provider"),
            data.get("model"),
            data.get("session_id"),
            data.get("agent_name"),
            agent_id,
        )
        try:
            known = self._call_sets.get(key)
        except TypeError:  # an unhashable value (from another plugin's observation)
            known = key = None
        if known is None:
            model = data.get("model") or "model"
            known = (
                f"chat {model}",
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": data.get("provider_kind") or data.get("provider") or "",
                    "gen_ai.request.model": model,
                    "gen_ai.conversation.id": data.get("session_id") or "",
                    "gen_ai.agent.name": data.get("agent_name") or agent_id or "",
                    "gen_ai.agent.id": agent_id or "",
                    "agentrig.provider.id": data.get("provider") or "",
                },
            )
            if key is not None:
                self._call_sets.keep(key, known)
        return known

    def _tool_attributes_of(self, tool: str) -> tuple[str, Mapping[str, Any]]:
        """A tool call span's name and the attributes every call of the tool has (built once
        per tool: read-only)."""
        known = self._tool_sets.get(tool)
        if known is None:
            known = self._tool_sets.keep(
                tool,
                (
                    f"execute_tool {tool}",
                    {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool},
                ),
            )
        return known

    def _finish_reasons(self, stop_reason: Any) -> tuple[str]:
        """``(str(stop_reason),)``, one tuple per reason: shared by the spans that wait for
        export, it leaves their attribute dicts out of the garbage collector's young
        generations (a dict holding only untracked values is not tracked)."""
        try:
            reasons = self._reason_sets.get(stop_reason)
        except TypeError:  # unhashable
            return (str(stop_reason),)
        if reasons is None:
            reasons = self._reason_sets.keep(stop_reason, (str(stop_reason),))
        return reasons

    def _tool(self, call: Observation, live: Span | None) -> None:
        self._tool_span(call, self._pending_of(call), live)

    def _tool_span(self, call: Observation, pending: _Pending | None, live: Span | None) -> None:
        data = call.data
        tool = data.get("tool") or "tool"
        call_id = data.get("call_id") or ""
        status = data.get("status") or "ok"
        name, common = self._tool_attributes_of(tool if type(tool) is str else str(tool))
        attributes = _attributes_to_write(live, name, common)
        attributes["gen_ai.tool.call.id"] = call_id
        attributes["agentrig.tool.status"] = status
        if self._capture:
            captured = self._tool_content(call, call_id)
            if "arguments" in captured:
                attributes["gen_ai.tool.call.arguments"] = _json(captured["arguments"])
            if "result" in captured:
                attributes["gen_ai.tool.call.result"] = _json(captured["result"])
        start = float(data.get("started_at") or 0.0)
        if type(live) is LiveSpan:
            span: Span = live
        else:
            span = self._span(live, name, SpanKind.INTERNAL, start, attributes)
        if pending:
            self._add_events(span, pending)
        if status != "ok":
            error_type = data.get("error_type") or status
            span.set_attribute("error.type", error_type)
            if not data.get("executed"):
                # refused before it ran: a permission rule, a hook, invalid arguments ...
                span.add_event(
                    "agentrig.tool.not_executed",
                    {"agentrig.tool.status": status, "error.type": error_type},
                    timestamp=_ns(start),
                )
            span.set_status(Status(StatusCode.ERROR, error_type))
        if live is None:
            span.end(end_time=_ns(start + float(data.get("duration_ms") or 0.0) / 1000))

    # ---- content (opt-in) ----------------------------------------------------------------
    def _events(self, observation: Observation) -> Any:
        agents = getattr(self.runtime, "agents", None)
        agent_id = observation.agent_id
        agent = agents.get(agent_id) if agents is not None and agent_id else None
        return agent.session.events if agent is not None else ()

    def _tool_content(self, call: Observation, call_id: str) -> dict[str, Any]:
        """A tool call's arguments and result, read from the end of its session log."""
        found: dict[str, Any] = {}
        for event in reversed(self._events(call)):
            message: Any = getattr(event.data, "message", None)
            if event.type == "tool/result" and message.call_id == call_id:
                found["result"] = message.model_dump(mode="json", exclude_none=True).get("content")
            elif event.type == "assistant/message":
                for block in message.tool_calls:
                    if block.id == call_id:
                        found["arguments"] = block.arguments
                        return found
            elif event.type == "turn/start":
                break
        return found

    def _turn_content(self, turn: Observation) -> dict[str, Any]:
        """The turn's messages, read from its session log."""
        number = turn.data.get("turn")
        events: list[Any] = []
        for event in reversed(self._events(turn)):
            events.append(event)
            if event.type == "turn/start" and getattr(event.data, "turn", None) == number:
                break
        inputs: list[Any] = []
        outputs: list[Any] = []
        for event in reversed(events):
            message: Any = getattr(event.data, "message", None)
            if event.type in ("user/message", "steering/message"):
                inputs.append(message.model_dump(mode="json", exclude_none=True))
            elif event.type == "assistant/message":
                outputs.append(message.model_dump(mode="json", exclude_none=True))
        return {"input": inputs, "output": outputs}

    # ---- metrics -------------------------------------------------------------------------
    def _record_call_metrics(self, data: Mapping[str, Any]) -> None:
        metrics = self._metrics
        if metrics is None:
            return
        outcome = data.get("outcome")
        error = None if outcome == "success" else data.get("error_type") or str(outcome)
        key = (
            data.get("provider_kind") or data.get("provider") or "",
            data.get("model") or "",
            data.get("response_model"),
            error,
        )
        sets = self._metric_attributes.get(key)
        if sets is None:
            sets = self._metric_attributes.keep(key, _call_metric_attributes(*key))
        sample = metrics.sample()  # one exemplar decision for the call's points
        usage = data.get("usage")
        if usage is not None:
            (k_in, a_in), (k_out, a_out) = sets[0], sets[1]
            metrics.tokens.record(usage.prompt, k_in, a_in, sample)
            metrics.tokens.record(usage.completion, k_out, a_out, sample)
        k_dur, a_dur = sets[2]
        metrics.duration.record(float(data.get("duration_ms") or 0.0) / 1000, k_dur, a_dur, sample)

    def _record_tool_metrics(self, data: Mapping[str, Any]) -> None:
        metrics = self._metrics
        if metrics is None:
            return
        key = (data.get("tool") or "", data.get("status") or "ok")
        series = self._tool_attributes.get(key)
        if series is None:
            series = self._tool_attributes.keep(
                key, _series({"gen_ai.tool.name": key[0], "agentrig.tool.status": key[1]})
            )
        duration = float(data.get("duration_ms") or 0.0) / 1000
        metrics.tool_duration.record(duration, series[0], series[1], metrics.sample())


#: a metric point's attribute set and its key (``_metrics.series_key``)
_Series = tuple[Hashable, dict[str, Any]]
_MetricAttributes = tuple[_Series, _Series, _Series]


def _series(attributes: dict[str, Any]) -> _Series:
    return series_key(attributes), attributes


def _call_metric_attributes(
    provider: str, model: str, response_model: str | None, error: str | None
) -> _MetricAttributes:
    """The attribute sets of a model call's token (input, output) and duration points."""
    common: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
    }
    if response_model:
        common["gen_ai.response.model"] = response_model
    duration = {**common, "error.type": error} if error is not None else common
    return (
        _series({**common, "gen_ai.token.type": "input"}),
        _series({**common, "gen_ai.token.type": "output"}),
        _series(duration),
    )
