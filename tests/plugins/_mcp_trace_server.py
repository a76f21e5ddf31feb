"""The test MCP server (``_mcp_server.py``) plus a ``trace`` tool that reports the trace
context it got: from its environment, from the request's ``_meta`` and (over HTTP) from the
request's headers.  Same arguments as ``_mcp_server.py``."""

from __future__ import annotations

import os
from typing import Any

import _mcp_server
from mcp.server.mcpserver import Context, MCPServer

_build = _mcp_server.build


def trace(ctx: Context[Any, Any]) -> str:
    """The trace context this server got: env, request _meta, HTTP header ('-' when none)."""
    extra: dict[str, Any] = dict(ctx.request_context.meta or {})
    request: Any = ctx.request_context.request
    header = request.headers.get("traceparent") if request is not None else None
    return " ".join(
        [os.environ.get("TRACEPARENT", "-"), extra.get("traceparent", "-"), header or "-"]
    )


def build(extra_tools: int) -> MCPServer:
    app = _build(extra_tools)
    app.add_tool(trace, name="trace")
    return app


if __name__ == "__main__":
    _mcp_server.build = build
    _mcp_server.main()
