"""HTTP plumbing: client ownership, retries with capped jittered backoff, SSE framing.

Nothing here knows the vendor's payloads; the provider module builds requests and reads
bodies.  Every wait and every network read runs inside the run's cancel signal, so a
cancelled run stops at once with :class:`~agentrig.errors.AbortError`.
"""

from __future__ import annotations

import random
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

import anyio
import attrs
import httpx

from agentrig.cancel import CancelSignal
from agentrig.llm import (
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    error_from_status,
)

__all__ = [
    "HttpSession",
    "RetryPolicy",
    "SSEDecoder",
    "SSEEvent",
    "close_stream",
    "header",
    "next_event",
    "read_sse",
]

ClientFactory = Callable[[], httpx.AsyncClient]


@attrs.frozen(slots=True)
class RetryPolicy:
    """How often and how long to retry a failed request.

    The n-th retry waits ``min(max_delay, base_delay * 2**n)`` scaled by a random factor in
    [0.5, 1.0]; a server's ``Retry-After`` replaces that wait, capped at ``max_retry_after``.
    """

    max_retries: int = 2
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after))
        backoff = min(self.max_delay, self.base_delay * float(2.0**attempt))
        return backoff * random.uniform(0.5, 1.0)


@attrs.frozen(slots=True)
class SSEEvent:
    """One server-sent event: its ``event`` name (``None`` = default) and joined data lines."""

    event: str | None
    data: str


class SSEDecoder:
    """Incremental ``text/event-stream`` framing: text in, complete events out (no I/O).

    Lines end at ``\n``, ``\r\n`` or ``\r``; a ``\r`` at the end of a piece is held back
    until the next piece shows whether a ``\n`` follows.  Comments and ids are ignored.
    """

    __slots__ = ("_buffer", "_data", "_event")

    def __init__(self) -> None:
        self._buffer = ""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, text: str) -> list[SSEEvent]:
        text = self._buffer + text
        if "\r" in text:
            hold = text.endswith("\r")
            text = text.replace("\r\n", "\n").replace("\r", "\n")
            if hold:
                text = text[:-1]
            lines = text.split("\n")
            self._buffer = lines.pop() + ("\r" if hold else "")
        else:
            lines = text.split("\n")
            self._buffer = lines.pop()
        out: list[SSEEvent] = []
        for line in lines:
            self._line(line, out)
        return out

    def flush(self) -> list[SSEEvent]:
        out: list[SSEEvent] = []
        rest, self._buffer = self._buffer.rstrip("\r"), ""
        if rest:
            self._line(rest, out)
        if self._data or self._event is not None:
            out.append(SSEEvent(self._event, "\n".join(self._data)))
        self._event, self._data = None, []
        return out

    def _line(self, line: str, out: list[SSEEvent]) -> None:
        if not line:
            if self._data or self._event is not None:
                out.append(SSEEvent(self._event, "\n".join(self._data)))
            self._event, self._data = None, []
            return
        if line[0] == ":":
            return
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value


def aclosing_text(response: httpx.Response) -> AsyncGenerator[str, None]:
    """The response body as text pieces (httpx's ``aiter_text`` is an async generator)."""
    pieces: Any = response.aiter_text()
    generator: AsyncGenerator[str, None] = pieces
    return generator


async def read_sse(
    response: httpx.Response, *, signal: CancelSignal, provider: str
) -> AsyncGenerator[SSEEvent, None]:
    """Frame a ``text/event-stream`` body into events.

    Why per read rather than per event: each network read runs inside the cancel signal's
    scope (so a stalled server cannot outlive a cancellation), but the events a read brings
    are framed synchronously and handed out without another scope -- a read usually carries
    dozens of events, and a cancel scope per event was most of the stream's overhead.  The
    signal is still checked before every event, so a cancellation between events stops
    the stream at once with :class:`~agentrig.errors.AbortError`.
    """
    decoder = SSEDecoder()
    pieces = aclosing_text(response)
    try:
        while True:
            piece: str | None = None
            try:
                with signal.scope():
                    piece = await anext(pieces, None)
            except httpx.HTTPError as exc:
                raise _transport_error(exc, provider) from exc
            signal.raise_if_cancelled()
            if piece is None:
                break
            for event in decoder.feed(piece):
                signal.raise_if_cancelled()
                yield event
        for event in decoder.flush():
            signal.raise_if_cancelled()
            yield event
    finally:
        await pieces.aclose()


