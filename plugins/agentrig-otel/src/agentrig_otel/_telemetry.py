"""Spans and metrics from agentrig's observations, named by the OpenTelemetry GenAI conventions.

Composed into a runtime, :class:`Telemetry` is also its trace context
(``agentrig.plugin.TraceContext``): the loop opens a scope around each turn, model call attempt and
tool call, and each scope is a span started by the tracer and made current in the task that
does the work -- so an HTTP request, a hook, a delegated child agent or a session event inside
it names that span, and W3C ``traceparent`` goes out with them.  The scope says what the
operation is about (the agent, the requested model and its provider, the tool), so the span
starts with its final name (``chat {model}``) and the attributes the GenAI conventions want at
creation (a sampler sees them); the loop's observation of the operation (``observe``) arrives
while the scope is open, adds the rest in one ``set_attributes`` and ends the span.  An
observation without a scope of ours (a direct ``agent.call_tool()``, or another plugin
providing the trace context) becomes a span written from the observation's own timings.

Only OpenTelemetry's public API is used: ``Tracer.start_span``, the context API,
``Span.set_attributes`` / ``add_event`` / ``set_status`` / ``end`` and the meter's
histograms.  Whatever tracer or meter provider is behind them works the same way.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Mapping
from contextvars import ContextVar, Token
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.metrics import Meter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from agentrig.plugin import (
    TRACE_CONTEXT,
    AgentDisposed,
    Composition,
    Observation,
    ScopeKind,
    compose_step,
    hookimpl,
)
from agentrig.redaction import redact
from agentrig_otel._conventions import (
    finish_reason,
    input_messages,
    output_messages,
    provider_kind,
    server_of,
)
from agentrig_otel._instruments import Instruments

__all__ = ["Telemetry", "redact"]  # redact: agentrig's one shared redactor, re-exported

#: keys of events waiting for their span kept at most (the oldest are dropped beyond it)
MAX_PENDING = 4096
#: the tool type of every agentrig tool: the agent builds the call, the process runs it
TOOL_TYPE = "function"


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


#: the last trace id formatted, and its hex: every span of a run shares the run's trace id
_last_trace: list[tuple[int, str]] = [(0, "0" * 32)]


def _hex_ids(span: Span) -> tuple[str, str] | None:
    """``(trace_id, span_id)`` as hex; None for a span that records nothing (no-op tracer)."""
    ctx = span.get_span_context()
    if not ctx.is_valid:
        return None
    trace_id = ctx.trace_id
    last = _last_trace[0]
    if last[0] != trace_id:
        last = _last_trace[0] = (trace_id, format(trace_id, "032x"))
    return last[1], format(ctx.span_id, "016x")


#: how a span starts: its name, its kind and the attributes known before the operation runs
_Start = tuple[str, SpanKind, Mapping[str, Any]]
#: what a span is about: its kind, agent, subject and (a model call's) provider
_About = tuple[ScopeKind, str, str, str | None]
#: starts kept at most, by what a scope is about (cleared beyond it: they are rebuilt)
MAX_STARTS = 1024

#: events (name, attributes, unix time) waiting for the span they belong to; a permission
#: decision waits as ``_DECISION`` (its attributes go on the tool call's span)
_Pending = list[tuple[str, Mapping[str, Any], float]]
_DECISION = "agentrig.permission"

#: a permission decision's attributes by (allowed, reason), built once each (bounded)
_DECISIONS: dict[tuple[bool, str | None], Mapping[str, Any]] = {}


def _decision_attributes(allowed: bool, reason: Any) -> Mapping[str, Any]:
    attributes: dict[str, Any] = {"agentrig.permission.outcome": "allow" if allowed else "deny"}
    if reason:  # an allow by no rule at all has none
        attributes["agentrig.permission.reason"] = str(reason)
    if len(_DECISIONS) < 256:
        _DECISIONS[(allowed, reason or None)] = attributes
    return attributes


#: the observations that are spans (a scope's kinds)
_SPANS = frozenset(("model_call", "tool_call", "turn"))

#: the scope of ours current in this context; None inside an inbound trace context
_LIVE: ContextVar[_Scope | None] = ContextVar("agentrig_otel_scope", default=None)


class _Scope:
    """A span made current until :meth:`close` (see ``agentrig.plugin.TraceContext``)."""

    __slots__ = (
        "_live",
        "_token",
        "decision",
        "ended",
        "hex_ids",
        "last_call",
        "owner",
        "parent",
        "scope_kind",
        "span",
    )

    def __init__(
        self, owner: Telemetry, kind: ScopeKind, span: Span, context: otel_context.Context
    ) -> None:
        self.owner = owner
        self.scope_kind = kind
        self.span = span
        self.ended = False
        #: what each session event appended in the scope carries (most scopes append some)
        self.hex_ids = _hex_ids(span)
        #: a turn's: the observation data of its last model call (which model it asked for,
        #: which answered, why it stopped)
        self.last_call: Mapping[str, Any] | None = None
        #: a tool call's: the permission decision's attributes, set with the span's own
        self.decision: Mapping[str, Any] | None = None
        self.parent = _LIVE.get()
        # ``context`` is the current one, read once by open() (the tracer asked it too)
        self._token = otel_context.attach(trace.set_span_in_context(span, context))
        self._live: Token[_Scope | None] = _LIVE.set(self)

    def end(self) -> None:
        self.ended = True
        self.span.end()

    def close(self) -> None:
        if _LIVE.get() is self:  # the context that opened it (the loop closes it there)
            _LIVE.reset(self._live)
            otel_context.detach(self._token)
        if not self.ended:  # no observation came (no listener saw it): end it here
            self.end()


class _Continued:
    """An inbound trace context made current until :meth:`close`."""

    __slots__ = ("_live", "_token")

    def __init__(self, headers: Mapping[str, str]) -> None:
        self._token = otel_context.attach(propagate.extract(dict(headers)))
        self._live = _LIVE.set(None)

    def close(self) -> None:
        _LIVE.reset(self._live)
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
        meter: Meter | None = None,
        *,
        capture_content: bool = False,
        runtime: Any = None,
    ) -> None:
        self._tracer = tracer
        self._capture = capture_content
        self.runtime = runtime
        # hook executions and permission decisions outside any scope of ours, waiting for
        # the span they belong to: the tool call's span by call id, else the session's next turn
        self._by_call: OrderedDict[str, _Pending] = OrderedDict()
        self._by_session: OrderedDict[str, _Pending] = OrderedDict()
        self._metrics = Instruments(meter) if meter is not None else None
        #: how a span about (kind, agent or provider, subject) starts (see :meth:`_start_of`)
        self._starts: dict[tuple[str, str | None, str], _Start] = {}

    # ---- the trace context (agentrig.plugin.TraceContext) -------------------------
    def open(
        self, kind: ScopeKind, agent_id: str, subject: str, provider: str | None = None
    ) -> _Scope:
        """A live span of ``kind`` about ``subject``, current in this task until the scope
        closes; it starts with its name and the attributes known before the operation."""
        start = self._starts.get((kind, provider if kind == "model_call" else agent_id, subject))
        if start is None:
            start = self._start(kind, agent_id, subject, provider)
        # the current context, read once: the tracer's parent and the scope's base
        name, span_kind, attributes = start
        context = otel_context.get_current()
        span = self._tracer.start_span(name, context, span_kind, attributes)
        return _Scope(self, kind, span, context)

    def headers(self) -> dict[str, str]:
        """``traceparent`` (and ``tracestate``) of the current context."""
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        return carrier

    def ids(self) -> tuple[str, str] | None:
        """The current span's trace id and span id (hex), or None outside a span."""
        live = _LIVE.get()
        if live is not None:
            return live.hex_ids
        return _hex_ids(trace.get_current_span())

    def continue_from(self, headers: Mapping[str, str]) -> _Continued:
        """Make an inbound request's trace context current (the run becomes its child)."""
        return _Continued(headers)

    # ---- the hooks -----------------------------------------------------------------------
    @compose_step("check")
    def provide_trace_context(self, payload: Composition) -> None:
        """Be the runtime's trace context (unless another plugin already is)."""
        if self.runtime is None:  # what the spans' start attributes are looked up in
            self.runtime = payload.runtime
        services = payload.runtime.services
        if not services.has(TRACE_CONTEXT):
            services.provide(TRACE_CONTEXT, self, source="agentrig-otel")

    @hookimpl
    def session_start(self, payload: Any) -> None:
        if self.runtime is None:
            self.runtime = payload.runtime

    @hookimpl
    def agent_disposed(self, payload: AgentDisposed) -> None:
        """Forget how the agent's spans start: an agent created later under the same id may
        have another description and other tools."""
        gone = payload.agent_id
        for key in [k for k in self._starts if k[0] != "model_call" and k[1] == gone]:
            del self._starts[key]

    @hookimpl
    def observe(self, payload: Observation) -> None:
        """An operation's observation: its metrics, then its span (the live one if open);
        a permission decision or a hook execution goes to the span it belongs to."""
        kind = payload.kind
        if kind not in _SPANS:
            if kind == "permission":
                self._decision(payload.data)
            elif kind == "hook":
                self._event(payload)
            return
        data = payload.data
        if self._metrics is not None:
            if kind == "model_call":
                self._metrics.model_call(data)
            elif kind == "tool_call":
                self._metrics.tool_call(data)
        live = _LIVE.get()
        if live is None or live.owner is not self or live.scope_kind != kind or live.ended:
            live = None
        elif kind == "model_call" and live.parent is not None:
            live.parent.last_call = data  # the turn's span says which model was asked, answered
        pending = self._pending_of(kind, data) if self._by_call or self._by_session else None
        span = None
        if live is not None:
            span = live.span
            if not span.is_recording():
                live.end()  # sampled out: nothing to write
                return
        if kind == "model_call":
            self._call(payload, span)
        elif kind == "tool_call":
            self._tool(payload, pending, span, live.decision if live is not None else None)
        else:
            self._turn(payload, pending, span, live)
        if live is not None:
            live.ended = True  # Scope.end(), written out: once per operation
            live.span.end()

    def _pending_of(self, kind: str, data: Mapping[str, Any]) -> _Pending | None:
        """The events kept for the span of a tool call (by call id) or a turn (by session)."""
        if kind == "tool_call":
            return self._by_call.pop(data.get("call_id") or "", None)
        if kind == "turn":
            return self._by_session.pop(data.get("session_id") or "", None)
        return None

    def _event(self, payload: Observation) -> None:
        """A hook execution: an event on the current span of ours, else kept for the span it
        belongs to."""
        data = payload.data
        name = f"agentrig.hook {data.get('event')}"
        attributes: dict[str, Any] = {
            "agentrig.hook.event": str(data.get("event") or ""),
            "agentrig.hook.name": str(data.get("hook") or ""),
            "agentrig.hook.strategy": str(data.get("strategy") or ""),
            "agentrig.hook.outcome": str(data.get("outcome") or ""),
            "agentrig.hook.duration_ms": float(data.get("duration_ms") or 0.0),
        }
        if data.get("reason"):
            attributes["agentrig.hook.reason"] = str(data["reason"])
        when = float(data.get("started_at") or time.time())
        live = _LIVE.get()
        if live is not None and live.owner is self and not live.ended:
            live.span.add_event(name, attributes, _ns(when))
            return
        call_id, session_id = data.get("call_id"), data.get("session_id")
        pending = self._by_call if call_id else self._by_session
        key = call_id or session_id
        if not key:
            return
        pending.setdefault(key, []).append((name, attributes, when))
        if len(pending) > MAX_PENDING:
            pending.popitem(last=False)

    def _decision(self, data: Mapping[str, Any]) -> None:
        """A permission decision: attributes of its tool call's span, set with the span's own
        (one decision per call, made as it starts -- a property of the call, not an event)."""
        attributes = _DECISIONS.get((bool(data.get("allowed")), data.get("reason") or None))
        if attributes is None:
            attributes = _decision_attributes(bool(data.get("allowed")), data.get("reason"))
        live = _LIVE.get()
        if live is not None and live.owner is self and live.scope_kind == "tool_call":
            if not live.ended:
                live.decision = attributes
            return
        call_id = data.get("call_id")
        if call_id:  # a call outside a scope of ours: kept for the span its observation writes
            self._by_call.setdefault(call_id, []).append((_DECISION, attributes, 0.0))
            if len(self._by_call) > MAX_PENDING:
                self._by_call.popitem(last=False)

    # ---- how spans start (looked up once per subject) -------------------------------------
    def _start(self, kind: ScopeKind, agent_id: str, subject: str, provider: str | None) -> _Start:
        """How a span about ``subject`` starts (kept: a model call's by provider, the others'
        by agent, since the agent's configuration says what its tools and it are)."""
        key = (kind, provider if kind == "model_call" else agent_id, subject)
        start = self._starts.get(key)
        if start is None:
            if len(self._starts) >= MAX_STARTS:
                self._starts.clear()
            start = self._starts[key] = self._start_of(kind, agent_id, subject, provider)
        return start

    def _start_of(
        self, kind: ScopeKind, agent_id: str, subject: str, provider: str | None
    ) -> _Start:
        """A span's final name, its kind, and the attributes the GenAI conventions want at
        its creation (what a sampler may decide on) that do not change between operations."""
        attributes: dict[str, Any]
        if kind == "model_call":
            name = provider_kind(self.runtime, provider) or provider or ""
            attributes = {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": name,
                "gen_ai.request.model": subject,
            }
            if provider and provider != name:  # which of the configured providers of a kind
                attributes["agentrig.provider.id"] = provider
            attributes.update(server_of(self.runtime, provider))
            return f"chat {subject}", SpanKind.CLIENT, attributes
        if kind == "tool_call":
            attributes = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": subject,
                "gen_ai.tool.type": TOOL_TYPE,
            }
            description = self._tool_description(agent_id, subject)
            if description:
                attributes["gen_ai.tool.description"] = description
            return f"execute_tool {subject}", SpanKind.INTERNAL, attributes
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": subject,
            "gen_ai.agent.id": agent_id,
        }
        description = _config_text(self._agent(agent_id), "description")
        if description:
            attributes["gen_ai.agent.description"] = description
        return f"invoke_agent {subject}", SpanKind.INTERNAL, attributes

    def _unscoped(
        self,
        about: _About,
        data: Mapping[str, Any],
        attributes: dict[str, Any],
    ) -> Span:
        """A span for an observation without a live one: ``about`` (kind, agent, subject,
        provider) with its start attributes and these, started at the observation's own
        start time (its caller ends it)."""
        name, kind, first = self._start(*about)
        return self._tracer.start_span(
            name, kind=kind, start_time=_ns(_started(data)), attributes={**first, **attributes}
        )

    # ---- spans ---------------------------------------------------------------------------
    def _turn(
        self, turn: Observation, pending: _Pending | None, live: Span | None, scope: _Scope | None
    ) -> None:
        data = turn.data
        agent_id = turn.agent_id or ""
        start = float(data.get("started_at") or 0.0)
        reason = data.get("reason")
        attributes: dict[str, Any] = {
            "gen_ai.conversation.id": data.get("session_id") or "",
            "agentrig.run.id": data.get("run_id") or "",
            "agentrig.turn": data.get("turn") or 0,
            "agentrig.turn.trigger": data.get("trigger") or "",
            "agentrig.turn.reason": reason or "",
        }
        call = scope.last_call if scope is not None else None
        if call is not None:  # its last model call: which model it asked for, which answered
            attributes["gen_ai.provider.name"] = _provider_name(call)
            attributes["gen_ai.request.model"] = call.get("model") or ""
            if answered := call.get("response_model"):
                attributes["gen_ai.response.model"] = answered
            if stop_reason := call.get("stop_reason"):  # a list: see _call
                attributes["gen_ai.response.finish_reasons"] = [finish_reason(stop_reason)]
        elif data.get("model"):  # no model call of ours seen: what the turn reports
            attributes["gen_ai.response.model"] = data["model"]
        _usage(attributes, data.get("usage"))
        if self._capture:
            self._turn_captured(turn, attributes)
        if reason == "failed":
            attributes["error.type"] = data.get("error_type") or "failed"
        elif reason in ("interrupted", "timeout"):  # cancelled, or past the run's deadline
            attributes["error.type"] = reason
        agent = data.get("agent_name") or agent_id or "agent"  # the configured name
        if live is not None:
            live.set_attributes(attributes)
            span = live
        else:
            span = self._unscoped(("turn", agent_id, agent, None), data, attributes)
        for name, event_attributes, when in pending or ():
            span.add_event(name, event_attributes, timestamp=_ns(when))
        if reason == "failed":
            span.set_status(Status(StatusCode.ERROR, data.get("error_code") or "failed"))
        elif reason in ("interrupted", "timeout"):
            span.add_event(f"agentrig.run.{reason}")
            span.set_status(Status(StatusCode.ERROR, reason))
        if live is None:
            span.end(end_time=_ns(start + float(data.get("duration_ms") or 0.0) / 1000))

    def _turn_captured(self, turn: Observation, attributes: dict[str, Any]) -> None:
        """The turn's messages and its agent's instructions (content capture is on)."""
        inputs, outputs = self._turn_content(turn)
        if inputs:
            attributes["gen_ai.input.messages"] = inputs
        if outputs:
            attributes["gen_ai.output.messages"] = outputs
        instructions = _config_text(self._agent(turn.agent_id), "system_prompt")
        if instructions:
            attributes["gen_ai.system_instructions"] = _json(
                [{"type": "text", "content": instructions}]
            )

    def _call(self, call: Observation, live: Span | None) -> None:
        data = call.data
        attributes: dict[str, Any] = {"gen_ai.conversation.id": data.get("session_id") or ""}
        attempt = data.get("attempt")
        if attempt and attempt > 1:  # a retry of the same round
            attributes["agentrig.attempt"] = attempt
        if response_model := data.get("response_model"):
            attributes["gen_ai.response.model"] = response_model
        if response_id := data.get("response_id"):
            attributes["gen_ai.response.id"] = response_id
        if stop_reason := data.get("stop_reason"):
            # a list, which the SDK stores as a tuple: handed a tuple, its attribute check asks
            # isinstance(value, Sequence) through three Python-level ABC calls (CPython does
            # not cache a class registered directly), a list is answered from the ABC cache
            attributes["gen_ai.response.finish_reasons"] = [finish_reason(stop_reason)]
        if (first := data.get("time_to_first_chunk_ms")) is not None:
            attributes["gen_ai.response.time_to_first_chunk"] = float(first) / 1000
        if (max_tokens := data.get("max_tokens")) is not None:
            attributes["gen_ai.request.max_tokens"] = max_tokens
        if (temperature := data.get("temperature")) is not None:
            attributes["gen_ai.request.temperature"] = temperature
        if (usage := data.get("usage")) is not None:
            _usage(attributes, usage)
        outcome = data.get("outcome")
        if outcome != "success":
            attributes["error.type"] = data.get("error_type") or str(outcome)
        if live is not None:
            live.set_attributes(attributes)
            span = live
        else:
            model, provider = data.get("model") or "model", data.get("provider") or None
            about: _About = ("model_call", "", model, provider)
            span = self._unscoped(about, data, attributes)
        if outcome != "success":
            span.set_status(Status(StatusCode.ERROR, data.get("error_code") or str(outcome)))
        if live is None:
            ended = data.get("ended_at") or data.get("started_at") or 0.0
            span.end(end_time=_ns(float(ended)))

    def _tool(
        self,
        call: Observation,
        pending: _Pending | None,
        live: Span | None,
        decision: Mapping[str, Any] | None,
    ) -> None:
        data = call.data
        call_id = data.get("call_id") or ""
        status = data.get("status") or "ok"
        attributes: dict[str, Any] = {"gen_ai.tool.call.id": call_id}
        if status != "ok":  # a success is the absence of error.type, as the conventions say
            attributes["agentrig.tool.status"] = status
        if pending:  # what came outside its scope: the decision is attributes, the rest events
            for name, event_attributes, _ in pending:
                if name == _DECISION:
                    decision = event_attributes
            pending = [event for event in pending if event[0] != _DECISION]
        if decision is not None:
            attributes.update(decision)
        if self._capture:
            captured = self._tool_content(call, call_id)
            if "arguments" in captured:
                attributes["gen_ai.tool.call.arguments"] = captured["arguments"]
            if "result" in captured:
                attributes["gen_ai.tool.call.result"] = captured["result"]
        error_type = None if status == "ok" else data.get("error_type") or status
        if error_type is not None:
            attributes["error.type"] = error_type
        if live is not None:
            live.set_attributes(attributes)
            span = live
        else:
            tool = str(data.get("tool") or "tool")
            about: _About = ("tool_call", call.agent_id or "", tool, None)
            span = self._unscoped(about, data, attributes)
        for name, event_attributes, when in pending or ():
            span.add_event(name, event_attributes, timestamp=_ns(when))
        start = 0.0 if live is not None and error_type is None else _started(data)
        if error_type is not None:
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

    # ---- what the runtime says of agents and their tools -------------------------------
    def _tool_description(self, agent_id: Any, tool: str) -> str | None:
        agent = self._agent(agent_id)
        if agent is not None:
            for each in agent.all_tools():
                if str(each.id) == tool:
                    return each.description or None
        return None

    def _agent(self, agent_id: Any) -> Any:
        agents = getattr(self.runtime, "agents", None)
        return agents.get(agent_id) if agents is not None and agent_id else None

    # ---- content (opt-in) ----------------------------------------------------------------
    def _events(self, observation: Observation) -> Any:
        agent = self._agent(observation.agent_id)
        return agent.session.events if agent is not None else ()

    def _tool_content(self, call: Observation, call_id: str) -> dict[str, str]:
        """A tool call's arguments and result (JSON), read from the end of its session log."""
        found: dict[str, str] = {}
        for event in reversed(self._events(call)):
            message: Any = getattr(event.data, "message", None)
            if event.type == "tool/result" and message.call_id == call_id:
                content = message.model_dump(mode="json", exclude_none=True).get("content")
                found["result"] = _json(content)
            elif event.type == "assistant/message":
                for block in message.tool_calls:
                    if block.id == call_id:
                        found["arguments"] = _json(block.arguments)
                        return found
            elif event.type == "turn/start":
                break
        return found

    def _turn_content(self, turn: Observation) -> tuple[str | None, str | None]:
        """The turn's input and output messages (JSON in the conventions' message schema),
        read from its session log."""
        number = turn.data.get("turn")
        events: list[Any] = []
        for event in reversed(self._events(turn)):
            events.append(event)
            if event.type == "turn/start" and getattr(event.data, "turn", None) == number:
                break
        events.reverse()
        inputs = input_messages(events)
        outputs = output_messages(events)
        return (_json(inputs) if inputs else None, _json(outputs) if outputs else None)


def _started(data: Mapping[str, Any]) -> float:
    """When the observed operation started (seconds since the epoch)."""
    return float(data.get("started_at") or 0.0)


def _usage(attributes: dict[str, Any], usage: Any) -> None:
    """The token counts of ``usage`` (an ``agentrig.llm.Usage``) that were reported."""
    if usage is None:
        return
    attributes["gen_ai.usage.input_tokens"] = usage.prompt
    attributes["gen_ai.usage.output_tokens"] = usage.completion
    if usage.cache_read is not None:
        attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read
    if usage.cache_write is not None:
        attributes["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write
    if usage.reasoning is not None:
        attributes["gen_ai.usage.reasoning.output_tokens"] = usage.reasoning


def _config_text(agent: Any, key: str) -> str | None:
    """A text setting of an agent's configuration (its description, its system prompt)."""
    value = getattr(getattr(agent, "config", None), key, None)
    return value if isinstance(value, str) else None


def _provider_name(data: Mapping[str, Any]) -> str:
    return str(data.get("provider_kind") or data.get("provider") or "")


def _json(value: Any) -> str:
    return json.dumps(redact(value), ensure_ascii=False, default=str)
