"""Server-sent events over an ``httpx.Response``: incremental framing and a cancellable reader.

The framing (:class:`SSEDecoder`) does no I/O; :func:`read_sse` feeds it from the network,
one read at a time, inside the run's cancel signal.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any, NamedTuple

import anyio
import httpx
import pydantic_core

from agentrig.cancel import CancelSignal
from agentrig.llm._http_retry import error_from_transport

__all__ = [
    "SSEDecoder",
    "SSEEvent",
    "close_stream",
    "event_json",
    "read_sse",
    "read_sse_batches",
]


class SSEEvent(NamedTuple):
    """One server-sent event: its ``event`` name (``None`` = default) and joined data lines.

    A named tuple rather than a frozen attrs class: one is built per streamed token, and
    a tuple is the cheapest immutable record to build.
    """

    event: str | None
    data: str


_tuple_new = tuple.__new__


class SSEDecoder:
    """Incremental ``text/event-stream`` framing: text in, complete events out (no I/O).

    Lines end at ``\\n``, ``\\r\\n`` or ``\\r``; a ``\\r`` at the end of a piece is held back
    until the next piece shows whether a ``\\n`` follows.  Comments and ids are ignored.
    Call :meth:`flush` at the end of the body for an event the server did not terminate.
    """

    __slots__ = ("_buffer", "_data", "_event")

    def __init__(self) -> None:
        self._buffer = ""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, text: str) -> list[SSEEvent]:
        """The events that ``text`` completes (possibly none)."""
        text = self._buffer + text
        if "\r" in text or self._data or self._event is not None:
            return self._feed_lines(text)
        # The common body: ``\n`` line ends, events split by blank lines, most of them a
        # single ``data:`` line.  Split at event boundaries and keep the unfinished tail as
        # text; an event of any other shape is parsed line by line.
        # (``tuple.__new__`` builds the event without the named tuple's Python ``__new__``.)
        blocks = text.split("\n\n")
        self._buffer = blocks.pop()
        out: list[SSEEvent] = []
        for block in blocks:
            if block.startswith("data:") and "\n" not in block:
                data = block[6:] if block[5:6] == " " else block[5:]
                out.append(_tuple_new(SSEEvent, (None, data)))
            elif block:
                for line in block.split("\n"):
                    self._line(line, out)
                self._line("", out)
        return out

    def _feed_lines(self, text: str) -> list[SSEEvent]:
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
        """The events still buffered at the end of the body; the decoder is then empty."""
        out: list[SSEEvent] = []
        rest, self._buffer = self._buffer, ""
        if rest:  # an unfinished line, or (from the block path) unfinished lines
            lines = rest.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            for line in lines:
                self._line(line, out)
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


_from_json = pydantic_core.from_json
_json_decode = json.JSONDecoder().decode


def event_json(data: str) -> Any:
    """The JSON value of an event's ``data``: what ``json.loads`` gives, or its ``ValueError``.

    Parsed by pydantic-core (already loaded with pydantic), at well under half the cost of
    ``json.loads`` -- paid once per streamed token.  Whatever pydantic-core refuses (a lone
    UTF-16 surrogate, which ``json`` keeps, or malformed text) is handed to ``json``, so the
    value or the error is exactly the standard library's.
    """
    try:
        return _from_json(data)
    except (ValueError, TypeError):  # TypeError: a str holding a lone surrogate
        return _json_decode(data)


async def read_sse_batches(
    response: httpx.Response, *, signal: CancelSignal, provider: str
) -> AsyncGenerator[list[SSEEvent], None]:
    """Frame a ``text/event-stream`` body: the events each network read completes, as a list.

    Each read runs inside the cancel signal's scope (a stalled server cannot outlive a
    cancellation); the events it brings are framed synchronously.  A list per read saves
    the per-event hand-over of :func:`read_sse` -- but then the caller checks
    ``signal.cancelled`` before acting on each event, since code it runs between events
    (yielding chunks to the loop) may cancel.  Failures, cancellation and closing
    (``aclose``) are as for :func:`read_sse`.
    """
    decoder = SSEDecoder()
    # httpx's aiter_text is an async generator under an AsyncIterator annotation.
    text: Any = response.aiter_text()
    pieces: AsyncGenerator[str, None] = text
    try:
        while True:
            piece: str | None = None
            try:
                with signal.scope():
                    piece = await anext(pieces, None)
            except httpx.HTTPError as exc:
                raise error_from_transport(exc, provider=provider) from exc
            signal.raise_if_cancelled()
            if piece is None:
                break
            events = decoder.feed(piece)
            if events:
                yield events
        events = decoder.flush()
        if events:
            yield events
    finally:
        with anyio.CancelScope(shield=True):
            try:
                await pieces.aclose()
            finally:
                await response.aclose()


async def read_sse(
    response: httpx.Response, *, signal: CancelSignal, provider: str
) -> AsyncGenerator[SSEEvent, None]:
    """Frame a ``text/event-stream`` body into events; the response is closed when it ends.

    Why per read rather than per event: each network read runs inside the cancel signal's
    scope (so a stalled server cannot outlive a cancellation), but the events a read brings
    are framed synchronously and handed out without another scope -- a read usually carries
    dozens of events, and a cancel scope per event was most of the stream's overhead.  The
    signal is still checked before every event, so a cancellation between events stops
    the stream at once with :class:`~agentrig.errors.AbortError`.  A failed read raises
    :class:`~agentrig.llm.ProviderTimeoutError` or
    :class:`~agentrig.llm.ProviderConnectionError`.  Ending, failing, being cancelled or
    being closed (``aclose``) all close ``response``.
    """
    batches = read_sse_batches(response, signal=signal, provider=provider)
    try:
        async for batch in batches:
            for event in batch:
                if signal._set:  # the slot, not the method: this runs once per token
                    signal.raise_if_cancelled()
                yield event
    finally:
        await close_stream(batches, response)


async def close_stream(
    events: AsyncGenerator[SSEEvent, None] | AsyncGenerator[list[SSEEvent], None],
    response: httpx.Response,
) -> None:
    """Close an SSE reader and its response, even while the caller is being cancelled.

    Call it from the ``finally`` of the code that iterates :func:`read_sse` (or
    :func:`read_sse_batches`), so an early
    ``break``, an error or a cancellation never leaves the connection open.
    """
    with anyio.CancelScope(shield=True):
        try:
            await events.aclose()
        finally:
            await response.aclose()
