"""The ``openai-responses`` provider: OpenAI's Responses API over HTTP/SSE or a WebSocket."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Mapping
from functools import cached_property
from typing import Any

import httpx

from agentrig.cancel import CancelSignal
from agentrig.llm import (
    ModelRequest,
    ModelResponse,
    ProviderConnectionError,
    ProviderStreamError,
    StreamAssembler,
    StreamChunk,
    TextDelta,
    report_effort,
    resolve_effort_level,
)
from agentrig.llm.http import (
    HttpProviderFactory,
    close_stream,
    event_json,
    read_sse_batches,
)
from agentrig_openai._endpoint import OpenAIEndpoint
from agentrig_openai._models import MODELS
from agentrig_openai._responses_options import ResponsesOptions
from agentrig_openai._responses_wire import (
    KIND,
    RESERVED_OPTIONS,
    Continuation,
    EventReader,
    build_body,
    continuation,
    response_chunks,
)
from agentrig_openai._responses_ws import ResponsesSocket, SocketDropped, SocketPool, open_socket

__all__ = ["OpenAIResponsesProvider", "responses_factory"]

logger = logging.getLogger("agentrig_openai")

_text_delta = TextDelta.of
_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed", "error"})
_HELD = frozenset({"response.completed", "response.incomplete"})  # a next request may chain
# Error codes of the WebSocket mode after which the request is sent again with the whole
# conversation: the connection's in-memory response is gone, or the connection is too old.
_RESEND_WHOLE = frozenset({"previous_response_not_found"})
_RECONNECT = frozenset({"websocket_connection_limit_reached"})


class OpenAIResponsesProvider(OpenAIEndpoint[ResponsesOptions]):
    """OpenAI's Responses API (``POST {base_url}/responses``, or its WebSocket mode).

    Reasoning and hosted-tool output items are kept as provider state and sent back;
    ``store`` and ``transport`` choose how the conversation continues (see
    :class:`ResponsesOptions`).  ``client`` and ``http`` are as for the ``openai`` provider.
    """

    kind = KIND
    path = "/responses"
    reserved_options = RESERVED_OPTIONS

    @classmethod
    def _default_options(cls) -> ResponsesOptions:
        return ResponsesOptions()

    @cached_property
    def _pool(self) -> SocketPool:
        """The WebSocket connections, made on first use (the HTTP transport has none)."""
        return SocketPool(self._open_socket, size=self._options.websocket_pool)

    # -- requests ----------------------------------------------------------------------------

    def _body(
        self, request: ModelRequest, previous: Continuation | None, *, sending: bool = True
    ) -> dict[str, Any]:
        """The request body; ``sending``: it goes out now, so how it resolved the request's
        reasoning effort is reported (``reasoning.effort`` is the native control)."""
        caps = self._check(request)
        effort = resolve_effort_level(request.reasoning_effort, caps.reasoning_effort)
        level = effort.effective
        if sending:
            report_effort(effort.sent({"reasoning": {"effort": level}}) if level else effort)
        opts = self._options
        return build_body(
            request,
            effort=level,
            summary=opts.reasoning_summary,
            strict=opts.strict_tools,
            vendor=opts.vendor_endpoint,
            store=opts.store,
            previous=previous,
        )

    def _chained(self, request: ModelRequest) -> Continuation | None:
        """The response an HTTP request continues: only with ``store`` (OpenAI keeps it)."""
        if not self._options.store:
            return None
        return continuation(request.messages, self._url)

    def request_body(self, request: ModelRequest, *, stream: bool = False) -> dict[str, Any]:
        """The HTTP request body this provider would send (capability checks included)."""
        return {**self._body(request, self._chained(request), sending=False), "stream": stream}

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        if self._options.uses_websocket:
            assembler = StreamAssembler()
            async for chunk in self.stream(request, signal=signal):
                assembler.feed(chunk)
            message = assembler.message()
            return ModelResponse(
                message=message, served_model=message.model, response_id=assembler.response_id
            )
        body = {**self._body(request, self._chained(request)), "stream": False}
        data, request_id = await self._answer(body, signal=signal)
        chunks, finish = response_chunks(data, self._url, request_id=request_id)
        assembler = StreamAssembler()
        for chunk in (*chunks, finish):
            assembler.feed(chunk)
        message = assembler.message()
        return ModelResponse(
            message=message,
            request_id=request_id,
            served_model=message.model,
            response_id=finish.response_id,
        )

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncGenerator[StreamChunk, None]:
        if self._options.uses_websocket:
            events = self._socket_events(request, signal)
            reader = EventReader(self._url)
        else:
            body = {**self._body(request, self._chained(request)), "stream": True}
            response, request_id = await self._send(body, stream=True, signal=signal)
            events = self._sse_events(response, signal)
            reader = EventReader(self._url, request_id=request_id)
        try:
            # Events come a network read (or a WebSocket message) at a time; the signal is
            # checked before each one, since the loop runs between them.
            async for batch in events:
                for event in batch:
                    if signal.cancelled:
                        signal.raise_if_cancelled()
                    text = reader.text_of(event)
                    if text is not None:  # the common event: no list, no loop per token
                        if text:
                            yield _text_delta(text)
                        continue
                    for chunk in reader.feed(event):
                        yield chunk
        finally:
            await events.aclose()
        if reader.response is None:
            raise ProviderConnectionError(
                f"{self.kind}: the stream ended before the response was complete",
                request_id=reader.request_id,
                provider=self.kind,
            )
        yield reader.finish()

    async def _sse_events(
        self, response: httpx.Response, signal: CancelSignal
    ) -> AsyncGenerator[list[dict[str, Any]], None]:
        """The JSON events of each network read, as a list (one hand-over per read)."""
        batches = read_sse_batches(response, signal=signal, provider=self.kind)
        try:
            async for batch in batches:
                events: list[dict[str, Any]] = []
                for event in batch:
                    data = event.data
                    if data[:1] != "{" and data.strip() in ("", "[DONE]"):
                        continue  # a blank event or an end marker some servers add
                    try:
                        payload = event_json(data)
                    except ValueError as exc:
                        raise ProviderStreamError(
                            f"{self.kind}: malformed stream event: {data.strip()[:200]!r}",
                            provider=self.kind,
                        ) from exc
                    if type(payload) is dict:
                        events.append(payload)
                if events:
                    yield events
        finally:
            await close_stream(batches, response)

    # -- the WebSocket transport -------------------------------------------------------------

    async def _open_socket(self, signal: CancelSignal) -> ResponsesSocket:
        return await open_socket(
            self._http.client(),
            self._url,
            self._options.websocket_url,
            self._headers(stream=False),
            signal=signal,
            provider=self.kind,
            read_timeout=self._options.timeout,
        )

    async def _socket_events(
        self, request: ModelRequest, signal: CancelSignal
    ) -> AsyncGenerator[list[dict[str, Any]], None]:
        """The events of one response over a pooled connection (see :meth:`_first_event`)."""
        socket, first = await self._first_event(request, signal)
        given_back = False
        try:
            event = first
            while event.get("type") not in _TERMINAL:
                yield [event]
                event = await self._receive(socket, signal)
            # The response is over: the connection is free again before its last event is
            # read (an error event raises in the reader, and the connection stays usable).
            response = event.get("response")
            if event.get("type") in _HELD and isinstance(response, Mapping):
                found = response.get("id")
                socket.last_response_id = found if isinstance(found, str) else None
            given_back = True
            await self._pool.give_back(socket)
            yield [event]
        finally:
            if not given_back:  # left mid-response: the connection's state is unknown
                await socket.aclose()

    async def _receive(self, socket: ResponsesSocket, signal: CancelSignal) -> dict[str, Any]:
        event = await socket.receive(signal=signal)
        if not isinstance(event, dict):
            raise ProviderStreamError(
                f"{self.kind}: a WebSocket message is not an event: {event!r:.200}",
                provider=self.kind,
            )
        return event

    async def _first_event(
        self, request: ModelRequest, signal: CancelSignal
    ) -> tuple[ResponsesSocket, dict[str, Any]]:
        """Send ``response.create`` and read its first event, recovering what needs no
        model call: a pooled connection that dropped (a new one, the whole conversation),
        a continued response the server no longer holds (the whole conversation), a
        connection at its time limit (a new one)."""
        previous = continuation(request.messages, self._url)
        socket = self._pool.take(previous.response_id if previous is not None else None)
        whole = False
        for attempt in range(3):
            fresh = socket is None
            if socket is None:
                socket = await self._pool.open(signal)
            chain = None
            if previous is not None and not whole:
                held = socket.last_response_id == previous.response_id
                chain = previous if held or self._options.store else None
            # the effort is reported once: a resend carries the same control
            body = {"type": "response.create", **self._body(request, chain, sending=not attempt)}
            try:
                await socket.send(body, signal=signal)
                event = await self._receive(socket, signal)
            except SocketDropped:
                await socket.aclose()
                if fresh:
                    raise
                socket, whole = None, True
                continue
            except BaseException:
                await socket.aclose()
                raise
            code = _error_code(event)
            if code in _RESEND_WHOLE and chain is not None:
                whole = True
                continue
            if code in _RECONNECT:
                await socket.aclose()
                socket, whole = None, True
                continue
            return socket, event
        assert socket is not None
        await socket.aclose()
        raise ProviderConnectionError(
            f"{self.kind}: the WebSocket request could not be sent", provider=self.kind
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
        await super().aclose()


def _error_code(event: Mapping[str, Any]) -> str | None:
    if event.get("type") != "error":
        return None
    error = event.get("error")
    found = error.get("code") if isinstance(error, Mapping) else event.get("code")
    return found if isinstance(found, str) else None


responses_factory = HttpProviderFactory(
    OpenAIResponsesProvider,
    options_model=ResponsesOptions,
    models=MODELS,
    name="agentrig_openai.responses_factory",
)
"""The provider factory registered under ``agentrig.providers`` as ``openai-responses``."""
