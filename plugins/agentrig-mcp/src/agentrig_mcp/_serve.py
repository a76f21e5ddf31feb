"""agentrig as an MCP server: a composition's tools and agents, over stdio or streamable HTTP.

Each served agent contributes its tools (called through ``agent.call_tool``: the same
permission gate, hooks and validation as a model's call) and one ``ask_<agent>`` tool (a
prompt in, the run's answer out).  Each MCP client session asks its own session of the agent
(:mod:`agentrig_mcp._serve_clients`), so no client sees another's conversation and clients
do not wait for each other.  Built on the SDK's low-level ``Server``, which also answers a
method it does not know with "method not found" and serves the newer protocol revision
(``server/discover``) to the clients that ask for it.

Over HTTP the SDK's transport security checks ``Host`` and ``Origin`` (DNS rebinding), and
bearer keys from ``[mcp.serve] api_keys`` guard the endpoint; a non-loopback address is
refused without keys.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import anyio
from mcp import types
from mcp.server import InitializationOptions, Server, ServerRequestContext

from agentrig import __version__ as agentrig_version
from agentrig.agent import Agent
from agentrig.cancel import CancelSignal
from agentrig.errors import AgentrigError, ConfigError, Issue, did_you_mean
from agentrig.ids import AgentId
from agentrig.kernel import Runtime
from agentrig.llm import ImageBlock, TextBlock, ToolMessage
from agentrig.tools import Tool, ToolReportedError
from agentrig_mcp._access import AccessPolicy, bearer_of
from agentrig_mcp._serve_clients import ask, client_session

__all__ = ["AgentrigServer", "build_server", "serve_http", "serve_stdio"]

Context = ServerRequestContext[Any, Any]
ListTools = Callable[
    [Context, types.PaginatedRequestParams | None], Awaitable[types.ListToolsResult]
]
CallTool = Callable[[Context, types.CallToolRequestParams], Awaitable[types.CallToolResult]]

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
            hint = did_you_mean(name, known)
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


class AgentrigServer(Server[Any]):
    """The SDK's server, giving each client session its own agents (one ``run``; over
    HTTP, each MCP session: :class:`~agentrig_mcp._serve_clients.PerSessionAgents`)."""

    def __init__(
        self,
        rt: Runtime,
        name: str,
        names: Sequence[str] = (),
        *,
        on_list_tools: ListTools | None = None,
        on_call_tool: CallTool | None = None,
    ) -> None:
        super().__init__(  # the version is agentrig's, not the SDK's
            name, version=agentrig_version, on_list_tools=on_list_tools, on_call_tool=on_call_tool
        )
        self.runtime = rt
        self._names = tuple(names)
        #: what each authenticated caller may use (None: every caller may use every tool)
        self.policy: AccessPolicy | None = None

    def permits(self, ctx: Context, tool: str) -> bool:
        """May the caller of the request ``ctx`` use ``tool``?  Fails closed: with a policy,
        a request without an HTTP caller to authenticate may use nothing."""
        policy = self.policy
        if policy is None:
            return True
        request = ctx.request
        if request is None:
            return False
        return policy.permits(bearer_of(getattr(request, "headers", None)), tool)

    def served_names(self) -> list[str]:
        """The names this server lists to a caller with every grant."""
        return list(self._names)

    async def run(
        self,
        read_stream: Any,  # the SDK's stream protocols (private names): any stream pair
        write_stream: Any,
        initialization_options: InitializationOptions,
        raise_exceptions: bool = False,
    ) -> None:
        async with client_session(self.runtime):  # the handlers' tasks start inside: they see it
            await super().run(read_stream, write_stream, initialization_options, raise_exceptions)


def _annotations(tool: Tool) -> types.ToolAnnotations:
    return types.ToolAnnotations(
        read_only_hint=tool.risk == "inspect",
        destructive_hint=tool.risk == "execute",
    )


def _content(message: ToolMessage) -> list[types.ContentBlock]:
    blocks: list[types.ContentBlock] = []
    for block in message.content:
        if isinstance(block, ImageBlock) and block.data is not None:
            blocks.append(
                types.ImageContent(type="image", data=block.data, mime_type=block.media_type)
            )
        elif isinstance(block, TextBlock):
            blocks.append(types.TextContent(type="text", text=block.text))
    return blocks


def _coded(error: AgentrigError) -> str:
    """``code: message``, without repeating a code the message starts with (``aborted:``)."""
    text = str(error)
    return text if text.startswith(f"{error.code}:") else f"{error.code}: {text}"


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


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

    async def list_tools(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listed = [
            types.Tool(
                name=tool_id,
                description=tool.description,
                input_schema=dict(tool.input_schema.json_schema),
                annotations=_annotations(tool),
            )
            for tool_id, (_agent, tool) in owners.items()
        ]
        listed += [
            types.Tool(
                name=name,
                description=f"Ask the agent {agent.id!r}: a prompt in, its answer out.",
                input_schema=_ASK_SCHEMA,
            )
            for name, agent in askers.items()
        ]
        return types.ListToolsResult(tools=[t for t in listed if server.permits(ctx, t.name)])

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        # (no schema check here: the agent's call validates the arguments, as a model's)
        name, arguments = params.name, params.arguments or {}
        signal = CancelSignal()
        if not server.permits(ctx, name):
            return _error(f"mcp.not_granted: this caller may not use {name!r}")
        try:
            if name in askers:
                prompt = arguments.get("prompt")
                if not isinstance(prompt, str) or len(arguments) != 1:
                    return _error("ask tools take one string argument, 'prompt'")
                answer = await ask(rt, askers[name], prompt, signal)
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
        return types.CallToolResult(content=_content(message), is_error=message.status != "ok")

    server = AgentrigServer(
        rt, "agentrig", [*owners, *askers], on_list_tools=list_tools, on_call_tool=call_tool
    )
    return server


async def serve_stdio(server: Server[Any]) -> None:
    """Serve over this process's stdin/stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(
    server: Server[Any],
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
    from mcp.server.streamable_http_manager import (
        DEFAULT_SESSION_IDLE_TIMEOUT,
        StreamableHTTPSessionManager,
    )
    from mcp.server.transport_security import (
        DEFAULT_MAX_REQUEST_BODY_SIZE,
        TransportSecuritySettings,
    )
    from starlette.applications import Starlette
    from starlette.routing import Route

    from agentrig_mcp._serve_clients import PerSessionAgents
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
    idle = DEFAULT_SESSION_IDLE_TIMEOUT  # the SDK's; our record of a session ends with it
    manager = StreamableHTTPSessionManager(
        server, security_settings=security, session_idle_timeout=idle
    )
    endpoint = manager.handle_request
    sessions = None
    if isinstance(server, AgentrigServer):
        sessions = PerSessionAgents(endpoint, server.runtime, idle=idle)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            async with manager.run():
                yield
        finally:
            if sessions is not None:
                await sessions.aclose()

    limit = DEFAULT_MAX_REQUEST_BODY_SIZE  # the SDK's own bound on a body
    guarded = BearerGuard(JsonDepthGuard(sessions or endpoint, limit), keys)
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
