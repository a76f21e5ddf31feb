"""The MCP client: a set of server connections and the agentrig tools they offer.

Independent of how a runtime is composed (that is :mod:`agentrig_mcp._plugin`): give it the
server specs, a way to start tasks, and optionally how references resolve and where
observations go.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import httpx
from mcp import types

from agentrig.diagnostics import get_logger
from agentrig.errors import UnknownIdError, closest_match, did_you_mean
from agentrig.llm import ContentBlock, ImageBlock, TextBlock, UserMessage
from agentrig.plugin import Observation
from agentrig_mcp._answers import Answers
from agentrig_mcp._config import HttpServerSpec, StdioServerSpec
from agentrig_mcp._connection import Resolve, ServerConnection, Spawn, TraceHeaders
from agentrig_mcp._errors import McpError
from agentrig_mcp._names import name_tools
from agentrig_mcp._tools import McpTool, block_text
from agentrig_mcp._transport import HttpClientFactory

if TYPE_CHECKING:
    from agentrig_mcp._oauth import OAuthFor

__all__ = ["McpClient"]

Notify = Callable[[Observation], None]


async def _literal(name: str, spec: StdioServerSpec | HttpServerSpec) -> dict[str, str]:
    return dict(spec.env) if isinstance(spec, StdioServerSpec) else dict(spec.headers)


def _plain_http(spec: HttpServerSpec, headers: dict[str, str]) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        headers=headers, timeout=httpx.Timeout(spec.timeout, read=None), trust_env=False
    )


def _filtered(
    server: str, spec: StdioServerSpec | HttpServerSpec, listed: list[types.Tool]
) -> list[types.Tool]:
    """The listed tools config lets through: ``enabled_tools`` (when set), then
    ``disabled_tools``; a name in either that the server does not list is logged."""
    names = {definition.name for definition in listed}
    missing = sorted({*(spec.enabled_tools or ()), *spec.disabled_tools} - names)
    if missing:
        get_logger(f"mcp.{server}").warning(
            "enabled_tools/disabled_tools name tools the server does not list: %s",
            ", ".join(missing),
        )
    allowed = set(spec.enabled_tools) if spec.enabled_tools is not None else names
    return [d for d in listed if d.name in allowed and d.name not in spec.disabled_tools]


def _deferral(defer: bool, resident: bool) -> bool | None:
    # above the server's threshold every tool is deferred except the resident ones; below it
    # the agent's own deferral policy decides (None)
    if not defer:
        return None
    return not resident


class McpClient:
    """Connections to MCP servers by name, and their tools as agentrig tools."""

    def __init__(
        self,
        servers: Mapping[str, StdioServerSpec | HttpServerSpec],
        *,
        spawn: Spawn,
        resolve: Resolve = _literal,
        http_client: HttpClientFactory = _plain_http,
        notify: Notify | None = None,
        max_output_chars: int = 100_000,
        trace: TraceHeaders | None = None,
        answers: Answers | None = None,
        oauth: OAuthFor | None = None,
    ) -> None:
        self._notify = notify
        self._max_chars = max_output_chars
        self._stale: set[str] = set()
        self._tools: dict[str, tuple[McpTool, ...]] = {}
        self._versions: dict[str, int] = {}
        self._updated: dict[str, set[str]] = {}
        self.connections: dict[str, ServerConnection] = {
            name: ServerConnection(
                name,
                spec,
                spawn=spawn,
                resolve=resolve,
                http_client=http_client,
                on_notification=self._notification,
                trace=trace,
                answers=answers,
                oauth=oauth,
            )
            for name, spec in servers.items()
        }
        #: entries of a server's last listing that were skipped, each with the reason
        self.skipped: dict[str, tuple[str, ...]] = {}

    def servers(self) -> list[str]:
        """The names of the servers this client connects to."""
        return list(self.connections)

    def connection(self, server: str) -> ServerConnection:
        """The connection of ``server`` (an error lists the configured servers)."""
        found = self.connections.get(server)
        if found is None:
            known = sorted(self.connections)
            hint = did_you_mean(server, known)
            raise UnknownIdError(
                f"no MCP server {server!r}{hint} (servers: {', '.join(known) or 'none'})",
                id=server,
                known=tuple(known),
                suggestion=closest_match(server, known),
            )
        return found

    def _notification(self, server: str, message: types.ServerNotification) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._stale.add(server)
        if isinstance(message, types.ProgressNotification):
            return  # the call it belongs to reports it (mcp/progress), once
        data: dict[str, Any] = {"server": server}
        if isinstance(message, types.ResourceUpdatedNotification):
            uri = message.params.uri
            if uri not in self.connection(server).subscriptions:
                return  # not asked for: a server cannot flood the observers with them
            self._updated.setdefault(server, set()).add(uri)
            data["uri"] = uri
        if self._notify is not None:
            self._notify(Observation(f"mcp/{message.method}", None, data))

    def is_stale(self, server: str) -> bool:
        """Has the server said its tool list changed since :meth:`tools` last listed it?"""
        return server in self._stale

    def version(self, server: str) -> int:
        """How many times :meth:`tools` has listed the server (0: never)."""
        return self._versions.get(server, 0)

    async def tools(self, server: str, *, refresh: bool = False) -> tuple[McpTool, ...]:
        """The server's tools (starting it when needed); listed again after ``list_changed``
        or with ``refresh=True``."""
        cached = self._tools.get(server)
        if cached is not None and not refresh and server not in self._stale:
            return cached
        connection = self.connection(server)
        self._stale.discard(server)
        if (await connection.capabilities()).tools is None:
            # it offers no tools (said at initialization): nothing to ask it for
            self.skipped[server] = ()
            self._versions[server] = self.version(server) + 1
            self._tools[server] = ()
            return ()
        listed, invalid = await connection.list_tools()
        listed = _filtered(server, connection.spec, listed)
        naming = name_tools(server, [definition.name for definition in listed])
        skipped = [*invalid, *naming.skipped]
        for reason in skipped:
            get_logger(f"mcp.{server}").warning("skipped a tool the server listed: %s", reason)
        spec = connection.spec
        defer = spec.defer_above is not None and len(listed) > spec.defer_above
        previous = {t.definition.name: t for t in cached or ()}
        tools: list[McpTool] = []
        taken: set[str] = set()
        for definition in listed:
            name = naming.ids.get(definition.name)
            if name is None or definition.name in taken:
                continue  # skipped (said above), or the second entry of a name listed twice
            taken.add(definition.name)
            old = previous.get(definition.name)
            deferred = _deferral(defer, definition.name in spec.resident_tools)
            if old is not None and old.definition == definition and old.deferred == deferred:
                tools.append(old)  # unchanged: keep the object (agents cache by identity)
                continue
            tools.append(
                McpTool(
                    name,
                    definition,
                    connection,
                    notify=self._notify,
                    deferred=deferred,
                    max_output_chars=self._max_chars,
                )
            )
        self.skipped[server] = tuple(skipped)
        self._versions[server] = self.version(server) + 1
        result = self._tools[server] = tuple(tools)
        return result

    # ---- resources and prompts -----------------------------------------------------------
    async def offers_resources(self, server: str) -> bool:
        """Did the server advertise resources at initialization (starting it when needed)?"""
        return (await self.connection(server).capabilities()).resources is not None

    async def _require(self, server: str, feature: str) -> ServerConnection:
        """The server's connection, when it advertised ``feature`` at initialization: a
        request it never offered is not sent (spec 002), the caller learns what is missing."""
        connection = self.connection(server)
        if getattr(await connection.capabilities(), feature) is None:
            raise McpError(
                f"MCP server {server!r} does not offer {feature} (it did not advertise them "
                "at initialization)",
                code="mcp.unsupported",
            )
        return connection

    async def list_resources(self, server: str) -> list[types.Resource]:
        """Every resource the server lists (all pages)."""
        connection = await self._require(server, "resources")
        resources: list[types.Resource] = []
        cursor: str | None = None
        while True:

            async def page(
                session: Any, meta: dict[str, Any], cursor: str | None = cursor
            ) -> types.ListResourcesResult:
                params = types.PaginatedRequestParams(cursor=cursor)
                result: types.ListResourcesResult = await session.list_resources(params=params)
                return result

            result = await connection.request(page, what="resources/list")
            resources += result.resources
            cursor = result.next_cursor
            if not cursor:
                return resources

    async def read_resource(self, server: str, uri: str) -> types.ReadResourceResult:
        """Read one resource by URI."""

        async def read(session: Any, meta: dict[str, Any]) -> types.ReadResourceResult:
            result: types.ReadResourceResult = await session.read_resource(uri)
            return result

        connection = await self._require(server, "resources")
        result = await connection.request(read, what=f"reading {uri!r}")
        self._updated.get(server, set()).discard(uri)
        return result

    async def subscribe_resource(self, server: str, uri: str) -> None:
        """Ask the server to say when ``uri`` changes (``resources/subscribe``).

        Only a server that advertised ``resources.subscribe`` at initialization is asked; for
        any other, :class:`McpError` ``mcp.unsupported`` says which feature it lacks.  Each
        ``notifications/resources/updated`` then marks the URI in :meth:`updated_resources`
        (until it is read again) and is observed as ``mcp/notifications/resources/updated``
        with its ``uri``.  A restarted server is subscribed again once it has started.
        """
        connection = await self._require(server, "resources")
        resources = (await connection.capabilities()).resources
        if resources is None or not resources.subscribe:
            raise McpError(
                f"MCP server {server!r} does not offer resource subscriptions (it did not "
                "advertise resources.subscribe at initialization)",
                code="mcp.unsupported",
            )

        async def subscribe(session: Any, meta: dict[str, Any]) -> None:
            await connection.raw_request(session, "resources/subscribe", {"uri": uri})

        await connection.request(subscribe, what=f"subscribing to {uri!r}")
        connection.subscriptions.add(uri)

    async def unsubscribe_resource(self, server: str, uri: str) -> None:
        """Stop the updates of :meth:`subscribe_resource` (``resources/unsubscribe``)."""
        connection = self.connection(server)
        if uri not in connection.subscriptions:
            return
        connection.subscriptions.discard(uri)

        async def unsubscribe(session: Any, meta: dict[str, Any]) -> None:
            await connection.raw_request(session, "resources/unsubscribe", {"uri": uri})

        await connection.request(unsubscribe, what=f"unsubscribing from {uri!r}")

    def updated_resources(self, server: str) -> frozenset[str]:
        """The subscribed URIs the server said changed since they were last read."""
        return frozenset(self._updated.get(server, ()))

    async def list_prompts(self, server: str) -> list[types.Prompt]:
        """Every prompt the server lists (all pages)."""
        connection = await self._require(server, "prompts")
        prompts: list[types.Prompt] = []
        cursor: str | None = None
        while True:

            async def page(
                session: Any, meta: dict[str, Any], cursor: str | None = cursor
            ) -> types.ListPromptsResult:
                params = types.PaginatedRequestParams(cursor=cursor)
                result: types.ListPromptsResult = await session.list_prompts(params=params)
                return result

            result = await connection.request(page, what="prompts/list")
            prompts += result.prompts
            cursor = result.next_cursor
            if not cursor:
                return prompts

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, str] | None = None
    ) -> types.GetPromptResult:
        """Render a prompt with its arguments."""

        async def get(session: Any, meta: dict[str, Any]) -> types.GetPromptResult:
            result: types.GetPromptResult = await session.get_prompt(name, dict(arguments or {}))
            return result

        connection = await self._require(server, "prompts")
        return await connection.request(get, what=f"the prompt {name!r}")

    async def prompt_message(
        self, server: str, name: str, arguments: Mapping[str, str] | None = None
    ) -> UserMessage:
        """Render a prompt into one user message (``await agent.run(message)`` sends it).

        The prompt's messages are joined in order: text as text blocks, images as image
        blocks, embedded text resources as text; the source is ``mcp:<server>/<name>``.
        """
        rendered = await self.get_prompt(server, name, arguments)
        blocks: list[ContentBlock] = []
        for message in rendered.messages:
            content = message.content
            if isinstance(content, types.ImageContent):
                blocks.append(ImageBlock(media_type=content.mime_type, data=content.data))
            else:
                blocks.append(TextBlock(text=block_text(content)))
        if not blocks:
            blocks.append(TextBlock(text=rendered.description or ""))
        return UserMessage(content=tuple(blocks), source=f"mcp:{server}/{name}")

    async def aclose(self) -> None:
        """Stop every server (each waits for its process to be gone)."""
        for connection in self.connections.values():
            await connection.aclose()
