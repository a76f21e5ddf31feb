"""A request id on every answer, under the names both SDKs read.

The OpenAI SDK exposes ``x-request-id`` (``response._request_id``), the Anthropic SDK
``request-id`` (``message._request_id``); operators quote it from client logs.  The id is
made here for each request, refusals (401, 421, 429, ...) and streams included.
"""

from __future__ import annotations

import secrets

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["RequestIdMiddleware", "new_request_id"]


def new_request_id() -> str:
    """A fresh id: ``req_`` and 24 hex digits."""
    return f"req_{secrets.token_hex(12)}"


class RequestIdMiddleware:
    """ASGI middleware: ``x-request-id`` and ``request-id`` on every HTTP answer; the id is
    in ``scope["state"]["request_id"]`` for the handlers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_request_id()
        scope.setdefault("state", {})["request_id"] = request_id
        value = request_id.encode()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.lower() not in (b"x-request-id", b"request-id")
                ]
                headers += [(b"x-request-id", value), (b"request-id", value)]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_id)
