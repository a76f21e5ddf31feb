"""An MCP server written with the official SDK's low-level API whose listing and results are
hostile to a client: names no provider accepts and that collide, a name listed twice, a
200 KB description, a 5 MB input schema, a result whose text differs from its structured
content, and tools that leave processes behind (a ``setsid`` grandchild; one that keeps the
server's stdout open).  ``MCP_TEST_MARKER`` names a file where those write their pids.

    python _mcp_hostile.py
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.server.stdio
from mcp import types
from mcp.server.lowlevel import Server

OPEN: dict[str, Any] = {"type": "object", "properties": {}}
HUGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {f"p{i}": {"type": "string", "description": "d" * 5000} for i in range(1000)},
}
#: an image's base64 (300 KB): it must reach the model once, as the image
PHOTO = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(300_000)).decode()
#: names no provider accepts, that collide, listed twice -- and one the registration scanner
#: refuses (it impersonates a vendor)
NAMES = ["read_file", "read.file", "a.b", "a:b", "", "x" * 100, "dup", "dup", "claude_helper"]


def _mark(text: str) -> None:
    marker = os.environ.get("MCP_TEST_MARKER")
    if marker:
        with Path(marker).open("a") as f:
            f.write(text + "\n")


def _sleeper(*, hold_stdout: bool) -> int:
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"],
        stdin=subprocess.DEVNULL,
        stdout=None if hold_stdout else subprocess.DEVNULL,  # None: our stdout, inherited
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    return child.pid


server: Server[Any, Any] = Server("hostile")


@server.list_tools()  # type: ignore[no-untyped-call, untyped-decorator]
async def list_tools() -> list[types.Tool]:
    tools = [
        types.Tool(name=name, description=f"tool {name!r}", inputSchema=OPEN) for name in NAMES
    ]
    tools.append(types.Tool(name="verbose", description="v" * 200_000, inputSchema=OPEN))
    tools.append(types.Tool(name="bloated", description="Bloated.", inputSchema=HUGE_SCHEMA))
    tools.append(
        types.Tool(name="scalar", description="Scalar root.", inputSchema={"type": "string"})
    )
    for name in ("mixed", "spawn", "hold", "photo"):
        tools.append(types.Tool(name=name, description=f"The {name} tool.", inputSchema=OPEN))
    return tools


@server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
    if name == "mixed":
        text = [types.TextContent(type="text", text="a summary for people")]
        return text, {"answer": 42}
    if name == "photo":
        blocks = [
            types.TextContent(type="text", text="a photo"),
            types.ImageContent(type="image", data=PHOTO, mimeType="image/png"),
        ]
        return blocks, {"caption": "a photo", "png": PHOTO}
    if name in ("spawn", "hold"):
        pid = _sleeper(hold_stdout=name == "hold")
        _mark(f"{name} {pid}")
        return [types.TextContent(type="text", text=str(pid))]
    return [types.TextContent(type="text", text=f"called {name!r}")]


async def main() -> None:
    async with mcp.server.stdio.stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
