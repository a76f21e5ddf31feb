# mypy: ignore-errors
# (written against the older SDK generation, which runs it in an environment of its own; the
# suite's mypy sees the SDK the plugin is installed with)
"""An MCP server written with the older official SDK (``mcp`` 1.x, its ``FastMCP``), over
stdio: ``python _mcp_older_server.py``."""

from __future__ import annotations

from importlib import metadata

from mcp.server.fastmcp import FastMCP

app = FastMCP("older")


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
