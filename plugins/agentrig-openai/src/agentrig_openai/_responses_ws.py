"""The Responses API's WebSocket mode: persistent connections to ``{base_url}/responses``.

Each turn is one ``response.create`` message (the POST body without ``stream``); the server
answers with the same events as the HTTP stream, one JSON text message each, and keeps the
last response of the connection in memory, so the next tool round can send only its new
items with ``previous_response_id`` -- even with ``store = false``.  One response is in
flight per connection at a time, so the pool hands each request a connection of its own,
preferring the one whose last response the request continues.

The upgrade is an ordinary request through the runtime's httpx client (so the egress policy
and its pinned addresses apply); the upgraded connection is httpx's documented
``network_stream`` response extension, and the frames on it are read and written by the
sans-I/O protocol of ``websockets`` -- which runs on asyncio and trio alike.
"""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import httpcore
import httpx
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.uri import parse_uri
from websockets.utils import accept_key

from agentrig.cancel import CancelSignal
from agentrig.llm import (
    ProviderConnectionError,
    ProviderProtocolError,
    ProviderTimeoutError,
)
from agentrig.llm.http import error_from_response

__all__ = ["ResponsesSocket", "SocketDropped", "SocketPool", "open_socket"]

_READ = 65536
_MAX_MESSAGE = 64 * 1024 * 1024  # a finished response repeats its whole output


class SocketDropped(ProviderConnectionError):
    """The connection closed (or failed) under a request."""

    code = "provider.connection"


class ResponsesSocket:
    """One upgraded connection: send a message, receive the next one, close.

    :attr:`last_response_id` is the response the server holds for this connection (the one
    a next ``response.create`` may continue with ``previous_response_id``).
    """

    def __init__(
        self,
        response: httpx.Response,
        stream: httpcore.AsyncNetworkStream,
        protocol: ClientProtocol,
        *,
        provider: str,
        timeout: float,
    ) -> None:
        self._response = response
        self._stream = stream
        self._protocol = protocol
        self._provider = provider
        self._timeout = timeout
        self._parts: list[bytes] = []
        self._ready: list[bytes] = []
        self.last_response_id: str | None = None
        self.closed = False

    async def send(self, message: Mapping[str, Any], *, signal: CancelSignal) -> None:
        """Send one JSON text message."""
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
        self._protocol.send_text(text)
        with signal.scope():
            await self._flush()
        signal.raise_if_cancelled()

    async def receive(self, *, signal: CancelSignal) -> Any:
        """The next JSON message; :class:`SocketDropped` when the connection ends first."""
        while not self._ready:
            if self.closed:
                raise self._dropped("the server closed the connection")
            data = b""
            with signal.scope():
                data = await self._read()
            signal.raise_if_cancelled()
            if data:
                self._protocol.receive_data(data)
            else:
                self._protocol.receive_eof()
            for frame in self._protocol.events_received():
                if isinstance(frame, Frame):  # after the handshake, only frames arrive
                    self._take(frame)
            await self._flush()  # pongs and the answer to a close
        raw = self._ready.pop(0)
        try:
            return json.loads(raw)
        except ValueError:
            raise ProviderProtocolError(
                f"{self._provider}: a WebSocket message is not JSON: {raw[:200]!r}",
                provider=self._provider,
            ) from None

    def _take(self, frame: Frame) -> None:
        if frame.opcode in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
            self._parts.append(bytes(frame.data))
            if frame.fin:
                self._ready.append(b"".join(self._parts))
                self._parts.clear()
        elif frame.opcode is Opcode.CLOSE:
            self.closed = True

    async def _read(self) -> bytes:
        try:
            return await self._stream.read(_READ, timeout=self._timeout)
        except httpcore.TimeoutException as exc:
            self.closed = True
            raise ProviderTimeoutError(
                f"{self._provider}: no WebSocket message for {self._timeout:g} s",
                provider=self._provider,
            ) from exc
        except (httpcore.NetworkError, OSError) as exc:
            self.closed = True
            raise self._dropped(f"the connection failed: {exc}") from exc

    async def _flush(self) -> None:
        for data in self._protocol.data_to_send():
            if not data:
                continue  # the end-of-stream marker: the server closes the TCP side
            try:
                await self._stream.write(data, timeout=self._timeout)
            except (httpcore.NetworkError, httpcore.TimeoutException, OSError) as exc:
                self.closed = True
                raise self._dropped(f"the connection failed: {exc}") from exc

    def _dropped(self, why: str) -> SocketDropped:
        code = self._protocol.close_code
        reason = self._protocol.close_reason
        detail = f" (close code {code}{': ' + reason if reason else ''})" if code else ""
        return SocketDropped(f"{self._provider}: WebSocket: {why}{detail}", provider=self._provider)

    async def aclose(self) -> None:
        """Close the connection (a close frame when it is still open); never raises."""
        if self._protocol.state is State.OPEN and not self.closed:
            self._protocol.send_close(1000)
            with anyio.move_on_after(1.0, shield=True):
                with contextlib.suppress(SocketDropped):
                    await self._flush()
        self.closed = True
        with anyio.CancelScope(shield=True):
            try:
                await self._stream.aclose()
            finally:
                await self._response.aclose()


