"""Trace context: the one seam a tracing plugin fills; agentrig itself knows no tracer.

A tracing plugin (``agentrig-otel``) provides :data:`TRACE_CONTEXT` as a runtime service; the
loop opens a scope around each turn, model call attempt and tool call, events carry the span's
ids, and requests to destinations that opted in carry its W3C headers (``docs/plugin-guide.md``
§10).  Whoever traces reads the service (``rt.services.get(TRACE_CONTEXT)``; None: no
tracing).  A contract of the layers that trace -- the loop, the hook strategies, egress --
not of the kernel, which traces nothing; headers are the currency, so no layer needs a
tracing library.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, Protocol

from agentrig.kernel import ServiceKey

__all__ = [
    "TRACE_CONTEXT",
    "ScopeKind",
    "TraceContext",
    "TraceScope",
    "trace_env",
]

#: What a scope is around: a turn, one attempt of a model call, one tool call.
ScopeKind = Literal["turn", "model_call", "tool_call"]


class TraceScope(Protocol):
    """An open scope; ``close()`` ends it, in the task that opened it."""

    def close(self) -> None: ...


class TraceContext(Protocol):
    """What a tracing plugin provides as :data:`TRACE_CONTEXT` (all calls synchronous)."""

    def open(
        self, kind: ScopeKind, agent_id: str, subject: str, provider: str | None = None
    ) -> TraceScope:
        """Make a new span of ``kind`` current in this task until the scope is closed.

        ``subject`` is known before the operation starts (the agent's name, the requested
        model, the called tool's name), so a span gets its final name and what a sampler
        looks at from the start; ``provider`` is a model call's provider id.
        """
        ...

    def headers(self) -> dict[str, str]:
        """The W3C headers of the current context (``traceparent``, maybe ``tracestate``)."""
        ...

    def ids(self) -> tuple[str, str] | None:
        """``(trace_id, span_id)`` of the current span as lowercase hex, or None outside one."""
        ...

    def continue_from(self, headers: Mapping[str, str]) -> TraceScope:
        """Make the trace context of inbound ``headers`` current until the scope is closed."""
        ...


#: Checked when provided: a trace context whose methods take other parameters (``open``
#: of an older release, without ``subject``) is refused then, not at the first turn.
TRACE_CONTEXT: ServiceKey[TraceContext] = ServiceKey(
    "agentrig.trace_context", protocol=TraceContext
)

_ENV = {"traceparent": "TRACEPARENT", "tracestate": "TRACESTATE"}


def trace_env(headers: Mapping[str, str]) -> dict[str, str]:
    """The environment variables a child process gets for ``headers`` (``TRACEPARENT`` ...)."""
    return {_ENV[k]: v for k, v in headers.items() if k in _ENV}
