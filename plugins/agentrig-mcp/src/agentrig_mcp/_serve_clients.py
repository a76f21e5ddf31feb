"""Each MCP client session of ``agentrig mcp serve`` asks its own sessions of the agents.

A client session's agents are made on its first ask and disposed when the session ends.  The
handlers find them in a context variable: set around ``Server.run`` (stdio, in-memory),
whose tasks inherit it, and over HTTP around each request of an MCP session (the SDK runs
a message's handler in the context of the request that carried it, and starts the session's
own task from the request that opened it).  :class:`PerSessionAgents` ends them with the
session: a ``DELETE``, a 404 for an expired session, the SDK's idle timeout, or the server
stopping.  A request that opens no
session (a stateless 2026-era call) gets agents for itself alone.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Any

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentrig.agent import Agent, agent_configs
from agentrig.cancel import CancelSignal
from agentrig.ids import AgentId, agent_id
from agentrig.kernel import Runtime

__all__ = ["PerSessionAgents", "ask", "client_session"]

_CLIENT: ContextVar[_ClientAgents | None] = ContextVar("agentrig_mcp_client", default=None)
_SESSION_HEADER = b"mcp-session-id"


class _ClientAgents:
    """One MCP client session's own agents: a fresh session of each agent it asks."""

    def __init__(self, rt: Runtime) -> None:
        self._rt = rt
        self._agents: dict[AgentId, Agent] = {}
        self._lock = anyio.Lock()
        #: HTTP requests of the session in flight, and when the last one ended
        self.busy = 0
        self.last = 0.0

    async def of(self, served: Agent) -> Agent:
        async with self._lock:
            agent = self._agents.get(served.id)
            if agent is None:
                config = agent_configs(self._rt.loaded)[served.id]  # served: a configured agent
                # it reports as the agent it serves (its id is per client session)
                config = config.model_copy(update={"name": config.name or str(served.id)})
                name = agent_id(f"{str(served.id)[:100]}.mcp-{secrets.token_hex(6)}")
                agent = await self._rt.agents.create(name, config=config)
                self._agents[served.id] = agent
            return agent

    async def aclose(self) -> None:
        agents, self._agents = list(self._agents.values()), {}
        with anyio.CancelScope(shield=True):
            for agent in agents:
                if not self._rt.closed:
                    await self._rt.agents.dispose(agent.id, cancel_running=True)


@contextlib.asynccontextmanager
async def client_session(rt: Runtime) -> AsyncIterator[None]:
    """The tasks started inside serve one client session (its agents end with the block)."""
    client = _ClientAgents(rt)
    token = _CLIENT.set(client)
    try:
        yield
    finally:
        _CLIENT.reset(token)
        await client.aclose()


async def ask(rt: Runtime, served: Agent, prompt: str, signal: CancelSignal) -> str:
    """Run ``prompt`` on the calling client session's own session of ``served``."""
    client = _CLIENT.get()
    one_off = client is None  # outside a client session: a session for this call alone
    if client is None:
        client = _ClientAgents(rt)
    try:
        agent = await client.of(served)
        return str((await agent.run(prompt, signal=signal)).value)
    finally:
        if one_off:
            await client.aclose()


def _session_of(headers: list[tuple[bytes, bytes]]) -> str | None:
    for name, value in headers:
        if name.lower() == _SESSION_HEADER:
            return value.decode("latin-1")
    return None


class PerSessionAgents:
    """ASGI: the streamable-HTTP endpoint, each MCP session with its own agents.

    ``idle`` is the SDK's session idle timeout: a session without a request in flight for
    that long has ended there, and its agents end with the next request (or the stop)."""

    def __init__(self, app: ASGIApp, rt: Runtime, *, idle: float) -> None:
        self._app = app
        self._rt = rt
        self._idle = idle
        self._open: dict[str, _ClientAgents] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        asked = _session_of(list(scope.get("headers", [])))
        answer: dict[str, Any] = {"status": 0, "session": asked}

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
                answer["session"] = asked or _session_of(list(message.get("headers", [])))
            await send(message)

        await self._expire()
        if asked is not None:  # a request of an open session: its messages ask its agents
            own = self._open.get(asked)
            token = _CLIENT.set(own)
            if own is not None:
                own.busy += 1
            try:
                await self._app(scope, receive, watch)
            finally:
                _CLIENT.reset(token)
                if own is not None:
                    own.busy -= 1
                    own.last = anyio.current_time()
            if scope["method"] == "DELETE" or answer["status"] == 404:
                await self._end(asked)
            return
        client = _ClientAgents(self._rt)
        token = _CLIENT.set(client)  # the session's task, started from here, inherits it
        try:
            await self._app(scope, receive, watch)
        finally:
            _CLIENT.reset(token)
            opened = answer["session"]
            if isinstance(opened, str) and answer["status"] < 400:
                client.last = anyio.current_time()
                self._open[opened] = client
            else:
                await client.aclose()

    async def _expire(self) -> None:
        now = anyio.current_time()
        for session, client in list(self._open.items()):
            if client.busy == 0 and now - client.last > self._idle:
                await self._end(session)

    async def _end(self, session: str) -> None:
        client = self._open.pop(session, None)
        if client is not None:
            await client.aclose()

    async def aclose(self) -> None:
        """End every open session's agents (the server stops)."""
        for session in list(self._open):
            await self._end(session)
