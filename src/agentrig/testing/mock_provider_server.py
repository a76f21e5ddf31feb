"""A real HTTP server on the loopback interface that plays a model API, for provider tests.

A provider plugin's tests point the provider's ``base_url`` at it and give it an ``answer``
function: each request (method, path, headers, JSON body) becomes a :class:`MockReply` -- a
JSON body, a stream of JSON events (server-sent events or NDJSON), or an error status.  The
answer is computed from the request, not from a position in a script, so retries and
restarts see the same conversation.  Every request is kept in :attr:`MockProviderServer.requests`.

The server runs in a thread of the test process (``with MockProviderServer(answer) as
server:``); the provider talks to it over a real socket, through the runtime's HTTP client
and egress policy (the provider's options need ``allow_private_base_url = true``).
"""

from __future__ import annotations

import json
import threading
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
    """``answer(request) -> MockReply`` served on ``127.0.0.1`` (a free port); see the module."""

    def __init__(self, answer: Callable[[MockRequest], MockReply]) -> None:
        self.answer = answer
        self.requests: list[MockRequest] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
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


def _handler(server: MockProviderServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.0: the connection closes after each reply, which ends a stream's body
        protocol_version = "HTTP/1.0"

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
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.events is None:
                payload = json.dumps(reply.body).encode("utf-8")
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            ndjson = reply.stream_format == "ndjson"
            self.send_header(
                "content-type", "application/x-ndjson" if ndjson else "text/event-stream"
            )
            self.end_headers()
            for event in reply.events:
                line = event if isinstance(event, str) else json.dumps(event)
                self.wfile.write((f"{line}\n" if ndjson else f"data: {line}\n\n").encode("utf-8"))
                self.wfile.flush()
            if reply.hold_open:
                server._closed.wait(reply.hold_open)  # until then, or until the server closes

    return Handler
