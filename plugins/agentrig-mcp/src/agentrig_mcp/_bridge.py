"""The SDK's HTTP client, sending through agentrig's: an ``httpx2`` client over ``httpx``.

The ``mcp`` SDK (2.x) takes an ``httpx2.AsyncClient`` for streamable HTTP and SSE, while the
runtime builds ``httpx`` clients (``rt.http``): the egress policy (no private or metadata
address unless allowed), trace headers, a test transport, owned and closed with the runtime.
:func:`bridged` gives the SDK an ``httpx2`` client whose transport hands every request to
such an ``httpx`` client and streams its response back, so each request the SDK makes (and
the OAuth provider's, which runs on the ``httpx2`` client) is judged as any other.

A transport error of the ``httpx`` side is raised as the ``httpx2`` error of the same name,
which the SDK handles as its own; other errors (an egress refusal) pass unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import httpx2

__all__ = ["bridged"]


def _as_httpx2(error: httpx.TransportError, request: httpx2.Request) -> httpx2.TransportError:
    kind = getattr(httpx2, type(error).__name__, None)
    if not (isinstance(kind, type) and issubclass(kind, httpx2.TransportError)):
        kind = httpx2.TransportError  # a subclass of our own (a message over the size limit)
    return kind(str(error) or type(error).__name__, request=request)


class _Body(httpx2.AsyncByteStream):
    """The ``httpx`` response's raw bytes (the ``httpx2`` response decodes them)."""

    def __init__(self, response: httpx.Response, request: httpx2.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_raw():
                yield chunk
        except httpx.TransportError as exc:
            raise _as_httpx2(exc, self._request) from exc

    async def aclose(self) -> None:
        await self._response.aclose()


class _Bridge(httpx2.AsyncBaseTransport):
    def __init__(self, client: httpx.AsyncClient) -> None:
        self._client = client

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        outgoing = self._client.build_request(
            request.method,
            str(request.url),
            headers=request.headers.multi_items(),
            content=body or None,
        )
        try:
            response = await self._client.send(outgoing, stream=True)
        except httpx.TransportError as exc:
            raise _as_httpx2(exc, request) from exc
        return httpx2.Response(
            response.status_code,
            headers=response.headers.multi_items(),
            stream=_Body(response, request),
            request=request,
        )

    async def aclose(self) -> None:
        await self._client.aclose()


def bridged(client: httpx.AsyncClient) -> httpx2.AsyncClient:
    """An ``httpx2`` client sending through ``client`` (closing it closes ``client``).

    Headers, timeouts and hooks are ``client``'s; the ``httpx2`` client adds none of its own
    (no timeout: an event stream stays open between messages, as ``client`` allows)."""
    return httpx2.AsyncClient(transport=_Bridge(client), timeout=None, trust_env=False)
