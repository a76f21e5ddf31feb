"""Errors of the MCP plugin (all derive from :class:`agentrig.AgentrigError`).

::

    AgentrigError
     └── McpError                      mcp.error            provider
          ├── McpAuthError             mcp.auth             user      (OAuth sign-in failed)
          ├── McpServerUnavailable     mcp.unavailable      provider  (did not start / crashed)
          └── McpServerNotApproved     mcp.not_approved     user      (project file, no approval)
"""

from __future__ import annotations

from agentrig.errors import AgentrigError, Category

__all__ = ["McpAuthError", "McpError", "McpServerNotApproved", "McpServerUnavailable"]


class McpError(AgentrigError):
    """An MCP server failed a request."""

    code = "mcp.error"
    category: Category = "provider"


class McpAuthError(McpError):
    """Signing in to an HTTP server with OAuth failed (refused, timed out, misconfigured)."""

    code = "mcp.auth"
    category = "user"


class McpServerUnavailable(McpError):
    """The server could not be started, or it exited; the next use restarts it (with backoff)."""

    code = "mcp.unavailable"
    recoverable = True


class McpServerNotApproved(McpError):
    """A server from a project file (``.mcp.json``) that config has not approved."""

    code = "mcp.not_approved"
    category = "user"
