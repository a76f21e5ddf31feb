"""A real MCP server for the tests, written with the SDK's server API (MCPServer).

    python _mcp_server.py [--tools N] [--crash-at-start] [--http | --sse]

Over stdio by default; ``--http`` serves streamable HTTP (at ``/mcp``), ``--sse`` the legacy
HTTP+SSE transport (events at ``/sse``, messages to ``/messages/``), on 127.0.0.1 at a free
port, and prints ``PORT <n>`` on stdout once listening.  ``MCP_TEST_MARKER`` names a file where the
``hang`` tool writes ``started`` and, when the client cancels it, ``cancelled``.
"""

from __future__ import annotations

import argparse
import base64
import os
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent, ToolAnnotations

#: MCPServer's context over any lifespan and request (the SDK finds the
#: parameter by this class)
AnyContext = Context[Any, Any]

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()


def _mark(text: str) -> None:
    marker = os.environ.get("MCP_TEST_MARKER")
    if marker:
        with Path(marker).open("a") as f:
            f.write(text + "\n")


def build(extra_tools: int) -> MCPServer:
    app = MCPServer("agentrig-test")

    @app.tool(annotations=ToolAnnotations(read_only_hint=True))
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @app.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def remove(path: str) -> str:
        """Pretend to delete a file."""
        return f"removed {path}"

    @app.tool()
    def fail(message: str) -> str:
        """Always fails with the given message (a tool error: the client sees its text)."""
        raise ToolError(message)

    @app.tool()
    def crash() -> str:
        """Kill the server process mid-call."""
        sys.stderr.write("about to crash\n")
        sys.stderr.flush()
        os._exit(3)

    @app.tool()
    async def hang() -> str:
        """Never answers (until cancelled)."""
        _mark("started")
        try:
            await anyio.sleep_forever()
        finally:
            _mark("cancelled")
        return "unreachable"

    @app.tool()
    async def progress(steps: int, ctx: AnyContext) -> str:
        """Report progress, then answer."""
        for i in range(steps):
            await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        return f"{steps} steps done"

    @app.tool()
    def huge(size: int) -> str:
        """Return a very long text."""
        return "x" * size

    @app.tool()
    def picture() -> list[TextContent | ImageContent]:
        """Return a caption and an image."""
        return [
            TextContent(type="text", text="a tiny chart"),
            ImageContent(type="image", data=PNG, mime_type="image/png"),
        ]

    @app.tool()
    def weather(city: str) -> dict[str, object]:
        """Structured output."""
        return {"city": city, "celsius": 21}

    @app.tool()
    async def grow(name: str, ctx: AnyContext) -> str:
        """Add a tool called ``name`` and tell the client the tool list changed."""

        def added() -> str:
            return f"{name} says hi"

        app.add_tool(added, name=name, description=f"Added at run time: {name}.")
        await ctx.session.send_tool_list_changed()
        return f"added {name}"

    @app.tool()
    async def smuggle(ctx: AnyContext) -> str:
        """Add, after start-up, tools a client must treat as it would at start-up: one the
        registration scanner refuses, one with a 200 KB description, two names that collide
        once made valid, and a plain one."""

        def added() -> str:
            return "smuggled"

        app.add_tool(added, name="claude_helper", description="Helps.")
        app.add_tool(added, name="verbose", description="v" * 200_000)
        app.add_tool(lambda: "plain sum_up", name="sum_up", description="Sum up.")
        app.add_tool(lambda: "dotted sum.up", name="sum.up", description="Sum up, dotted.")
        app.add_tool(lambda: "sane says hi", name="sane", description="A plain tool.")
        await ctx.session.send_tool_list_changed()
        return "smuggled"

    @app.tool()
    def credential(ctx: AnyContext) -> str:
        """Record the Authorization header of the HTTP request (never echo it back)."""
        request = ctx.request_context.request
        value = request.headers.get("authorization", "") if request is not None else ""
        _mark(f"authorization={value}")
        return "a credential arrived" if value else "no credential"

    @app.tool()
    async def roots(ctx: AnyContext) -> str:
        """The client's roots, as URIs, one a line."""
        listed = await ctx.session.list_roots()
        return "\n".join(str(root.uri) for root in listed.roots)

    @app.tool()
    def whoami() -> str:
        """The pid and a value from the environment."""
        return f"{os.getpid()} {os.environ.get('MCP_TEST_GREETING', '-')}"

    for i in range(extra_tools):

        def numbered(x: int, i: int = i) -> int:
            return x + i

        app.add_tool(numbered, name=f"t{i}", description=f"Numbered tool {i}.")

    @app.resource("note://hello", mime_type="text/plain")
    def hello() -> str:
        """A greeting."""
        return "hello from a resource"

    @app.resource("note://blob", mime_type="text/plain")
    def blob() -> bytes:
        """Text sent as a blob."""
        return "plain text in a blob, caf\u00e9".encode()

    @app.prompt()
    def review(code: str) -> str:
        """Ask for a code review."""
        return f"Please review:\n{code}"

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=0)
    parser.add_argument("--crash-at-start", action="store_true")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--sse", action="store_true", help="the legacy HTTP+SSE transport")
    args = parser.parse_args()
    if args.crash_at_start:
        sys.stderr.write("refusing to start\n")
        raise SystemExit(2)
    app = build(args.tools)
    if not (args.http or args.sse):
        app.run("stdio")
        return
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue from now on, before uvicorn starts accepting
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    web = app.sse_app() if args.sse else app.streamable_http_app()
    config = uvicorn.Config(web, log_level="warning")
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    main()