def _upgrade_headers(headers: Mapping[str, str], key: str) -> dict[str, str]:
    out = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "accept")}
    out.update(
        {
            "connection": "Upgrade",
            "upgrade": "websocket",
            "sec-websocket-version": "13",
            "sec-websocket-key": key,
        }
    )
    return out


async def open_socket(
    client: httpx.AsyncClient,
    url: str,
    ws_url: str,
    headers: Mapping[str, str],
    *,
    signal: CancelSignal,
    provider: str,
    read_timeout: float,
) -> ResponsesSocket:
    """Upgrade ``GET url`` to a WebSocket; a refused upgrade raises the taxonomy's error."""
    key = base64.b64encode(secrets.token_bytes(16)).decode()
    request = client.build_request("GET", url, headers=_upgrade_headers(headers, key))
    try:
        with signal.scope():
            response = await client.send(request, stream=True)
    except httpx.HTTPError as exc:
        raise SocketDropped(
            f"{provider}: WebSocket connect failed: {exc}", provider=provider
        ) from exc
    signal.raise_if_cancelled()
    if response.status_code != 101:
        with anyio.CancelScope(shield=True):
            await response.aread()
            await response.aclose()
        error = error_from_response(response, provider=provider)
        if error.vendor_type is None and error.vendor_code is None:
            # no API error object: a server that does not take WebSockets at this path (a
            # Starlette app answers 403, others 404/405/426), not a refused key
            raise ProviderProtocolError(
                f"{provider}: {url} refused the WebSocket upgrade (HTTP "
                f"{response.status_code}): the endpoint has no Responses WebSocket mode; set "
                'transport = "http" in the provider options',
                status=response.status_code,
                provider=provider,
            )
        raise error
    stream = response.extensions.get("network_stream")
    if response.headers.get("sec-websocket-accept") != accept_key(key) or stream is None:
        with anyio.CancelScope(shield=True):
            await response.aclose()
        raise ProviderProtocolError(
            f"{provider}: {url} answered the WebSocket upgrade without a valid handshake",
            provider=provider,
        )
    protocol = ClientProtocol(parse_uri(ws_url), state=State.OPEN, max_size=_MAX_MESSAGE)
    return ResponsesSocket(response, stream, protocol, provider=provider, timeout=read_timeout)


class SocketPool:
    """Idle connections, at most ``size``; a request takes one and gives it back after.

    ``opener(signal)`` opens a new connection.  A connection that broke, or that a request
    left mid-response (cancelled, failed), is closed rather than given back.
    """

    def __init__(
        self, opener: Callable[[CancelSignal], Awaitable[ResponsesSocket]], *, size: int
    ) -> None:
        self._opener = opener
        self._size = size
        self._idle: list[ResponsesSocket] = []
        self._closed = False

    def take(self, continues: str | None) -> ResponsesSocket | None:
        """An idle connection: the one holding response ``continues`` if any, else the most
        recently used; ``None`` when none is idle."""
        if self._closed:
            raise RuntimeError("the openai-responses provider was closed")
        for position, socket in enumerate(self._idle):
            if continues is not None and socket.last_response_id == continues:
                return self._idle.pop(position)
        return self._idle.pop() if self._idle else None

    async def open(self, signal: CancelSignal) -> ResponsesSocket:
        if self._closed:
            raise RuntimeError("the openai-responses provider was closed")
        return await self._opener(signal)

    async def give_back(self, socket: ResponsesSocket) -> None:
        if self._closed or socket.closed:
            await socket.aclose()
            return
        self._idle.append(socket)
        while len(self._idle) > self._size:
            await self._idle.pop(0).aclose()

    @property
    def idle(self) -> int:
        return len(self._idle)

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for socket in idle:
            await socket.aclose()
