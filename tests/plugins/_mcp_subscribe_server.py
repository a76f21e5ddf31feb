"""An MCP server offering resource subscriptions, written with the SDK's low-level ``Server``
(stdio): ``python _mcp_subscribe_server.py``.

The SDK's low-level server advertises ``resources.subscribe`` because it has a subscribe
handler.  ``note://counter`` reads
the counter; the tool ``bump`` adds one (``{"crash": true}``: exits instead) and tells
subscribers ``notifications/resources/updated``; ``note://other`` is announced as updated
too, though nobody subscribed to it.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

COUNTER = "note://counter"
OTHER = "note://other"


Context = ServerRequestContext[Any, Any]


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def build() -> Server[Any]:
    state = {"count": 0}
    subscribed: set[str] = set()

    async def list_resources(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=COUNTER, name="counter", mime_type="text/plain"),
                types.Resource(uri=OTHER, name="other", mime_type="text/plain"),
            ]
        )

    async def read_resource(
        ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        text = f"count={state['count']}" if params.uri == COUNTER else "other"
        contents = types.TextResourceContents(uri=params.uri, text=text, mime_type="text/plain")
        return types.ReadResourceResult(contents=[contents])

    async def subscribe(ctx: Context, params: types.SubscribeRequestParams) -> types.EmptyResult:
        subscribed.add(params.uri)
        return types.EmptyResult()

    async def unsubscribe(
        ctx: Context, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        subscribed.discard(params.uri)
        return types.EmptyResult()

    async def list_tools(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {"crash": {"type": "boolean"}}}
        bump = types.Tool(name="bump", description="Count one up.", input_schema=schema)
        return types.ListToolsResult(tools=[bump])

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        if (params.arguments or {}).get("crash"):
            os._exit(3)  # gone mid-call: a restart has forgotten every subscription
        state["count"] += 1
        # the other resource's update goes out unasked: a client drops what it did not ask for
        await ctx.session.send_resource_updated(OTHER)
        if COUNTER in subscribed:
            await ctx.session.send_resource_updated(COUNTER)
        return types.CallToolResult(content=[_text(f"subscribed={sorted(subscribed)}")])

    return Server(
        "subscribing",
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def main() -> None:
    server = build()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
