"""agentrig as an MCP server: a composition's tools and agents, over stdio or streamable HTTP.

Each served agent contributes its tools (called through ``agent.call_tool``: the same
permission gate, hooks and validation as a model's call) and one ``ask_<agent>`` tool (a
prompt in, the run's answer out).  Each MCP client session asks its own session of the agent
(made on its first ask, disposed when the client session ends), so no client sees another's
conversation and clients do not wait for each other.  Built on the SDK's low-level ``Server``.

Over HTTP the SDK's transport security checks ``Host`` and ``Origin`` (DNS rebinding), and
bearer keys from ``[mcp.serve] api_keys`` guard the endpoint; a non-loopback address is
refused without keys.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from contextvars import ContextVar
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage

from agentrig import __version__ as agentrig_version
from agentrig.agent import Agent, agent_configs
from agentrig.cancel import CancelSignal
from agentrig.errors import AgentrigError, ConfigError, Issue
from agentrig.ids import AgentId, agent_id
from agentrig.kernel import Runtime
from agentrig.llm import ImageBlock, TextBlock, ToolMessage
from agentrig.tools import Tool, ToolReportedError
from agentrig_mcp._access import AccessPolicy, bearer_of
from agentrig_mcp._unknown import answer_unknown_methods

__all__ = ["AgentrigServer", "build_server", "serve_http", "serve_stdio"]

_CLIENT: ContextVar[_ClientAgents | None] = ContextVar("agentrig_mcp_client", default=None)

_ASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"prompt": {"type": "string", "description": "What to ask the agent."}},
    "required": ["prompt"],
    "additionalProperties": False,
}


def _agents(rt: Runtime, names: Sequence[str] | None) -> list[Agent]:
    known = list(rt.agents.ids())
    if not names:
        return [rt.agent(name) for name in known]
    issues = []
    for name in names:
        if name not in known:
            import difflib

            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            issues.append(
                Issue(
                    "mcp.unknown_agent",
                    f"no agent {name!r}{hint} (agents: {', '.join(known) or 'none'})",
                    ("--agent",),
                )
            )
    if issues:
        raise ConfigError(issues)
    return [rt.agent(AgentId(name)) for name in names]  # each one checked as known above


class _ClientAgents:
    """One MCP client session's own agents: a fresh session of each agent it asks."""

    def __init__(self, rt: Runtime) -> None:
        self._rt = rt
        self._agents: dict[AgentId, Agent] = {}
        self._lock = anyio.Lock()

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
        for agent in agents:
            if not self._rt.closed:
                await self._rt.agents.dispose(agent.id, cancel_running=True)


class AgentrigServer(Server[Any, Any]):
    """The SDK's server, giving each client session (one ``run``) its own agents."""

    def __init__(self, rt: Runtime, name: str, names: Sequence[str] = ()) -> None:
        super().__init__(name, version=agentrig_version)  # not the SDK's version
        self._rt = rt
        self._names = tuple(names)
        #: what each authenticated caller may use (None: every caller may use every tool)
        self.policy: AccessPolicy | None = None

    def permits(self, tool: str) -> bool:
        """May the caller of the request being handled use ``tool``?  Fails closed: with a
        policy, a request without an HTTP caller to authenticate may use nothing."""
        policy = self.policy
        if policy is None:
            return True
        try:
            request = self.request_context.request
        except LookupError:
            return False
        return policy.permits(bearer_of(getattr(request, "headers", None)), tool)

    def served_names(self) -> list[str]:
        """The names this server lists to a caller with every grant."""
        return list(self._names)

    async def run(
        self,
        read_stream: MemoryObjectReceiveStream[SessionMessage | Exception],
        write_stream: MemoryObjectSendStream[SessionMessage],
        *args: Any,
        **kwargs: Any,
    ) -> None:
        client = _ClientAgents(self._rt)
        token = _CLIENT.set(client)  # the handlers' tasks start inside: they see it
        inner_send, inner = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(answer_unknown_methods, read_stream, inner_send, write_stream)
                await super().run(inner, write_stream, *args, **kwargs)
                tg.cancel_scope.cancel()
        finally:
            _CLIENT.reset(token)
            with anyio.CancelScope(shield=True):
                await client.aclose()


async def _ask(rt: Runtime, served: Agent, prompt: str, signal: CancelSignal) -> str:
    client = _CLIENT.get()
    one_off = client is None  # outside a client session: a session for this call alone
    if client is None:
        client = _ClientAgents(rt)
    try:
        agent = await client.of(served)
        return str((await agent.run(prompt, signal=signal)).value)
    finally:
        if one_off:
            with anyio.CancelScope(shield=True):
                await client.aclose()


def _annotations(tool: Tool) -> types.ToolAnnotations:
    return types.ToolAnnotations(
        readOnlyHint=tool.risk == "inspect",
        destructiveHint=tool.risk == "execute",
    )


def _content(message: ToolMessage) -> list[types.ContentBlock]:
    blocks: list[types.ContentBlock] = []
    for block in message.content:
        if isinstance(block, ImageBlock) and block.data is not None:
            blocks.append(
                types.ImageContent(type="image", data=block.data, mimeType=block.media_type)
            )
        elif isinstance(block, TextBlock):
            blocks.append(types.TextContent(type="text", text=block.text))
    return blocks


