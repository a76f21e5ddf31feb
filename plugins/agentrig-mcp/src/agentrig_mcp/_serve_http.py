"""Who may reach ``agentrig mcp serve --http``: bearer keys, the bind rule, the Host names.

Keys are secret references resolved at start-up and compared in constant time (every key,
through :func:`hmac.compare_digest` of SHA-256 digests, no early exit).  Without keys only a
loopback address is served.  The names a request's ``Host`` may carry are the listening
address (with the bound port), the loopback names when listening on loopback or on every
address, and the configured ``allowed_hosts``: the SDK's transport security checks them and
the ``Origin``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
from collections.abc import Sequence

from starlette.types import ASGIApp, Receive, Scope, Send

from agentrig.errors import ConfigError, Issue
from agentrig.kernel import Runtime
from agentrig_mcp._config import ServeSettings

__all__ = ["BearerGuard", "check_bind", "host_names", "resolve_keys"]

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def check_bind(host: str, keys: Sequence[str]) -> None:
    """Refuse to listen on anything but loopback without authentication."""
    if not keys and not _is_loopback(host):
        raise ConfigError(
            [
                Issue(
                    "mcp.unauthenticated_bind",
                    f"refusing to serve MCP on {host!r} without authentication: set "
                    "[mcp.serve] api_keys (secret references) or listen on 127.0.0.1",
                    ("mcp", "serve", "api_keys"),
                )
            ]
        )


def host_names(host: str, port: int, allowed: Sequence[str]) -> list[str]:
    """The ``Host`` values served, in the SDK's form (``name:port``; ``name:*`` any port)."""
    shown = f"[{host}]" if ":" in host else host
    names = [f"{shown}:{port}"]
    if _is_loopback(host) or host in ("0.0.0.0", "::"):  # a wildcard listens on loopback too
        names += [f"{name}:{port}" for name in _LOOPBACK_NAMES]
    for name in allowed:
        names += [name, f"{name}:*"]  # behind a proxy the Host may carry no port
    return list(dict.fromkeys(names))


async def resolve_keys(rt: Runtime, settings: ServeSettings) -> list[str]:
    """The bearer keys behind ``[mcp.serve] api_keys`` (a config error names a bad one)."""
    from agentrig_mcp._compose import resolve_reference

    keys: list[str] = []
    issues: list[Issue] = []
    for index, reference in enumerate(settings.api_keys):
        path = ("mcp", "serve", "api_keys", index)
        value, issue = await resolve_reference(rt, reference, path)
        if issue is not None:
            issues.append(issue)
        elif value:
            keys.append(value)
        else:
            issues.append(Issue("config.secret_missing", f"{reference}: empty", path))
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)
    return keys


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8")).digest()


class BearerGuard:
    """ASGI middleware: with keys configured, a request needs ``Authorization: Bearer <key>``."""

    def __init__(self, app: ASGIApp, keys: Sequence[str]) -> None:
        self.app = app
        self._digests = tuple(_digest(key) for key in keys)

    def _verified(self, scope: Scope) -> bool:
        presented = b""
        for name, value in scope.get("headers", ()):
            if name.lower() == b"authorization" and value[:7].lower() == b"bearer ":
                presented = value[7:].strip()
        candidate = hashlib.sha256(presented).digest()
        matched = False
        for digest in self._digests:  # no early exit: the time does not depend on the match
            matched |= hmac.compare_digest(candidate, digest)
        return matched and bool(presented)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self._digests or self._verified(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32001, "message": "missing or invalid bearer key"},
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="agentrig-mcp"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
