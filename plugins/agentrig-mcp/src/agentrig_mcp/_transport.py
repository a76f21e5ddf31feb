"""Opening a server's transport: a stdio subprocess, streamable HTTP or legacy HTTP+SSE.

Each yields a stream pair the SDK's ``ClientSession`` can be fed from.  A subprocess runs
as a reaped process tree (:mod:`agentrig_mcp._stdio`): its stderr is logged line by line
under ``agentrig.mcp.<server>`` and its last lines kept for the error of a failed start.

Over HTTP the SDK's ``httpx2`` client sends through the runtime's ``httpx`` client
(:mod:`agentrig_mcp._bridge`).  The SDK swallows a response stream that breaks (it only
logs it), so a call whose server died would wait for its timeout.  Every response body is
therefore watched: a transport error while reading it (the peer closed the connection
mid-body, a reset) calls ``on_broken`` at once, which fails the calls in flight.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Protocol

import httpx
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from agentrig_mcp._bridge import bridged
from agentrig_mcp._config import HttpServerSpec, StdioServerSpec
from agentrig_mcp._stdio import ProcessState, stdio_transport

if TYPE_CHECKING:
    import logging

    from agentrig_mcp._oauth import OAuthLogin

__all__ = ["OnBroken", "Sender", "Streams", "open_transport"]


class Sender(Protocol):
    """Where the connection writes the messages to the server."""

    async def send(self, item: SessionMessage, /) -> None: ...


Streams = tuple[AsyncIterable[SessionMessage | Exception], Sender]
"""What a transport yields: the server's messages (or errors reading them), and the sink."""

HttpClientFactory = Callable[[HttpServerSpec, dict[str, str]], "httpx.AsyncClient"]

OnBroken = Callable[[BaseException], None]
"""Called with the error when an HTTP response stream from the server breaks."""


class MessageTooLarge(httpx.TransportError):
    """A response body (or one event of a stream) over ``max_message_bytes``."""


class _WatchedBody(httpx.AsyncByteStream):
    """A response body that reports a transport error while it is read, then re-raises it;
    one longer than ``limit`` bytes -- for an event stream, one event -- is such an error."""

    def __init__(
        self, body: httpx.AsyncByteStream, on_broken: OnBroken, limit: int, events: bool
    ) -> None:
        self._body = body
        self._on_broken = on_broken
        self._limit = limit
        self._events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        try:
            async for chunk in self._body:
                end = chunk.rfind(b"\n\n") if self._events else -1
                size = len(chunk) - end - 2 if end >= 0 else size + len(chunk)
                if size > self._limit:
                    raise MessageTooLarge(
                        f"the server sent a message over {self._limit} bytes (max_message_bytes)"
                    )
                yield chunk
        except httpx.TransportError as exc:
            self._on_broken(exc)
            raise

    async def aclose(self) -> None:
        await self._body.aclose()


def _watched(http: httpx.AsyncClient, spec: HttpServerSpec, on_broken: OnBroken | None) -> None:
    """Make every response body of ``http`` report a break (and an oversized message)."""

    async def watch(response: httpx.Response) -> None:
        if on_broken is not None and isinstance(response.stream, httpx.AsyncByteStream):
            events = response.headers.get("content-type", "").startswith("text/event-stream")
            limit = spec.max_message_bytes
            response.stream = _WatchedBody(response.stream, on_broken, limit, events)

    http.event_hooks = {**http.event_hooks, "response": [*http.event_hooks["response"], watch]}


@contextlib.asynccontextmanager
async def _http(
    spec: HttpServerSpec,
    headers: dict[str, str],
    client: HttpClientFactory,
    on_broken: OnBroken | None,
    login: OAuthLogin | None,
) -> AsyncIterator[Streams]:
    """Streamable HTTP or, with ``type = "sse"``, the legacy HTTP+SSE transport: both through
    the same HTTP client (egress policy, headers, watched bodies, OAuth when configured)."""

    def made(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        # the SDK's headers and timeouts are not taken: the spec's client has its own (no
        # read timeout, so an event stream stays open between messages)
        http = client(spec, resolved)
        _watched(http, spec, on_broken)
        sdk = bridged(http)
        if login is not None:
            sdk.auth = login.auth
        return sdk

    resolved = headers
    if login is not None:
        # a sign-in that waits for the user happens here, not within startup_timeout
        async with made() as http:
            await login.sign_in(http, spec.url, sse=spec.type == "sse")
    if spec.type == "sse":
        from mcp.client.sse import sse_client

        async with sse_client(spec.url, httpx_client_factory=made) as (read, write):
            yield read, write
        return
    async with made() as http, streamable_http_client(spec.url, http_client=http) as streams:
        yield streams[0], streams[1]


def open_transport(
    spec: StdioServerSpec | HttpServerSpec,
    resolved: dict[str, str],
    *,
    log: logging.Logger,
    http_client: HttpClientFactory,
    on_broken: OnBroken | None = None,
    state: ProcessState | None = None,
    login: OAuthLogin | None = None,
) -> contextlib.AbstractAsyncContextManager[Any]:
    """The stream pair of ``spec``; ``resolved`` is its env (stdio) or headers (HTTP);
    ``state`` learns a stdio server's stderr and exit; ``login`` signs in to an HTTP server."""
    if isinstance(spec, StdioServerSpec):
        return stdio_transport(spec, resolved, log, state or ProcessState())
    return _http(spec, resolved, http_client, on_broken, login)
