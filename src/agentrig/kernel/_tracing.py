"""Trace context: the one seam a tracing plugin fills; agentrig itself knows no tracer.

A plugin that traces (``agentrig-otel``) provides :data:`TRACE_CONTEXT` from a compose
step -- in the ``check`` phase, so that what later steps start (MCP servers) is traced too.
With it provided:

* the loop opens a scope around each turn, each model call attempt and each tool call
  (``open(kind, agent_id, subject, provider)`` ... ``scope.close()``), in the task that does
  the work, so the plugin can make its span the current one -- named, and with what a sampler
  may look at, from the start;
* requests to destinations that opted in carry ``headers()`` -- the W3C ``traceparent`` /
  ``tracestate`` of the current scope: a provider's base URL (``rt.http(trace_to=...)``),
  an HTTP hook's URL, an MCP server's; a URL a tool fetches never does.  Command hooks and
  stdio MCP servers get them as ``TRACEPARENT`` / ``TRACESTATE`` (:func:`trace_env`);
* each session event carries ``ids()`` -- the trace id and span id that produced it;
* a server hands an inbound request's headers to ``continue_from(headers)`` around the run,
  so the run continues the caller's trace.

Without the service none of this runs: the loop checks one attribute (``rt.trace``) and
sends, logs and spawns exactly what it would otherwise.  Headers are the currency, so the
kernel needs no tracing library.
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

        ``subject`` is what the operation is about, known before it starts: the agent's
        configured name (``turn``), the requested model (``model_call``), the called tool's
        name (``tool_call``); ``provider`` is the id of the provider a model call goes to
        (None for the other kinds).  The loop's observation of the same operation
        (``observe``) arrives while the scope is open, with the rest.
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
    the destinations that opted in: ``trace_to`` lists their URLs (a provider's base URL,
    an MCP server's), and only a request to one of those exact origins (scheme, host, port)
    carries them.  Any other request the client makes -- a URL a tool fetches, a redirect to
    another origin -- carries no trace identifiers.

    Read per request: a client built during composition traces once a plugin provided
    :data:`TRACE_CONTEXT`; without one the hook adds nothing.  Headers the caller set win.
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
