"""The runtime service through which tools and applications reach the MCP client."""

from __future__ import annotations

from agentrig.plugin import ServiceKey
from agentrig.tools import ToolContext
from agentrig_mcp._client import McpClient

__all__ = ["MCP", "client_of"]

MCP: ServiceKey[McpClient] = ServiceKey("mcp")
"""``rt.services.require(MCP)``: the runtime's MCP client (servers, tools, resources, prompts)."""


def client_of(ctx: ToolContext) -> McpClient:
    """The MCP client of the runtime a tool call runs in."""
    client: McpClient = ctx.agent.runtime.services.require(MCP)
    return client
