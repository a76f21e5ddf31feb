"""A MCPServer server that asks its client things: the agent's model (sampling) and the
person (elicitation).  Run over stdio by the sampling and elicitation tests.

Each tool says what came back, so a test reads the whole exchange from the tool result.
"""

from __future__ import annotations

import json
from typing import Any

from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

#: MCPServer's context over any session, lifespan and request (the SDK finds the
#: parameter by this class)
AnyContext = Context[Any, Any]

mcp = MCPServer("asking")


class Booking(BaseModel):
    name: str = Field(description="Who books")
    guests: int = Field(ge=1, le=10)
    vegetarian: bool = False


@mcp.tool()
async def client_capabilities(ctx: AnyContext) -> str:
    """What the client advertised at initialization."""
    params = ctx.session.client_params
    caps = params.capabilities if params is not None else types.ClientCapabilities()
    return json.dumps(
        {"sampling": caps.sampling is not None, "elicitation": caps.elicitation is not None}
    )


@mcp.tool()
async def summarize(text: str, max_tokens: int, ctx: AnyContext) -> str:
    """Ask the client's model to summarize ``text``."""
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text=f"Summarize: {text}")
    )
    try:
        result = await ctx.session.create_message(
            [message], max_tokens=max_tokens, system_prompt="You summarize.", temperature=0.2
        )
    except MCPError as exc:
        return f"refused: {exc.error.message} (code {exc.error.code})"
    content = result.content
    said = content.text if isinstance(content, types.TextContent) else content.type
    return f"model={result.model} stop={result.stop_reason} text={said}"


@mcp.tool()
async def book(ctx: AnyContext) -> str:
    """Ask the person who is coming."""
    result = await ctx.elicit("Who is coming to dinner?", Booking)
    if result.action == "accept":
        data = result.data
        return f"booked {data.name} x{data.guests} vegetarian={data.vegetarian}"
    return f"not booked: {result.action}"


@mcp.tool()
async def nested_form(ctx: AnyContext) -> str:
    """Ask with a schema MCP does not allow (a nested object)."""
    schema = {
        "type": "object",
        "properties": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
    try:
        result = await ctx.session.elicit("Where?", schema)
    except MCPError as exc:
        return f"refused: {exc.error.message}"
    return f"answered: {result.action}"


if __name__ == "__main__":
    mcp.run()
