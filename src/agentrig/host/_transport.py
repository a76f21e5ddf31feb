"""An httpx transport that connects only to addresses the egress policy validated.

Why a custom network backend rather than rewriting the URL to the IP: TLS verification,
SNI, the ``Host`` header and connection pooling must all stay keyed to the logical host
name, while the socket must go to the address that was validated -- with no second DNS
lookup between the check and the connect (which is what a DNS-rebinding attacker races).

How: :class:`EgressTransport` judges each request (:func:`check_destination`: one
resolution), then publishes the validated addresses for ``(host, port)`` in a context
variable for the duration of the httpcore call.  httpcore opens new connections from the
requesting task, so :class:`PinnedNetworkBackend` sees that pin when it is asked to connect to
the logical host name and connects to the pinned IP instead.  A connect with no pin for its
``(host, port)`` is refused: there is no fallback carrier.  Proxies and Unix sockets are not
supported at all, so neither the environment nor a caller can route around the pin.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from contextvars import ContextVar
from types import TracebackType
from typing import Any, Self

import anyio
import httpcore
import httpx

# httpcore's AutoBackend picks trio or anyio (asyncio) per call; it is not re-exported from
# httpcore's top level, but it is the backend httpcore itself uses by default.
from httpcore._backends.auto import AutoBackend

from agentrig.host._egress import EgressPolicy, EgressRejected, check_destination
from agentrig.host._errors import EgressRejectedError
from agentrig.host._resolver import Resolver, SystemResolver

__all__ = ["EgressTransport", "PinnedNetworkBackend"]

_Pins = Mapping[tuple[str, int], tuple[str, ...]]
_PINS: ContextVar[_Pins | None] = ContextVar("agentrig_egress_pins", default=None)


class PinnedNetworkBackend(httpcore.AsyncNetworkBackend):
    """Connects a logical ``(host, port)`` to the addresses pinned for the current request.

    ``inner`` performs the real connects (to IP addresses only); it defaults to httpcore's
    automatic asyncio/trio backend.
    """

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._inner: httpcore.AsyncNetworkBackend = inner if inner is not None else AutoBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend interface
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        pins = _PINS.get()
        addresses = pins.get((host.lower(), port)) if pins is not None else None
        if not addresses:
            raise httpcore.ConnectError(
                f"egress: no validated address is pinned for {host}:{port}; refusing to connect"
            )
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout, OSError) as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend interface
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("egress: Unix sockets are not reachable through this transport")

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


def _httpcore_exception_map() -> tuple[tuple[type[Exception], type[httpx.TransportError]], ...]:
    # Most specific first; mirrors what httpx's own transport does.
    return (
        (httpcore.ConnectTimeout, httpx.ConnectTimeout),
        (httpcore.ReadTimeout, httpx.ReadTimeout),
        (httpcore.WriteTimeout, httpx.WriteTimeout),
        (httpcore.PoolTimeout, httpx.PoolTimeout),
        (httpcore.TimeoutException, httpx.TimeoutException),
        (httpcore.ConnectError, httpx.ConnectError),
        (httpcore.ReadError, httpx.ReadError),
        (httpcore.WriteError, httpx.WriteError),
        (httpcore.NetworkError, httpx.NetworkError),
        (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
        (httpcore.LocalProtocolError, httpx.LocalProtocolError),
        (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
        (httpcore.ProtocolError, httpx.ProtocolError),
    )


@contextlib.contextmanager
def _mapped_errors(request: httpx.Request) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for source, target in _httpcore_exception_map():
            if isinstance(exc, source):
                raise target(str(exc) or type(exc).__name__, request=request) from exc
        raise


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, stream: Any, request: httpx.Request) -> None:
        self._stream = stream
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _mapped_errors(self._request):
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        closer = getattr(self._stream, "aclose", None)
        if closer is not None:
            await closer()


class EgressTransport(httpx.AsyncBaseTransport):
    """An httpx transport that applies an :class:`EgressPolicy` to every request it sends.

    Each request is judged and its host resolved once; the connection goes only to a
    validated address.  A refused request raises :class:`EgressRejectedError` (httpx cannot
    carry a returned outcome); a failed lookup raises :class:`httpx.ConnectError`.  No proxy
    is ever used.  ``verify`` takes an :class:`ssl.SSLContext` or ``True``/``False``.
    ``network_backend`` replaces the inner backend that makes the real (IP) connects.
    """

    def __init__(
        self,
        *,
        policy: EgressPolicy | None = None,
        resolver: Resolver | None = None,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits | None = None,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self.policy = policy if policy is not None else EgressPolicy()
        self.resolver: Resolver = resolver if resolver is not None else SystemResolver()
        limits = limits if limits is not None else httpx.Limits(max_connections=100)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=False,
            network_backend=PinnedNetworkBackend(network_backend),
        )

    async def __aenter__(self) -> Self:
        await self._pool.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self._pool.__aexit__(exc_type, exc_value, traceback)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout", {})
        connect_timeout = timeouts.get("connect") if isinstance(timeouts, Mapping) else None
        try:
            with anyio.fail_after(connect_timeout):
                outcome = await check_destination(
                    request.url, policy=self.policy, resolver=self.resolver
                )
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(
                f"resolving {request.url.host!r} timed out", request=request
            ) from exc
        except OSError as exc:
            raise httpx.ConnectError(
                f"resolving {request.url.host!r} failed: {exc}", request=request
            ) from exc
        if isinstance(outcome, EgressRejected):
            raise EgressRejectedError(outcome)
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=outcome.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        token = _PINS.set({(outcome.connect_host, outcome.port): outcome.addresses})
        try:
            with _mapped_errors(request):
                response = await self._pool.handle_async_request(core_request)
        finally:
            _PINS.reset(token)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response.stream, request),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
