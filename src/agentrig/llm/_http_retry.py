"""Sending a provider request with retries, and mapping what failed onto the taxonomy.

Every network read and every wait runs inside the run's cancel signal, so a cancelled run
stops at once with :class:`~agentrig.errors.AbortError`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import attrs
import httpx

from agentrig.cancel import CancelSignal
from agentrig.llm._errors import (
    ProviderConnectionError,
    ProviderError,
    ProviderProtocolError,
    ProviderTimeoutError,
    error_from_status,
)

__all__ = [
    "RetryPolicy",
    "error_from_response",
    "error_from_transport",
    "send_with_retries",
]


@attrs.frozen(slots=True)
class RetryPolicy:
    """How often and how long to retry a failed request.

    The n-th retry (``attempt`` n, from 0) waits ``min(max_delay, base_delay * 2**n)`` scaled
    by a random factor in [0.5, 1.0]; a server's ``Retry-After`` replaces that wait.  A
    ``Retry-After`` longer than ``max_retry_after`` is not waited for at all:
    :func:`send_with_retries` ends the retries at once (never retries early).
    """

    max_retries: int = 2
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt`` (0 for the first retry)."""
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after))
        backoff = min(self.max_delay, self.base_delay * float(2.0**attempt))
        return backoff * random.uniform(0.5, 1.0)


def error_from_transport(exc: httpx.HTTPError, *, provider: str) -> ProviderError:
    """A timeout as :class:`ProviderTimeoutError`, any other transport failure as
    :class:`ProviderConnectionError` (both retryable); the message names the host and port."""
    where = _destination(exc)
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return ProviderTimeoutError(
            f"{provider}: request to {where} timed out ({detail})", provider=provider
        )
    return ProviderConnectionError(
        f"{provider}: connection to {where} failed ({detail})", provider=provider
    )


def _destination(exc: httpx.HTTPError) -> str:
    try:
        url = exc.request.url
    except RuntimeError:  # raised without a request: nothing to name
        return "the server"
    port = url.port or (443 if url.scheme == "https" else 80)
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{host}:{port}"


def error_from_response(response: httpx.Response, *, provider: str) -> ProviderError:
    """Map a read, non-2xx response onto the taxonomy (see :func:`error_from_status`).

    A ``request_id`` in a JSON error body fills in the request id when no header carried one.
    """
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    error = error_from_status(response.status_code, body, dict(response.headers), provider=provider)
    if response.status_code == 404:
        # a wrong base_url or path is the usual cause: say which URL was not found
        error.message = f"{error.message} (not found: {response.request.method} {_url(response)})"
    if error.request_id is None and isinstance(body, Mapping):
        found = body.get("request_id")
        if isinstance(found, str):
            error.request_id = found
    return error


def _url(response: httpx.Response) -> str:
    url = response.request.url
    return str(url.copy_with(query=None, fragment=None))  # a query may carry a key


EXCERPT_LIMIT = 500
"""How many bytes of an unexpected body an error quotes."""


def _is_stream(response: httpx.Response, types: tuple[str, ...]) -> bool:
    # A response without a Content-Type is given the benefit of the doubt (some small
    # servers omit it); one that names another type is not the stream asked for.
    kind: str | None = response.headers.get("content-type")
    return kind is None or kind.split(";", 1)[0].strip().lower() in types


async def _not_a_stream(
    response: httpx.Response, provider: str, types: tuple[str, ...]
) -> ProviderError:
    """The protocol error for a 2xx answer to a streaming request of another media type."""
    excerpt = b""
    async for part in response.aiter_bytes():
        excerpt += part
        if len(excerpt) >= EXCERPT_LIMIT:
            break
    text = excerpt[:EXCERPT_LIMIT].decode("utf-8", errors="replace")
    more = "…" if len(excerpt) > EXCERPT_LIMIT else ""
    kind = response.headers.get("content-type")
    return ProviderProtocolError(
        f"{provider}: a streaming request was answered with HTTP {response.status_code} "
        f"{kind}, not {' or '.join(types)}; the body begins: {text!r}{more}",
        status=response.status_code,
        provider=provider,
        request_id=response.headers.get("request-id") or response.headers.get("x-request-id"),
        body=text,
    )


async def _close_quietly(response: httpx.Response) -> None:
    with anyio.CancelScope(shield=True):
        await response.aclose()


