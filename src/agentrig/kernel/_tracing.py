"""Trace context: the one seam a tracing plugin fills; agentrig itself knows no tracer.

A tracing plugin (``agentrig-otel``) provides :data:`TRACE_CONTEXT`; the loop opens a scope
around each turn, model call attempt and tool call, events carry the span's ids, and requests
to destinations that opted in carry its W3C headers (``docs/plugin-guide.md`` §10).  Headers
are the currency, so the kernel needs no tracing library; without the service nothing here
runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agentrig.kernel._services import ServiceKey

if TYPE_CHECKING:
    import httpx

__all__ = [
    "TRACE_CONTEXT",
    "ScopeKind",
    "TraceContext",
    "TraceScope",
    "add_trace_hook",
    "trace_env",
    "trace_origin",
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


class _Traced(Protocol):
    @property
    def trace(self) -> TraceContext | None: ...


def trace_origin(url: object) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of ``url`` (a string or ``httpx.URL``), the default port
    filled in; None for what is not an absolute http(s) URL."""
    import httpx

    try:
        parsed = url if isinstance(url, httpx.URL) else httpx.URL(str(url))
    except (httpx.InvalidURL, TypeError, ValueError):
        return None
    scheme = parsed.scheme.lower()
    if scheme not in ("http", "https") or not parsed.host:
        return None
    port = parsed.port or (443 if scheme == "https" else 80)
    return scheme, parsed.host.lower(), port


def add_trace_hook(kwargs: dict[str, Any], runtime: _Traced, trace_to: Iterable[str] = ()) -> None:
    """Add to httpx client ``kwargs`` a request hook sending ``runtime.trace``'s headers to
    the exact origins (scheme, host, port) of ``trace_to`` only: a URL a tool fetches or a
    redirect elsewhere carries no trace identifiers.  ``runtime.trace`` is read per request,
    so a client built during composition traces once a plugin provided it; headers the
    caller set win.
    """
    origins = frozenset(o for o in (trace_origin(u) for u in trace_to) if o is not None)
    if not origins:
        return  # nothing opted in: the client sends no trace headers at all

    async def inject(request: httpx.Request) -> None:
        trace = runtime.trace
        if trace is not None and trace_origin(request.url) in origins:
            for name, value in trace.headers().items():
                request.headers.setdefault(name, value)

    hooks = dict(kwargs.get("event_hooks") or {})
    hooks["request"] = [inject, *hooks.get("request", ())]
    kwargs["event_hooks"] = hooks
