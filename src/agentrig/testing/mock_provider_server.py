"""A real HTTP server on the loopback interface that plays a model API, for provider tests.

A provider plugin's tests point the provider's ``base_url`` at it and give it an ``answer``
function: each request (method, path, headers, JSON body) becomes a :class:`MockReply` -- a
JSON body, a stream of JSON events (server-sent events or NDJSON), or an error status.  The
answer is computed from the request, not from a position in a script, so retries and
restarts see the same conversation.  Every request is kept in :attr:`MockProviderServer.requests`.

The server runs in a thread of the test process (``with MockProviderServer(answer) as
server:``); the provider talks to it over a real socket, through the runtime's HTTP client
and egress policy (the provider's options need ``allow_private_base_url = true``).

It answers as model APIs do: HTTP/1.1 on a kept-alive connection, a JSON body as
``application/json; charset=utf-8`` with its length, a stream with chunked transfer encoding
as ``text/event-stream; charset=utf-8`` (server-sent events) or ``application/x-ndjson``
(one JSON object per line) -- a reply's own ``content-type`` header wins.  Two options make
the stream harder, as networks and proxies do: ``split`` sends it in writes of that many
bytes, cutting across events, lines and UTF-8 characters; ``keep_alives`` puts an SSE comment
line (``: keep-alive``) before the first event and between events.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

import attrs

__all__ = ["MockProviderServer", "MockReply", "MockRequest"]


@attrs.frozen(slots=True)
class MockRequest:
    """One request the server received: ``body`` is the parsed JSON (None when not JSON)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any


@attrs.frozen(slots=True)
class MockReply:
    """What to answer: a JSON ``body``, or (when ``events`` is given) a stream of events in
    ``stream_format``, with ``status`` and extra ``headers``.  An event is a JSON object, or
    a string sent as it is (a malformed event, for a test of the error path).  ``hold_open``
    keeps a stream open that many seconds after its last event (a stalled server, for a
    test of cancellation)."""

    status: int = 200
    body: Any = None
    events: Sequence[Mapping[str, Any] | str] | None = None
    stream_format: Literal["sse", "ndjson"] = "sse"
    headers: Mapping[str, str] = attrs.field(factory=dict)
    hold_open: float = 0.0


class MockProviderServer:
    """``answer(request) -> MockReply`` served on ``127.0.0.1`` (a free port); see the module.

    :attr:`requests` are the requests received; :attr:`abandoned` counts the streams whose
    client closed the connection while the server was holding them open (``hold_open``).
    """

    def __init__(
        self,
        answer: Callable[[MockRequest], MockReply],
        *,
        split: int | None = None,
        keep_alives: bool = False,
    ) -> None:
        if split is not None and split < 1:
            raise ValueError(f"split must be 1 or more bytes, not {split}")
        self.answer = answer
        self.split = split
        self.keep_alives = keep_alives
        self.requests: list[MockRequest] = []
        self.abandoned = 0
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False  # a kept-alive connection does not hold close()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The server's base URL (``http://127.0.0.1:<port>``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> MockProviderServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever, name="mock-provider-server", daemon=True
            )
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port (idempotent); held-open streams end."""
        self._closed.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> MockProviderServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _received(self, request: MockRequest) -> MockReply:
        with self._lock:
            self.requests.append(request)
        return self.answer(request)

    def _abandoned(self) -> None:
        with self._lock:
            self.abandoned += 1


_CONTENT_TYPES = {"sse": "text/event-stream; charset=utf-8", "ndjson": "application/x-ndjson"}


def _stream_bytes(reply: MockReply, keep_alives: bool) -> bytes:
    ndjson = reply.stream_format == "ndjson"
    out = bytearray()
    for event in reply.events or ():
        if keep_alives and not ndjson:
            out += b": keep-alive\n\n"
        line = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
        out += (f"{line}\n" if ndjson else f"data: {line}\n\n").encode("utf-8")
    return bytes(out)


def _client_gone(connection: socket.socket, seconds: float, closed: threading.Event) -> bool:
    """Wait up to ``seconds`` (or until the server closes); True when the client hung up."""
    deadline = time.monotonic() + seconds
    while not closed.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        readable, _, _ = select.select([connection], [], [], min(left, 0.05))
        if readable:
            try:
                if not connection.recv(1, socket.MSG_PEEK):
                    return True
            except OSError:
                return True
    return False


def _handler(server: MockProviderServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # kept-alive connections, chunked streams

        def setup(self) -> None:
            super().setup()
            # each write its own packet: a split stream reaches the client in pieces
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def log_message(self, format: str, *args: Any) -> None:
            return None  # a test's output stays its own

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply = server._received(MockRequest(self.command, self.path, headers, body))
            own = {k.lower(): v for k, v in reply.headers.items()}
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.events is None:
                payload = json.dumps(reply.body).encode("utf-8")
                if "content-type" not in own:
                    self.send_header("content-type", "application/json; charset=utf-8")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            if "content-type" not in own:
                self.send_header("content-type", _CONTENT_TYPES[reply.stream_format])
            self.send_header("transfer-encoding", "chunked")
            self.send_header("cache-control", "no-cache")
            self.end_headers()
            data = _stream_bytes(reply, server.keep_alives)
            size = server.split or len(data) or 1
            try:
                for start in range(0, len(data), size):
                    self._chunk(data[start : start + size])
                    if server.split is not None:
                        time.sleep(0.001)  # a separate network read for each piece
                # held open: until then, the client's hang-up, or the server's close
                if reply.hold_open and _client_gone(
                    self.connection, reply.hold_open, server._closed
                ):
                    server._abandoned()
                    self.close_connection = True
                    return
                self._chunk(b"")  # the last chunk: the stream ends
            except OSError:  # the client went away mid-stream
                self.close_connection = True

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Handler
