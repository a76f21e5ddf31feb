"""A request id on every answer, under the names both SDKs read.

The OpenAI SDK exposes ``x-request-id`` (``response._request_id``), the Anthropic SDK
``request-id`` (``message._request_id``); operators quote it from client logs.  The id is
made here for each request, refusals (401, 421, 429, ...) and streams included.

With ``server.access_log`` the same wrapper writes the access log: one line per request on
the ``agentrig.server.access`` logger -- its id, the client address, method, path, status
and duration; never a header, a query or a body.  With ``server.error_log`` (on by default)
it writes one line per failed request on ``agentrig.server.errors``: the time, the request
id, the key's id (never the key), method, route, status and error code -- also for a stream
that failed after its 200.
"""

from __future__ import annotations

import datetime
import logging
import secrets
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentrig.diagnostics import get_logger

__all__ = ["RequestIdMiddleware", "new_request_id"]

#: the code of a refusal made before any route (the browser rules, an unknown path)
_CODES = {
    403: "forbidden_origin",
    404: "not_found",
    405: "method_not_allowed",
    421: "misdirected_host",
}


def new_request_id() -> str:
    """A fresh id: ``req_`` and 24 hex digits."""
    return f"req_{secrets.token_hex(12)}"


class RequestIdMiddleware:
    """ASGI middleware: ``x-request-id`` and ``request-id`` on every HTTP answer; the id is
    in ``scope["state"]["request_id"]`` for the handlers."""

    def __init__(self, app: ASGIApp, access_log: bool = False, error_log: bool = False) -> None:
        self.app = app
        self._log = get_logger("server.access") if access_log else None
        self._errors = get_logger("server.errors") if error_log else None
        for log in (self._log, self._errors):
            if log is not None:
                log.setLevel(logging.INFO)  # the lines are wanted: above agentrig's level

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_request_id()
        scope.setdefault("state", {})["request_id"] = request_id
        value = request_id.encode()
        started = time.perf_counter()
        status = 0

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.lower() not in (b"x-request-id", b"request-id")
                ]
                headers += [(b"x-request-id", value), (b"request-id", value)]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            state = scope["state"]
            failed = status >= 400 or "error_code" in state  # a stream can fail after its 200
            if self._errors is not None and failed:
                self._errors.info(
                    "%s %s key=%s %s %s %d %s",
                    datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds"),
                    request_id,
                    state.get("key_id", "-"),
                    scope.get("method", "-"),
                    scope.get("path", "-"),
                    status,
                    state.get("error_code") or _CODES.get(status, f"http_{status}"),
                )
            if self._log is not None:
                client = scope.get("client")
                self._log.info(
                    "%s %s %s %s %d %.1fms",
                    request_id,
                    client[0] if client else "-",
                    scope.get("method", "-"),
                    scope.get("path", "-"),
                    status,
                    (time.perf_counter() - started) * 1000,
                )
