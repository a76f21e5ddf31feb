"""An MCP server offering resource subscriptions, written with the SDK's low-level ``Server``
(stdio): ``python _mcp_subscribe_server.py``.

The SDK's servers advertise ``resources.subscribe`` only when told to (its
``get_capabilities`` leaves it off), so this one says so itself.  ``note://counter`` reads
the counter; the tool ``bump`` adds one (``{"crash": true}``: exits instead) and tells
subscribers ``notifications/resources/updated``; ``note://other`` is announced as updated
too, though nobody subscribed to it.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from pydantic import AnyUrl

COUNTER = "note://counter"
OTHER = "note://other"


class SubscribingServer(Server[Any, Any]):
    def get_capabilities(
        self,
        notification_options: NotificationOptions,
        experimental_capabilities: dict[str, dict[str, Any]],
    ) -> types.ServerCapabilities:
        found = super().get_capabilities(notification_options, experimental_capabilities)
        if found.resources is not None:
            found.resources.subscribe = True
        return found


def build() -> SubscribingServer:
    server = SubscribingServer("subscribing")
    state = {"count": 0}
    subscribed: set[str] = set()

    # The low-level Server's decorator factories (mcp 1.x) carry no annotations: mypy calls
    # them untyped (no-untyped-call) and so the functions they wrap (untyped-decorator);
    # every "type: ignore" below is for that and nothing else.
    @server.list_resources()  # type: ignore[no-untyped-call,untyped-decorator]
    async def list_resources() -> list[types.Resource]:
        return [
            types.Resource(uri=AnyUrl(COUNTER), name="counter", mimeType="text/plain"),
            types.Resource(uri=AnyUrl(OTHER), name="other", mimeType="text/plain"),
        ]

    @server.read_resource()  # type: ignore[no-untyped-call,untyped-decorator]
    async def read_resource(uri: AnyUrl) -> str:
        return f"count={state['count']}" if str(uri) == COUNTER else "other"

    @server.subscribe_resource()  # type: ignore[no-untyped-call,untyped-decorator]
    async def subscribe(uri: AnyUrl) -> None:
        subscribed.add(str(uri))

    @server.unsubscribe_resource()  # type: ignore[no-untyped-call,untyped-decorator]
    async def unsubscribe(uri: AnyUrl) -> None:
        subscribed.discard(str(uri))

    @server.list_tools()  # type: ignore[no-untyped-call,untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        schema = {"type": "object", "properties": {"crash": {"type": "boolean"}}}
        return [types.Tool(name="bump", description="Count one up.", inputSchema=schema)]

    @server.call_tool()  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[types.TextContent]:
        if arguments.get("crash"):
            os._exit(3)  # gone mid-call: a restart has forgotten every subscription
        state["count"] += 1
        session = server.request_context.session
        # the other resource's update goes out unasked: a client drops what it did not ask for
        await session.send_resource_updated(AnyUrl(OTHER))
        if COUNTER in subscribed:
            await session.send_resource_updated(AnyUrl(COUNTER))
        return [types.TextContent(type="text", text=f"subscribed={sorted(subscribed)}")]

    return server


async def main() -> None:
    server = build()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