def _transport_error(exc: httpx.HTTPError, provider: str) -> ProviderError:
    if isinstance(exc, httpx.TimeoutException):
        return ProviderTimeoutError(f"{provider}: request timed out ({exc})", provider=provider)
    return ProviderConnectionError(f"{provider}: connection failed ({exc})", provider=provider)


class HttpSession:
    """The provider's HTTP client (created lazily) and its retrying ``send``."""

    def __init__(
        self,
        *,
        provider: str,
        client: httpx.AsyncClient | None,
        factory: ClientFactory | None,
        policy: RetryPolicy,
        classify: Callable[[httpx.Response, Any], ProviderError] | None = None,
    ) -> None:
        self._provider = provider
        self._client = client
        # A client handed in ready-made belongs to the caller; one we build is ours to close.
        self._owned = client is None
        self._factory = factory
        self._policy = policy
        self._classify = classify
        self._closed = False

    @property
    def policy(self) -> RetryPolicy:
        return self._policy

    def client(self) -> httpx.AsyncClient:
        if self._closed:
            raise RuntimeError(f"the {self._provider} provider was closed")
        if self._client is None:
            if self._factory is not None:
                self._client = self._factory()
            else:
                self._client = httpx.AsyncClient(trust_env=False)
        return self._client

    async def aclose(self) -> None:
        self._closed = True
        client, self._client = self._client, None
        if client is not None and self._owned:
            await client.aclose()

    def error_for(self, response: httpx.Response) -> ProviderError:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        if self._classify is not None:
            return self._classify(response, body)
        error = error_from_status(
            response.status_code, body, dict(response.headers), provider=self._provider
        )
        if error.request_id is None and isinstance(body, Mapping):
            found = body.get("request_id")  # Anthropic also puts it in the error body
            if isinstance(found, str):
                error.request_id = found
        return error

    async def send(
        self,
        build: Callable[[], httpx.Request],
        *,
        signal: CancelSignal,
        stream: bool,
    ) -> httpx.Response:
        """Send with retries; return a 2xx response (body unread when ``stream``).

        Retries connection errors, timeouts and retryable statuses (the taxonomy's
        ``retryable``, which honours ``x-should-retry``).  Waits honour ``Retry-After``
        (capped) and stop at once when ``signal`` fires.
        """
        attempt = 0
        while True:
            signal.raise_if_cancelled()
            request = build()
            response: httpx.Response | None = None
            error: ProviderError
            try:
                with signal.scope():
                    response = await self.client().send(request, stream=True)
                    if (response.is_success and not stream) or not response.is_success:
                        await response.aread()
            except httpx.HTTPError as exc:
                if response is not None:
                    await _close_quietly(response)
                error = _transport_error(exc, self._provider)
            else:
                if signal.cancelled:
                    if response is not None:
                        await _close_quietly(response)
                    raise signal.abort_error()
                assert response is not None
                if response.is_success:
                    return response
                error = self.error_for(response)
                await _close_quietly(response)
            if attempt >= self._policy.max_retries or not _should_retry(error):
                raise error
            wait = self._policy.delay(attempt, error.retry_after)
            with signal.scope():
                await anyio.sleep(wait)
            signal.raise_if_cancelled()
            attempt += 1


def _should_retry(error: ProviderError) -> bool:
    # An exhausted quota answers 429 too, but waiting will not refill it.
    if error.vendor_code == "insufficient_quota" or error.vendor_type == "insufficient_quota":
        return False
    return error.retryable


async def _close_quietly(response: httpx.Response) -> None:
    with anyio.CancelScope(shield=True):
        await response.aclose()


async def next_event(
    events: AsyncGenerator[SSEEvent, None], *, signal: CancelSignal, provider: str
) -> SSEEvent | None:
    """The next SSE event (``None`` at the end); :func:`read_sse` honours ``signal``."""
    signal.raise_if_cancelled()
    return await anext(events, None)


async def close_stream(events: AsyncGenerator[SSEEvent, None], response: httpx.Response) -> None:
    """Close an SSE reader and its response, even while the caller is being cancelled."""
    with anyio.CancelScope(shield=True):
        try:
            await events.aclose()
        finally:
            await response.aclose()


def header(headers: Mapping[str, str], *names: str) -> str | None:
    for name in names:
        value = headers.get(name)
        if value is not None:
            return value
    return None
