# mypy: ignore-errors
# (written against the older SDK generation, which runs it in an environment of its own; the
# suite's mypy sees the SDK the plugin is installed with)
"""An MCP client written with the older official SDK (``mcp`` 1.x): its ``ClientSession``
over its own stdio and streamable-HTTP clients, opening with ``initialize``.

    python _mcp_older_client.py stdio COMMAND ARG...
    python _mcp_older_client.py http URL

It lists the tools, asks the first ``ask_*`` tool ``"hi"`` and prints one JSON line:
``{"sdk": ..., "server": ..., "tools": [...], "answer": ...}``.
"""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from importlib import metadata

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client


@asynccontextmanager
async def streams(mode, target, args):
    if mode == "stdio":
        async with stdio_client(StdioServerParameters(command=target, args=args)) as pair:
            yield pair
    else:
        async with streamablehttp_client(target) as (read, write, _):
            yield read, write


async def main(argv: list[str]) -> None:
    mode, target, *args = argv
    async with streams(mode, target, args) as (read, write), ClientSession(read, write) as session:
        initialized = await session.initialize()
        listed = await session.list_tools()
        names = [tool.name for tool in listed.tools]
        ask = next(name for name in names if name.startswith("ask_"))
        result = await session.call_tool(ask, {"prompt": "hi"})
        answer = " ".join(block.text for block in result.content if block.type == "text")
        print(
            json.dumps(
                {
                    "sdk": metadata.version("mcp"),
                    "server": initialized.serverInfo.name,
                    "tools": names,
                    "answer": answer,
                    "error": result.isError,
                }
            )
        )


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
