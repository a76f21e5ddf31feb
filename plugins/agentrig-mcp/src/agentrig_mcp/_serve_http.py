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
import logging
from collections.abc import Sequence

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentrig.errors import ConfigError, Issue
from agentrig.kernel import Runtime
from agentrig_mcp._access import AccessPolicy
from agentrig_mcp._config import ServeSettings

__all__ = [
    "MAX_DEPTH",
    "BearerGuard",
    "ClientGoneFilter",
    "JsonDepthGuard",
    "check_bind",
    "host_names",
    "quiet_client_exits",
    "resolve_access",
    "resolve_keys",
]

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


async def resolve_access(rt: Runtime, settings: ServeSettings) -> tuple[list[str], AccessPolicy]:
    """Every bearer key (``api_keys`` and ``clients``) and the policy of what each may use."""
    keys = await resolve_keys(rt, settings)
    references = [client.key for client in settings.clients]
    paths = [("mcp", "serve", "clients", i, "key") for i in range(len(references))]
    granted = await _resolved(rt, references, paths)
    grants = [(key, client.tools) for key, client in zip(granted, settings.clients, strict=True)]
    return [*keys, *granted], AccessPolicy(grants, keys)


async def resolve_keys(rt: Runtime, settings: ServeSettings) -> list[str]:
    """The bearer keys behind ``[mcp.serve] api_keys`` (a config error names a bad one)."""
    paths = [("mcp", "serve", "api_keys", i) for i in range(len(settings.api_keys))]
    return await _resolved(rt, settings.api_keys, paths)


async def _resolved(
    rt: Runtime, references: Sequence[str], paths: Sequence[tuple[str | int, ...]]
) -> list[str]:
    from agentrig_mcp._compose import resolve_reference

    keys: list[str] = []
    issues: list[Issue] = []
    for reference, path in zip(references, paths, strict=True):
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


class ClientGoneFilter(logging.Filter):
    """Drop the SDK's error records for a client that closed its stream: a client going
    away is how a session ends, not a server fault worth a traceback on stderr."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, anyio.ClosedResourceError | anyio.BrokenResourceError)


def quiet_client_exits() -> None:
    """Attach :class:`ClientGoneFilter` to the SDK's streamable-HTTP logger (once)."""
    logger = logging.getLogger("mcp.server.streamable_http")
    if not any(isinstance(f, ClientGoneFilter) for f in logger.filters):
        logger.addFilter(ClientGoneFilter())


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8")).digest()


async def _answer(
    send: Send, status: int, body: object, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


def _rpc_error(code: int, message: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


MAX_DEPTH = 100
"""The deepest nesting of a request (the JSON-RPC envelope and a tool's arguments) taken."""


def _depth(value: object) -> int:
    """How deeply ``value`` nests arrays and objects, level by level (never recursing)."""
    depth, level = 0, [value]
    while level:
        containers = [v for v in level if isinstance(v, dict | list)]
        if not containers:
            break
        depth += 1
        if depth > MAX_DEPTH:
            break
        level = [c for v in containers for c in (v.values() if isinstance(v, dict) else v)]
    return depth


class JsonDepthGuard:
    """A POST body nested too deeply to parse is a 400 JSON-RPC parse error, not the SDK's
    500: the body is read (at most ``limit`` bytes, else 413) and parsed once here first."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self._limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away before its body arrived
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self._limit:
                await _answer(send, 413, _rpc_error(-32600, "request body too large"))
                return
            chunks.append(chunk)
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        try:
            too_deep = _depth(json.loads(body)) > MAX_DEPTH
        except RecursionError:
            too_deep = True
        except ValueError:
            too_deep = False  # malformed JSON: the SDK answers it in its own words
        if too_deep:
            refusal = f"parse error: nested more than {MAX_DEPTH} levels deep"
            await _answer(send, 400, _rpc_error(-32700, refusal))
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


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
        await _answer(
            send,
            401,
            _rpc_error(-32001, "missing or invalid bearer key"),
            [(b"www-authenticate", b'Bearer realm="agentrig-mcp"')],
        )
