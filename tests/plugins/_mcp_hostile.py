"""An MCP server written with the official SDK's low-level API whose listing and results are
hostile to a client: names no provider accepts and that collide, a name listed twice, a
200 KB description, a 5 MB input schema, a result whose text differs from its structured
content, and tools that leave processes behind (a ``setsid`` grandchild; one that keeps the
server's stdout open).  (An input schema whose root is not an object, which the SDK's server
refuses to send, is in ``_mcp_raw.py``.)  ``MCP_TEST_MARKER`` names a file where those
write their pids.

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
from mcp.server import Server, ServerRequestContext

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


def _tool(name: str, description: str, schema: dict[str, Any] = OPEN) -> types.Tool:
    return types.Tool(name=name, description=description, input_schema=schema)


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    tools = [_tool(name, f"tool {name!r}") for name in NAMES]
    tools.append(_tool("verbose", "v" * 200_000))
    tools.append(_tool("bloated", "Bloated.", HUGE_SCHEMA))
    for name in ("mixed", "spawn", "hold", "photo"):
        tools.append(_tool(name, f"The {name} tool."))
    return types.ListToolsResult(tools=tools)


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    name = params.name
    if name == "mixed":
        summary = "a summary for people"
        text: list[types.ContentBlock] = [types.TextContent(type="text", text=summary)]
        return types.CallToolResult(content=text, structured_content={"answer": 42})
    if name == "photo":
        blocks: list[types.ContentBlock] = [
            types.TextContent(type="text", text="a photo"),
            types.ImageContent(type="image", data=PHOTO, mime_type="image/png"),
        ]
        structured = {"caption": "a photo", "png": PHOTO}
        return types.CallToolResult(content=blocks, structured_content=structured)
    if name in ("spawn", "hold"):
        pid = _sleeper(hold_stdout=name == "hold")
        _mark(f"{name} {pid}")
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(pid))])
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"called {name!r}")])


server: Server[Any] = Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with mcp.server.stdio.stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
