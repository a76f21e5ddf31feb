# mypy: ignore-errors
# (written against the newer SDK generation, which runs it in an environment of its own; the
# suite's mypy sees the SDK the plugin is installed with)
"""An MCP client written with the newer official SDK (``mcp`` 2.x): its high-level
``Client``, which opens each connection the 2.x way (``server/discover`` first, then a
fallback to ``initialize``).

    python _mcp_newer_client.py stdio COMMAND ARG...
    python _mcp_newer_client.py http URL

It lists the tools, asks the first ``ask_*`` tool ``"hi"`` and prints one JSON line:
``{"sdk": ..., "server": ..., "tools": [...], "answer": ...}``.
"""

from __future__ import annotations

import json
import sys
from importlib import metadata

import anyio
from mcp import StdioServerParameters
from mcp.client.client import Client


async def main(argv: list[str]) -> None:
    mode, target, *args = argv
    server = StdioServerParameters(command=target, args=args) if mode == "stdio" else target
    async with Client(server) as client:
        listed = await client.list_tools()
        names = [tool.name for tool in listed.tools]
        ask = next(name for name in names if name.startswith("ask_"))
        result = await client.call_tool(ask, {"prompt": "hi"})
        answer = " ".join(block.text for block in result.content if block.type == "text")
        info = client.server_info if hasattr(client, "server_info") else None
        print(
            json.dumps(
                {
                    "sdk": metadata.version("mcp"),
                    "server": info.name if info is not None else None,
                    "tools": names,
                    "answer": answer,
                    "error": result.is_error,
                }
            )
        )


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
