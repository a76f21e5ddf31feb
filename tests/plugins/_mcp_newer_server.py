# mypy: ignore-errors
# (written against the newer SDK generation, which runs it in an environment of its own; the
# suite's mypy sees the SDK the plugin is installed with)
"""An MCP server written with the newer official SDK (``mcp`` 2.x, its ``MCPServer``), over
stdio: ``python _mcp_newer_server.py``."""

from __future__ import annotations

from importlib import metadata

from mcp.server.mcpserver import MCPServer

app = MCPServer("newer")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def sdk() -> str:
    """The SDK version this server runs on."""
    return metadata.version("mcp")


if __name__ == "__main__":
    app.run("stdio")
