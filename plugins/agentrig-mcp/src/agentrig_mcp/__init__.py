"""agentrig-mcp: MCP servers as agentrig toolsets, and agentrig served over MCP.

Client: each configured server's tools become agentrig tools named ``mcp__<server>__<tool>``
(see ``docs/mcp.md``).  :class:`McpClient` is the client without a runtime around it.
"""

from agentrig_mcp._client import McpClient
from agentrig_mcp._config import (
    HttpServerSpec,
    McpSettings,
    StdioServerSpec,
    expand_vars,
    parse_mcp_json,
    parse_settings,
)
from agentrig_mcp._connection import ServerConnection
from agentrig_mcp._errors import McpError, McpServerNotApproved, McpServerUnavailable
from agentrig_mcp._tools import McpTool, render_result, risk_of, tool_name

__all__ = [
    "HttpServerSpec",
    "McpClient",
    "McpError",
    "McpServerNotApproved",
    "McpServerUnavailable",
    "McpSettings",
    "McpTool",
    "ServerConnection",
    "StdioServerSpec",
    "expand_vars",
    "parse_mcp_json",
    "parse_settings",
    "render_result",
    "risk_of",
    "tool_name",
]
