"""Spans and metrics from agentrig's observations, named by the OpenTelemetry GenAI conventions.

The loop reports each model call, tool call and turn when it *finished*, with its start time
and duration (``observe``; see agentrig's ``docs/hooks.md``).  This listener keeps the
observations of a running turn and, when the turn ends, writes its spans with their real
start and end times: one ``invoke_agent {agent}`` span per turn, with a ``chat {model}`` span
per model call and an ``execute_tool {tool}`` span per tool call as its children.  Building
the spans at the end keeps the loop free of tracing work and needs no live span state; the
cost is that a turn's spans reach the exporter when the turn ends.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.metrics import Meter
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from agentrig.plugin import Observation, hookimpl

__all__ = ["Telemetry", "redact"]

log = logging.getLogger("agentrig.otel")

#: open turns kept at most (a turn whose end never comes -- a killed process -- is dropped)
MAX_OPEN_TURNS = 4096

_SECRET_KEY = re.compile(
    r"(?i)(api[_-]?key|token|secret|passw(or)?d|authorization|cookie|credential|private[_-]?key)"
)
REDACTED = "[REDACTED]"


def redact(value: Any) -> Any:
    """``value`` with the values of secret-like keys replaced, at any depth."""
    if isinstance(value, Mapping):
        return {
            k: (REDACTED if isinstance(k, str) and _SECRET_KEY.search(k) else redact(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


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


class Telemetry:
    """An ``observe`` listener that turns observations into spans and metrics."""

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
        self._open: OrderedDict[tuple[Any, Any, Any], list[Observation]] = OrderedDict()
        # permission decisions and hook executions waiting for their span
        self._by_call: OrderedDict[str, list[tuple[str, dict[str, Any], float]]] = OrderedDict()
        self._by_session: OrderedDict[str, list[tuple[str, dict[str, Any], float]]] = OrderedDict()
        self._tokens = self._duration = self._tool_duration = None
        if meter is not None:
            self._tokens = meter.create_histogram(
                "gen_ai.client.token.usage", unit="{token}", description="Tokens per model call"
            )
            self._duration = meter.create_histogram(
                "gen_ai.client.operation.duration", unit="s", description="Model call duration"
            )
            # its count is the number of calls by tool and outcome: no separate counter
            self._tool_duration = meter.create_histogram(
                "agentrig.tool.duration", unit="s", description="Tool calls by tool and outcome"
            )

    # ---- the hooks -----------------------------------------------------------------------
    @hookimpl
    def session_start(self, payload: Any) -> None:
        if self.runtime is None:
            self.runtime = payload.runtime

    @hookimpl
    def observe(self, payload: Observation) -> None:
        kind = payload.kind
        if kind in ("permission", "hook"):
            self._pending_event(payload)
            return
        if kind not in ("model_call", "tool_call", "turn"):
            return
        data = payload.data
        if kind == "model_call":
            self._record_call_metrics(data)
        elif kind == "tool_call":
            self._record_tool_metrics(data)
        key = (data.get("session_id"), data.get("run_id"), data.get("turn"))
        if kind == "turn":
            children = self._open.pop(key, [])
            self._write_turn(payload, children)
        elif data.get("turn") is None:  # a direct agent.call_tool(): no turn to wait for
            self._write_tool(payload, None, {})
        else:
            self._open.setdefault(key, []).append(payload)
            if len(self._open) > MAX_OPEN_TURNS:
                dropped, _ = self._open.popitem(last=False)
                log.warning(
                    "agentrig-otel: dropped the spans of a turn that never ended: %s", dropped
                )

    def _pending_event(self, payload: Observation) -> None:
        """Keep a permission decision or hook execution for the span it belongs to: the tool
        call's span when it names one, otherwise the session's next turn span."""
        data = payload.data
        if payload.kind == "permission":
            name = "agentrig.permission"
            attributes: dict[str, Any] = {
                "agentrig.permission.outcome": "allow" if data.get("allowed") else "deny",
                "agentrig.permission.reason": str(data.get("reason") or ""),
            }
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
        call_id, session_id = data.get("call_id"), data.get("session_id")
        pending = self._by_call if call_id else self._by_session
        key = call_id or session_id
        if not key:
            return
        pending.setdefault(key, []).append((name, attributes, when))
        if len(pending) > MAX_OPEN_TURNS:
            pending.popitem(last=False)

    @staticmethod
    def _add_events(span: Any, events: list[tuple[str, dict[str, Any], float]]) -> None:
        for name, attributes, when in events:
            span.add_event(name, attributes, timestamp=_ns(when))

    # ---- spans ---------------------------------------------------------------------------
    def _write_turn(self, turn: Observation, children: Sequence[Observation]) -> None:
        data = turn.data
        agent = turn.agent_id or "agent"
        start = float(data.get("started_at") or 0.0)
        end = start + float(data.get("duration_ms") or 0.0) / 1000
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
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
        span = self._tracer.start_span(
            f"invoke_agent {agent}",
            kind=SpanKind.INTERNAL,
            start_time=_ns(start),
            attributes=attributes,
        )
        self._add_events(span, self._by_session.pop(data.get("session_id") or "", []))
        reason = data.get("reason")
        if reason == "failed":
            span.set_attribute("error.type", data.get("error_type") or "failed")
            span.set_status(Status(StatusCode.ERROR, data.get("error_code") or "failed"))
        elif reason == "interrupted":
            span.add_event("agentrig.run.interrupted", timestamp=_ns(end))
            span.set_attribute("error.type", "interrupted")
            span.set_status(Status(StatusCode.ERROR, "interrupted"))
        parent = trace.set_span_in_context(span)
        for child in children:
            if child.kind == "model_call":
                self._write_call(child, parent)
            else:
                self._write_tool(child, parent, content.get("tools", {}))
        span.end(end_time=_ns(end))

    def _write_call(self, call: Observation, parent: Any) -> None:
        data = call.data
        model = data.get("model") or "model"
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": data.get("provider_kind") or data.get("provider") or "",
            "gen_ai.request.model": model,
            "gen_ai.conversation.id": data.get("session_id") or "",
            "gen_ai.agent.name": call.agent_id or "",
            "agentrig.provider.id": data.get("provider") or "",
        }
        if (data.get("attempt") or 1) > 1:  # a retry of the same round
            attributes["agentrig.attempt"] = data["attempt"]
        if data.get("response_model"):
            attributes["gen_ai.response.model"] = data["response_model"]
        if data.get("stop_reason"):
            attributes["gen_ai.response.finish_reasons"] = [str(data["stop_reason"])]
        if data.get("time_to_first_chunk_ms") is not None:
            attributes["agentrig.time_to_first_chunk_ms"] = float(data["time_to_first_chunk_ms"])
        attributes.update(_usage_attributes(data.get("usage")))
        start = float(data.get("started_at") or 0.0)
        end = float(data.get("ended_at") or start)
        span = self._tracer.start_span(
            f"chat {model}",
            context=parent,
            kind=SpanKind.CLIENT,
            start_time=_ns(start),
            attributes=attributes,
        )
        outcome = data.get("outcome")
        if outcome != "success":
            span.set_attribute("error.type", data.get("error_type") or str(outcome))
            span.set_status(Status(StatusCode.ERROR, data.get("error_code") or str(outcome)))
        span.end(end_time=_ns(end))

    def _write_tool(self, call: Observation, parent: Any, content: Mapping[str, Any]) -> None:
        data = call.data
        tool = data.get("tool") or "tool"
        call_id = data.get("call_id") or ""
        status = data.get("status") or "ok"
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": call_id,
            "agentrig.tool.status": status,
        }
        captured = content.get(call_id)
        if captured is not None:
            if "arguments" in captured:
                attributes["gen_ai.tool.call.arguments"] = _json(captured["arguments"])
            if "result" in captured:
                attributes["gen_ai.tool.call.result"] = _json(captured["result"])
        start = float(data.get("started_at") or 0.0)
        end = start + float(data.get("duration_ms") or 0.0) / 1000
        span = self._tracer.start_span(
            f"execute_tool {tool}",
            context=parent,
            kind=SpanKind.INTERNAL,
            start_time=_ns(start),
            attributes=attributes,
        )
        self._add_events(span, self._by_call.pop(call_id, []))
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
        span.end(end_time=_ns(end))

    # ---- content (opt-in) ----------------------------------------------------------------
    def _turn_content(self, turn: Observation) -> dict[str, Any]:
        """The turn's messages and tool arguments/results, read from its session log."""
        agents = getattr(self.runtime, "agents", None)
        agent = agents.get(turn.agent_id) if agents is not None and turn.agent_id else None
        if agent is None:
            return {}
        number = turn.data.get("turn")
        events: list[Any] = []
        for event in reversed(agent.session.events):
            events.append(event)
            if event.type == "turn/start" and getattr(event.data, "turn", None) == number:
                break
        inputs: list[Any] = []
        outputs: list[Any] = []
        tools: dict[str, dict[str, Any]] = {}
        for event in reversed(events):
            message = getattr(event.data, "message", None)
            if message is None:
                continue
            dumped = message.model_dump(mode="json", exclude_none=True)
            if event.type in ("user/message", "steering/message"):
                inputs.append(dumped)
            elif event.type == "assistant/message":
                outputs.append(dumped)
                for block in message.tool_calls:
                    tools.setdefault(block.id, {})["arguments"] = block.arguments
            elif event.type == "tool/result":
                tools.setdefault(message.call_id, {})["result"] = dumped.get("content")
        return {"input": inputs, "output": outputs, "tools": tools}

    # ---- metrics -------------------------------------------------------------------------
    def _record_call_metrics(self, data: Mapping[str, Any]) -> None:
        if self._duration is None or self._tokens is None:
            return
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": data.get("provider_kind") or data.get("provider") or "",
            "gen_ai.request.model": data.get("model") or "",
        }
        if data.get("response_model"):
            attributes["gen_ai.response.model"] = data["response_model"]
        usage = data.get("usage")
        if usage is not None:
            self._tokens.record(usage.prompt, {**attributes, "gen_ai.token.type": "input"})
            self._tokens.record(usage.completion, {**attributes, "gen_ai.token.type": "output"})
        if data.get("outcome") != "success":
            attributes["error.type"] = data.get("error_type") or str(data.get("outcome"))
        self._duration.record(float(data.get("duration_ms") or 0.0) / 1000, attributes)

    def _record_tool_metrics(self, data: Mapping[str, Any]) -> None:
        if self._tool_duration is None:
            return
        attributes = {
            "gen_ai.tool.name": data.get("tool") or "",
            "agentrig.tool.status": data.get("status") or "ok",
        }
        self._tool_duration.record(float(data.get("duration_ms") or 0.0) / 1000, attributes)
