"""Two tools that let a model list and read the resources of the runtime's MCP servers.

Registered as ``agentrig.tools`` entry points (``list_mcp_resources``, ``read_mcp_resource``;
the toolset ``mcp_resources`` stands for both): an agent lists them in its ``tools`` like any
tool.  They reach the servers through the runtime's MCP client (the ``mcp`` service).
"""

from __future__ import annotations

import json

from agentrig.tools import ToolContext, Toolset, tool
from agentrig_mcp._errors import McpError
from agentrig_mcp._service import client_of
from agentrig_mcp._tools import block_text, truncate, untrusted_label

__all__ = ["MCP_RESOURCE_TOOLS", "list_mcp_resources", "read_mcp_resource"]

_MAX_CHARS = 100_000


@tool(risk="inspect")
async def list_mcp_resources(ctx: ToolContext, server: str | None = None) -> str:
    """List the resources of the MCP servers (or of one server): uri, name, type, description;
    ``updated: true`` marks a subscribed resource that changed since it was last read.

    Servers that offer no resources are left out; one that fails is listed with its error.
    """
    client = client_of(ctx)
    names = [server] if server is not None else client.servers()
    listed: list[dict[str, object]] = []
    for name in names:
        try:
            if server is None and not await client.offers_resources(name):
                continue
            resources = await client.list_resources(name)
        except McpError as exc:
            if server is not None:
                raise
            listed.append({"server": name, "error": str(exc)})
            continue
        updated = client.updated_resources(name)
        for resource in resources:
            entry: dict[str, object] = {
                "server": name,
                "uri": str(resource.uri),
                "name": resource.name,
                "mimeType": resource.mime_type,
                "description": resource.description,
            }
            if str(resource.uri) in updated:  # subscribed, and changed since it was read
                entry["updated"] = True
            listed.append(entry)
    text = json.dumps(listed, ensure_ascii=False)
    servers = {str(entry["server"]) for entry in listed}
    if all(client.connection(name).spec.trust_content for name in servers):
        return text
    return untrusted_label(", ".join(sorted(servers)), "resource listing") + text


@tool(risk="inspect")
async def read_mcp_resource(server: str, uri: str, ctx: ToolContext) -> str:
    """Read one resource of an MCP server by its URI."""
    client = client_of(ctx)
    result = await client.read_resource(server, uri)
    from mcp import types

    parts = []
    for item in result.contents:
        if isinstance(item, types.TextResourceContents):
            parts.append(item.text)
        else:
            parts.append(block_text(types.EmbeddedResource(type="resource", resource=item)))
    text = truncate("\n".join(parts), _MAX_CHARS)
    if client.connection(server).spec.trust_content:
        return text
    return untrusted_label(server, f"resource {uri}") + text


MCP_RESOURCE_TOOLS = Toolset((list_mcp_resources, read_mcp_resource))
