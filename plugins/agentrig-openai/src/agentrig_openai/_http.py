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


async def read_sse(response: httpx.Response) -> AsyncGenerator[SSEEvent, None]:
    """Frame a ``text/event-stream`` body into events (comments and ids are ignored)."""
    event: str | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if data or event is not None:
                yield SSEEvent(event, "\n".join(data))
            event, data = None, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if data or event is not None:
        yield SSEEvent(event, "\n".join(data))


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
    """The next SSE event (``None`` at the end), interruptible by ``signal``."""
    found: SSEEvent | None = None
    try:
        with signal.scope():
            found = await anext(events, None)
    except httpx.HTTPError as exc:
        raise _transport_error(exc, provider) from exc
    signal.raise_if_cancelled()
    return found


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
