"""What a web page in the user's browser could make the server do: nothing it was not meant to.

A page on any site can send requests to ``127.0.0.1``, and a page whose DNS name is re-bound to
``127.0.0.1`` is even same-origin with it.  So every request is checked before routing:

- its ``Host`` must name the address the connection arrived on (or, over loopback, a loopback
  name), or one of ``server.allowed_hosts`` -- a re-bound name is refused with 421;
- an ``Origin``, when sent, must be the server's own origin or one of
  ``server.allowed_origins`` -- anything else is refused with 403;
- a request a browser sends to an API route (it carries ``Origin`` or ``Sec-Fetch-Site``)
  must come from an allowed origin, be typed into the address bar (``Sec-Fetch-Site: none``),
  or come from the chat page of this launch (its per-launch token) -- else 403.

The API routes also require ``Content-Type: application/json`` on a body (checked with the
body), so no "simple" cross-site request a page can send without asking reaches a run.
"""

from __future__ import annotations

import hmac
import ipaddress
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from agentrig_server._errors import ApiError, Dialect, error_response
from agentrig_server._settings import ServerSettings

__all__ = ["PAGE_TOKEN_HEADER", "BrowserGuard"]

PAGE_TOKEN_HEADER = "x-agentrig-page-token"
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _address(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def _split_host(value: str) -> tuple[str, int | None] | None:
    """``host[:port]`` as (lower-case name without brackets or trailing dot, port)."""
    if not value or any(c in value for c in "/?#@\\ "):
        return None
    try:
        parts = urlsplit(f"//{value}")
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    return parts.hostname.rstrip("."), port


class BrowserGuard:
    """ASGI middleware enforcing the Host, Origin and page-token rules above."""

    def __init__(self, app: ASGIApp, settings: ServerSettings, page_token: str | None) -> None:
        self.app = app
        self._hosts = frozenset(settings.allowed_hosts)
        self._origins = frozenset(settings.allowed_origins)
        self._fallback_host = settings.host
        self._token = page_token.encode() if page_token is not None else None
        # (Host header, local address) -> its parts when served: clients repeat one Host
        self._seen: dict[tuple[str, str], tuple[str, int | None]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            self._check(scope)
        except ApiError as exc:
            path = str(scope.get("path", ""))
            dialect: Dialect = "anthropic" if path.startswith("/v1/messages") else "openai"
            await error_response(exc, dialect)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _check(self, scope: Scope) -> None:
        headers = Headers(scope=scope)
        host = self._served_host(headers.get("host", ""), scope)
        origin = headers.get("origin")
        allowed_origin = origin is not None and origin.lower() in self._origins
        if origin is not None and not allowed_origin and not _same_origin(origin, host, scope):
            raise ApiError(
                403,
                "requests from another web origin are refused (list it in "
                "server.allowed_origins to allow it)",
                code="origin_not_allowed",
            )
        path = str(scope.get("path", ""))
        fetch_site = headers.get("sec-fetch-site")
        from_browser = origin is not None or fetch_site is not None
        if not from_browser or allowed_origin or not path.startswith(("/v1/", "/ready")):
            return
        if origin is None and fetch_site == "none":  # typed into the address bar
            return
        presented = headers.get(PAGE_TOKEN_HEADER, "").encode()
        same_site = fetch_site in (None, "same-origin")
        if not (
            same_site and self._token is not None and hmac.compare_digest(presented, self._token)
        ):
            raise ApiError(
                403,
                "a browser may call this API only from the chat page of this server "
                "(agentrig serve --ui) or from an origin in server.allowed_origins",
                code="browser_request_refused",
            )

    def _served_host(self, value: str, scope: Scope) -> tuple[str, int | None]:
        """The Host header's (name, port) when this server answers to it, else a 421."""
        server = scope.get("server")
        local = str(server[0]) if server else self._fallback_host
        known = self._seen.get((value, local))
        if known is not None:
            return known
        host = _split_host(value)
        if host is None or not self._host_allowed(host[0], local):
            raise ApiError(
                421,
                "this server does not answer to that Host name (add it to server.allowed_hosts "
                "to serve it under that name)",
                code="misdirected_request",
            )
        if len(self._seen) >= 256:  # only served names are kept, and not many of them
            self._seen.clear()
        self._seen[(value, local)] = host
        return host

    def _host_allowed(self, name: str, local: str) -> bool:
        if name in self._hosts:
            return True
        local_address = _address(local.strip("[]"))
        named = _address(name)
        if named is not None and local_address is not None and named == local_address:
            return True
        if local_address is not None and local_address.is_loopback:
            return name in _LOOPBACK_NAMES or (named is not None and named.is_loopback)
        return False


def _same_origin(origin: str, host: tuple[str, int | None], scope: Scope) -> bool:
    """Whether ``origin`` is the origin the request's own URL has (scheme, host and port)."""
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return False
    scheme = str(scope.get("scheme", "http"))
    if parts.scheme != scheme or not parts.hostname or parts.path not in ("", "/"):
        return False
    default = _DEFAULT_PORTS.get(scheme)
    return (parts.hostname.rstrip("."), port or default) == (host[0], host[1] or default)
