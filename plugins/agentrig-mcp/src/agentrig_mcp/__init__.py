"""agentrig-mcp: MCP servers as agentrig toolsets, and agentrig served over MCP.

Client: each configured server's tools become agentrig tools named ``mcp__<server>__<tool>``;
the runtime's :class:`McpClient` is the service ``rt.services.require(MCP)`` (resources,
prompts).  Server: ``agentrig mcp serve``.  See ``docs/mcp.md``.

Importing the package is cheap (names load on first use), so ``agentrig --help`` does not pay
for the MCP SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig.plugin import lazy_exports

_LAZY: dict[str, str] = {
    "MCP": "agentrig_mcp._service",
    "HttpServerSpec": "agentrig_mcp._config",
    "McpClient": "agentrig_mcp._client",
    "McpAuthError": "agentrig_mcp._errors",
    "McpError": "agentrig_mcp._errors",
    "McpServerNotApproved": "agentrig_mcp._errors",
    "McpServerUnavailable": "agentrig_mcp._errors",
    "McpSettings": "agentrig_mcp._config",
    "McpTool": "agentrig_mcp._tools",
    "OAuthLogin": "agentrig_mcp._oauth",
    "OAuthSettings": "agentrig_mcp._config",
    "ServerConnection": "agentrig_mcp._connection",
    "StdioServerSpec": "agentrig_mcp._config",
    "build_server": "agentrig_mcp._serve",
    "expand_vars": "agentrig_mcp._config",
    "name_tools": "agentrig_mcp._names",
    "oauth_logins": "agentrig_mcp._oauth",
    "parse_mcp_json": "agentrig_mcp._config",
    "parse_settings": "agentrig_mcp._config",
    "render_result": "agentrig_mcp._tools",
    "risk_of": "agentrig_mcp._tools",
    "serve_http": "agentrig_mcp._serve",
    "serve_stdio": "agentrig_mcp._serve",
    "tool_name": "agentrig_mcp._names",
}

__all__ = [
    "HttpServerSpec",
    "MCP",
    "McpAuthError",
    "McpClient",
    "McpError",
    "McpServerNotApproved",
    "McpServerUnavailable",
    "McpSettings",
    "McpTool",
    "OAuthLogin",
    "OAuthSettings",
    "ServerConnection",
    "StdioServerSpec",
    "build_server",
    "expand_vars",
    "name_tools",
    "oauth_logins",
    "parse_mcp_json",
    "parse_settings",
    "render_result",
    "risk_of",
    "serve_http",
    "serve_stdio",
    "tool_name",
]


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)


if TYPE_CHECKING:
    from agentrig_mcp._client import McpClient
    from agentrig_mcp._config import (
        HttpServerSpec,
        McpSettings,
        OAuthSettings,
        StdioServerSpec,
        expand_vars,
        parse_mcp_json,
        parse_settings,
    )
    from agentrig_mcp._connection import ServerConnection
    from agentrig_mcp._errors import (
        McpAuthError,
        McpError,
        McpServerNotApproved,
        McpServerUnavailable,
    )
    from agentrig_mcp._names import name_tools, tool_name
    from agentrig_mcp._oauth import OAuthLogin, oauth_logins
    from agentrig_mcp._serve import build_server, serve_http, serve_stdio
    from agentrig_mcp._service import MCP
    from agentrig_mcp._tools import McpTool, render_result, risk_of
