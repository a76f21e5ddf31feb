"""Running the app on uvicorn, with the bind rule (no API keys, no address but loopback) and
the connection rules: a request head must arrive within ``header_timeout`` (a slow or idle
connection is closed), and forwarded-client headers count only from ``trusted_proxies``."""

from __future__ import annotations

import asyncio
import errno
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from agentrig.errors import ConfigError, Issue
from agentrig_server._app import _is_loopback, create_app
from agentrig_server._keys import KeyFile, state_root
from agentrig_server._settings import ServerSettings, server_settings

if TYPE_CHECKING:
    from agentrig.kernel import Runtime

__all__ = ["AgentServer", "check_bind"]


def check_bind(settings: ServerSettings, host: str, *, stored_keys: bool = False) -> None:
    """Refuse a non-loopback bind when no API key is configured (``stored_keys``: keys made
    by ``agentrig serve keys`` count too)."""
    keyed = bool(settings.api_keys or settings.keys) or stored_keys
    if not keyed and not _is_loopback(host):
        raise ConfigError(
            [
                Issue(
                    "server.unauthenticated_bind",
                    f"refusing to listen on {host!r} without authentication: configure "
                    "server.api_keys or server.keys (secret references), or add a key with "
                    "'agentrig serve keys add', or bind 127.0.0.1",
                    ("server", "host"),
                )
            ]
        )


def _head_deadline_protocol(seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection whose next request head (request line and
    headers) has not arrived ``seconds`` after the connection opened or the last response
    ended -- however slowly its bytes trickle in."""

    class HeadDeadline(H11Protocol):
        head_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.arm_head_deadline()

        def on_response_complete(self) -> None:
            self.arm_head_deadline()  # before: a pipelined request head disarms it at once
            super().on_response_complete()

        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not cycle:  # a request head arrived
                self.disarm_head_deadline()

        def connection_lost(self, exc: Exception | None) -> None:
            self.disarm_head_deadline()
            super().connection_lost(exc)

        def arm_head_deadline(self) -> None:
            self.disarm_head_deadline()
            self.head_deadline = self.loop.call_later(seconds, self.transport.close)

        def disarm_head_deadline(self) -> None:
            if self.head_deadline is not None:
                self.head_deadline.cancel()
                self.head_deadline = None

    return HeadDeadline


class _Server(uvicorn.Server):
    """uvicorn's server, telling its owner once it listens."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None] | None) -> None:
        super().__init__(config)
        self._on_started = on_started
        self.bound: tuple[str, int] | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if not self.started:
            return
        for server in self.servers:
            for sock in server.sockets:
                self.bound = sock.getsockname()[:2]
                break
        if self._on_started is not None:
            self._on_started()


class AgentServer:
    """A uvicorn server for one runtime; ``await run()`` until :meth:`stop`."""

    def __init__(
        self,
        rt: Runtime,
        settings: ServerSettings | None = None,
        *,
        host: str | None = None,
        port: int | None = None,
    ) -> None:
        if settings is None:
            settings = server_settings(rt)
        self.rt = rt
        self.settings = settings
        self.host = host if host is not None else settings.host
        self.port = port if port is not None else settings.port
        stored = KeyFile(state_root(settings, rt.loaded.base_dir)).load()
        active = any(key.revoked_at is None for key in stored.values())
        check_bind(settings, self.host, stored_keys=active)
        self._server: _Server | None = None

    async def run(
        self, sock: socket.socket | None = None, *, on_started: Callable[[], None] | None = None
    ) -> None:
        """Serve until stopped; ``on_started`` is called once the server listens (port 0 picks
        a free port: see :attr:`url`).  ``sock`` is an already bound socket to use instead;
        create it with ``proto=socket.IPPROTO_TCP``, or asyncio leaves Nagle's algorithm on
        for its connections (a 40 ms stall per response)."""
        app = await create_app(self.rt, self.settings)
        if sock is None:
            sock = self._bind()
        trusted = list(self.settings.trusted_proxies)
        config = uvicorn.Config(
            app,
            host=self.host,
            port=self.port,
            lifespan="off",
            log_level="warning",
            access_log=False,
            http=_head_deadline_protocol(self.settings.header_timeout),
            ws="none",
            timeout_graceful_shutdown=5,
            # the client address is the socket's unless a trusted proxy's header says otherwise
            # (uvicorn trusts X-Forwarded-For from loopback by default: a local process could
            # pick its own address, and so its own rate limit)
            proxy_headers=bool(trusted),
            forwarded_allow_ips=trusted or ["127.0.0.1"],
        )
        self._server = _Server(config, on_started)
        await self._server.serve(sockets=[sock] if sock is not None else None)

    def _bind(self) -> socket.socket:
        """Bind the listening socket ourselves, so a taken port is one clear error (uvicorn
        would log its own line and exit) and responses go out without Nagle's delay."""
        try:
            family, kind, proto, _, address = socket.getaddrinfo(
                self.host, self.port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
            )[0]
            sock = socket.socket(family, kind, proto)
        except OSError as exc:
            raise ConfigError(
                [
                    Issue(
                        "server.host",
                        f"cannot listen on {self.host!r}: {exc}; check server.host or --host",
                        ("server", "host"),
                    )
                ]
            ) from exc
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
        except OSError as exc:
            sock.close()
            raise ConfigError(
                [
                    Issue(
                        "server.port_in_use" if exc.errno == errno.EADDRINUSE else "server.bind",
                        f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}; "
                        "choose another port with --port (or server.port), or stop the "
                        "program using it",
                        ("server", "port"),
                    )
                ]
            ) from exc
        return sock

    @property
    def url(self) -> str:
        """Where the server listens (the real port once started, also for port 0)."""
        host, port = self.host, self.port
        if self._server is not None and self._server.bound is not None:
            host, port = self._server.bound
        return f"http://{host}:{port}"

    @property
    def started(self) -> bool:
        return self._server is not None and self._server.started

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