def _coded(error: AgentrigError) -> str:
    """``code: message``, without repeating a code the message starts with (``aborted:``)."""
    text = str(error)
    return text if text.startswith(f"{error.code}:") else f"{error.code}: {text}"


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)


def build_server(rt: Runtime, agents: Sequence[str] | None = None) -> AgentrigServer:
    """An MCP server over ``rt``: the tools of ``agents`` (default: every agent) and an
    ``ask_<agent>`` tool per agent."""
    served = _agents(rt, agents)
    owners: dict[str, tuple[Agent, Tool]] = {}
    for agent in served:
        for tool in agent.all_tools():
            owners.setdefault(tool.id, (agent, tool))
    askers = {f"ask_{agent.id}": agent for agent in served}
    clash = sorted(set(askers) & set(owners))
    if clash:
        raise ConfigError(
            [
                Issue(
                    "mcp.name_clash",
                    f"a tool is named like an agent's ask tool: {', '.join(clash)}",
                )
            ]
        )
    server = AgentrigServer(rt, "agentrig", [*owners, *askers])
    # (the SDK's handler decorators carry no annotations, hence the two ignores below)

    @server.list_tools()  # type: ignore[no-untyped-call,untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        listed = [
            types.Tool(
                name=tool_id,
                description=tool.description,
                inputSchema=dict(tool.input_schema.json_schema),
                annotations=_annotations(tool),
            )
            for tool_id, (_agent, tool) in owners.items()
        ]
        listed += [
            types.Tool(
                name=name,
                description=f"Ask the agent {agent.id!r}: a prompt in, its answer out.",
                inputSchema=_ASK_SCHEMA,
            )
            for name, agent in askers.items()
        ]
        return [tool for tool in listed if server.permits(tool.name)]

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        signal = CancelSignal()
        if not server.permits(name):
            return _error(f"mcp.not_granted: this caller may not use {name!r}")
        try:
            if name in askers:
                prompt = arguments.get("prompt")
                if not isinstance(prompt, str) or len(arguments) != 1:
                    return _error("ask tools take one string argument, 'prompt'")
                answer = await _ask(rt, askers[name], prompt, signal)
                return types.CallToolResult(content=[types.TextContent(type="text", text=answer)])
            owner = owners.get(name)
            if owner is None:
                return _error(f"unknown tool {name!r}")
            called = await owner[0].call_tool(name, arguments, signal=signal)
        except anyio.get_cancelled_exc_class():
            signal.cancel("cancelled by the MCP client")  # reaches the agent's run and tool
            raise
        except ToolReportedError as exc:  # the tool's own error output, as the model sees it
            return _error(str(exc))
        except AgentrigError as exc:  # refused, invalid arguments, the tool failed
            return _error(_coded(exc))
        message = called.value
        return types.CallToolResult(content=_content(message), isError=message.status != "ok")

    return server


async def serve_stdio(server: Server[Any, Any]) -> None:
    """Serve over this process's stdin/stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(
    server: Server[Any, Any],
    host: str,
    port: int,
    *,
    on_listening: Callable[[str], None] | None = None,
    keys: Sequence[str] = (),
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    policy: AccessPolicy | None = None,
) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` (asyncio only: uvicorn).

    ``keys`` are the bearer keys a client must send (none: loopback only); a request's
    ``Host`` must name the listening address, a loopback name on loopback, or one of
    ``allowed_hosts``, and an ``Origin`` must be the server's own or one of
    ``allowed_origins``.  ``policy`` says which tools each key may list and call.
    """
    if policy is not None:
        if not isinstance(server, AgentrigServer):
            raise TypeError("an access policy needs a server from build_server()")
        server.policy = policy
    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import (
        DEFAULT_MAX_REQUEST_BODY_SIZE,
        TransportSecuritySettings,
    )
    from starlette.applications import Starlette
    from starlette.routing import Route

    from agentrig_mcp._serve_http import (
        BearerGuard,
        JsonDepthGuard,
        check_bind,
        host_names,
        quiet_client_exits,
    )

    check_bind(host, keys)
    quiet_client_exits()
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    bound = sock.getsockname()[1]
    names = host_names(host, bound, allowed_hosts)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=names,
        allowed_origins=[
            *(f"{scheme}://{name}" for name in names for scheme in ("http", "https")),
            *allowed_origins,
        ],
    )
    manager = StreamableHTTPSessionManager(app=server, security_settings=security)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    limit = DEFAULT_MAX_REQUEST_BODY_SIZE  # the SDK's own bound on a body
    guarded = BearerGuard(JsonDepthGuard(manager.handle_request, limit), keys)
    middleware = []
    if allowed_origins:  # a browser client on another origin needs CORS answers to call
        from starlette.middleware import Middleware
        from starlette.middleware.cors import CORSMiddleware

        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(allowed_origins),
                allow_methods=["GET", "POST", "DELETE"],
                allow_headers=["*"],
                expose_headers=["mcp-session-id"],
            )
        )
    # both spellings answer (no redirect from one to the other)
    routes = [Route("/mcp", guarded), Route("/mcp/", guarded)]
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware)
    if on_listening is not None:
        shown = f"[{host}]" if ":" in host else host
        on_listening(f"http://{shown}:{bound}/mcp")
    # the client address is the socket's: forwarded-for headers are nobody's word here
    config = uvicorn.Config(app, log_level="warning", lifespan="on", proxy_headers=False)
    await uvicorn.Server(config).serve(sockets=[sock])
