"""The HTTP-client factory providers get: every client goes through the egress policy.

A provider's ``base_url`` is user-supplied, so the requests it sends are judged like any other
caller-supplied URL (``docs/security.md``): no loopback, private, link-local or metadata
destination unless the configuration said so for that host.  :func:`make_http_factory`
builds the factory ``compose_providers`` hands to provider factories as
``ProviderConfig.http``::

    http = make_http_factory(runtime)
    client = http(timeout=30.0)                                  # public endpoints only
    local = http(timeout=30.0, allow_private=("127.0.0.1:11434",))  # plus that one server

``allow_private`` takes :class:`~agentrig.host.EgressPolicy` entries (an address, network or
host name, optionally with ``:port``); a provider passes the host and port of its own
``base_url`` when the user set ``allow_private_base_url = true``.  Entries that would open a
cloud-metadata address are dropped: no provider has a reason to talk to one.  Every other
keyword goes to :class:`httpx.AsyncClient` (``transport``, ``proxy`` and ``trust_env`` are
refused, as by :func:`~agentrig.host.egress_client`).

With a test transport (``open_runtime(..., http_transport=...)``) the client sends through
that transport instead of the network, but each request's URL is still judged by the same
policy (without DNS, which a mock transport does not need): a test cannot reach a refused
destination either.  Clients are owned by the runtime and closed when it closes.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from agentrig.diagnostics import get_logger
from agentrig.host import (
    CLOUD_METADATA_ADDRESSES,
    EgressPolicy,
    EgressRejected,
    EgressRejectedError,
    Resolver,
    check_url,
    egress_client,
)
from agentrig.tracing import TRACE_CONTEXT

if TYPE_CHECKING:
    from agentrig.kernel import Runtime, Services

__all__ = [
    "PolicyCheckedTransport",
    "add_trace_hook",
    "egress_policy",
    "make_http_factory",
    "trace_origin",
]

_log = get_logger("egress_http")

_METADATA = tuple(
    ipaddress.ip_address(address) for address, _label, _source in CLOUD_METADATA_ADDRESSES
)


def _network_of(entry: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    text = entry.strip().lower()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None  # a host name: the policy never exempts a metadata answer for a name


def _opens_metadata(entry: str) -> bool:
    network = _network_of(entry)
    return network is not None and any(
        address.version == network.version and address in network for address in _METADATA
    )


def egress_policy(allow_private: Iterable[str] = ()) -> EgressPolicy:
    """The policy for a provider client: the default, plus ``allow_private`` (minus metadata)."""
    if isinstance(allow_private, str):
        allow_private = (allow_private,)
    kept: list[str] = []
    for entry in allow_private:
        if _opens_metadata(entry):
            _log.warning(
                "allow_private entry %r would open a cloud-metadata address; ignored", entry
            )
            continue
        kept.append(entry)
    return EgressPolicy(allow_private=frozenset(kept))


class PolicyCheckedTransport(httpx.AsyncBaseTransport):
    """Judges each request's URL with ``policy`` (no DNS), then sends it through ``inner``.

    For test transports: the destination rules still hold, the network is not touched.
    """

    def __init__(self, inner: httpx.AsyncBaseTransport, policy: EgressPolicy) -> None:
        self.inner = inner
        self.policy = policy

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        outcome = check_url(request.url, policy=self.policy)
        if isinstance(outcome, EgressRejected):
            raise EgressRejectedError(outcome)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        # The inner transport belongs to whoever passed it to the runtime.
        return None


class _Traced(Protocol):
    """What the trace hook reads: the runtime's services (its trace context), per request."""

    @property
    def services(self) -> Services: ...


def trace_origin(url: object) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of ``url`` (a string or ``httpx.URL``), the default port
    filled in; None for what is not an absolute http(s) URL."""
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
    """Add to httpx client ``kwargs`` a request hook sending the headers of the runtime's
    :data:`~agentrig.tracing.TRACE_CONTEXT` to the exact origins (scheme, host, port) of
    ``trace_to`` only: a URL a tool fetches or a redirect elsewhere carries no trace
    identifiers.  The service is read per request,
    so a client built during composition traces once a plugin provided it; headers the
    caller set win.
    """
    origins = frozenset(o for o in (trace_origin(u) for u in trace_to) if o is not None)
    if not origins:
        return  # nothing opted in: the client sends no trace headers at all

    async def inject(request: httpx.Request) -> None:
        trace = runtime.services.get(TRACE_CONTEXT)
        if trace is not None and trace_origin(request.url) in origins:
            for name, value in trace.headers().items():
                request.headers.setdefault(name, value)

    hooks = dict(kwargs.get("event_hooks") or {})
    hooks["request"] = [inject, *hooks.get("request", ())]
    kwargs["event_hooks"] = hooks


def _test_transport(runtime: Runtime) -> httpx.AsyncBaseTransport | None:
    return runtime.http_transport


def make_http_factory(
    runtime: Runtime, *, resolver: Resolver | None = None
) -> Callable[..., httpx.AsyncClient]:
    """A ``ProviderConfig.http`` factory whose clients obey the egress policy.

    ``resolver`` replaces the system DNS resolver (tests, hosts with their own DNS).
    """

    def build(
        *, allow_private: Iterable[str] = (), trace_to: Iterable[str] = (), **kwargs: Any
    ) -> httpx.AsyncClient:
        runtime.ensure_open()
        policy = egress_policy(allow_private)
        add_trace_hook(kwargs, runtime, trace_to)
        transport = _test_transport(runtime)
        client: httpx.AsyncClient
        if transport is not None:
            refused = sorted({"transport", "mounts", "proxy", "trust_env"} & set(kwargs))
            if refused:
                raise TypeError(f"the runtime's HTTP clients do not accept {', '.join(refused)}")
            client = httpx.AsyncClient(
                transport=PolicyCheckedTransport(transport, policy), trust_env=False, **kwargs
            )
        else:
            client = egress_client(policy=policy, resolver=resolver, **kwargs)
        runtime.own("http-client", client)
        return client

    return build