async def send_with_retries(
    client: httpx.AsyncClient | Callable[[], httpx.AsyncClient],
    build: Callable[[], httpx.Request],
    *,
    policy: RetryPolicy,
    signal: CancelSignal,
    provider: str,
    stream: bool = False,
    classify: Callable[[httpx.Response], ProviderError] | None = None,
    retry_if: Callable[[ProviderError], bool] | None = None,
    stream_types: tuple[str, ...] = ("text/event-stream",),
    on_failure: Callable[[ProviderError], object] | None = None,
) -> httpx.Response:
    """Send the request ``build()`` makes, retrying; return the 2xx response.

    ``client`` is the client, or a function returning it that is called once per attempt;
    ``build`` is called once per attempt too, so a request body is never re-read.  With
    ``stream`` the body of the 2xx response is left unread (close it when done); otherwise it
    is read and the connection released; a streamed 2xx answer must have one of
    ``stream_types`` (server-sent events unless a provider opts into another, such as
    ``("application/x-ndjson",)``), else it is a :class:`ProviderProtocolError`.

    Retries connection errors, timeouts and failed statuses for which ``retry_if(error)`` is
    true (default: the taxonomy's ``retryable``, which honours ``x-should-retry``), at most
    ``policy.max_retries`` times.  ``classify`` maps a failed response (body read) to an
    error, by default :func:`error_from_response`.  Each wait is ``policy.delay(...)``
    (honouring a capped ``Retry-After``).  ``on_failure(error)`` is told of each failed
    attempt at once, before any wait (it starts a rate-limited model's cooldown, so other
    runs need not wait behind this one's retry).

    Cancellation: the signal is checked before each attempt, each send runs inside its scope
    and so does each wait -- when it fires the response in hand is closed and
    ``signal.abort_error()`` is raised at once.  The last error is raised when retries are
    exhausted or the error is not retryable.
    """
    get_client: Callable[[], httpx.AsyncClient] = (
        (lambda: client) if isinstance(client, httpx.AsyncClient) else client
    )
    attempt = 0
    while True:
        signal.raise_if_cancelled()
        request = build()
        streamed = stream_types if stream else None
        sent = await _send_once(get_client(), request, signal, provider, streamed, classify)
        if isinstance(sent, httpx.Response):
            return sent
        if on_failure is not None:
            on_failure(sent)
        _raise_unless_retried(sent, attempt, policy, retry_if)
        wait = policy.delay(attempt, sent.retry_after)
        with signal.scope():
            await anyio.sleep(wait)
        signal.raise_if_cancelled()
        attempt += 1


async def _send_once(
    client: httpx.AsyncClient,
    request: httpx.Request,
    signal: CancelSignal,
    provider: str,
    stream: tuple[str, ...] | None,
    classify: Callable[[httpx.Response], ProviderError] | None,
) -> httpx.Response | ProviderError:
    """One attempt: the 2xx response, or the error of a failed one (to retry or raise).

    ``stream`` is the media types a streamed answer may have (None: not streamed).
    """
    response: httpx.Response | None = None
    protocol_error: ProviderError | None = None
    try:
        with signal.scope():
            response = await client.send(request, stream=True)
            if not (stream and response.is_success):
                await response.aread()
            elif not _is_stream(response, stream):
                protocol_error = await _not_a_stream(response, provider, stream)
    except httpx.HTTPError as exc:
        if response is not None:
            await _close_quietly(response)
        return error_from_transport(exc, provider=provider)
    if signal.cancelled:
        if response is not None:
            await _close_quietly(response)
        raise signal.abort_error()
    assert response is not None
    if protocol_error is not None:
        await _close_quietly(response)
        raise protocol_error  # not retried: the same request gets the same answer
    if response.is_success:
        return response
    if classify is not None:
        error = classify(response)
    else:
        error = error_from_response(response, provider=provider)
    await _close_quietly(response)
    return error


def _raise_unless_retried(
    error: ProviderError,
    attempt: int,
    policy: RetryPolicy,
    retry_if: Callable[[ProviderError], bool] | None,
) -> None:
    """Raise ``error`` when retries are spent, it is not retryable, or its wait is too long."""
    retryable = retry_if(error) if retry_if is not None else error.retryable
    if attempt >= policy.max_retries or not retryable:
        raise error
    if error.retry_after is not None and error.retry_after > policy.max_retry_after:
        # the server asked for a longer wait than we may take: retrying early would only
        # be refused again, so stop now and let the caller see the wait it asked for
        error.message = (
            f"{error.message} (Retry-After {error.retry_after:g} s is longer than "
            f"max_retry_after {policy.max_retry_after:g} s; not retried)"
        )
        raise error
