"""Helpers shared by the MCP tests: the test server's path and waiting for what another
process writes."""

from __future__ import annotations

import base64
import contextlib
import os
import re
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from agentrig_mcp import HttpServerSpec, McpClient
from anyio.abc import Process
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from agentrig.cancel import CancelSignal
from agentrig.tools import ToolContext

SERVER = str(Path(__file__).with_name("_mcp_server.py"))
"""The FastMCP test server (``python _mcp_server.py --help``)."""

RAW = str(Path(__file__).with_name("_mcp_raw.py"))
"""The hand-written JSON-RPC server that misbehaves on purpose (``_mcp_raw.py MODE``)."""

AGENTRIG = str(Path(sys.executable).with_name("agentrig"))
"""The installed ``agentrig`` command."""

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
"""The image the test server's ``picture`` tool returns (the same bytes as there)."""


class HttpServer:
    """The test server (:data:`SERVER`) serving HTTP on loopback, as a process."""

    def __init__(self, process: Process, port: int, marker: Path, path: str = "/mcp") -> None:
        self.process = process
        self.url = f"http://127.0.0.1:{port}{path}"
        self.marker = marker

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        with anyio.CancelScope(shield=True):
            await self.process.wait()


async def start_http_server(marker: Path, *, sse: bool = False) -> HttpServer:
    """Start the test server over streamable HTTP (``/mcp``) or, with ``sse``, the legacy
    HTTP+SSE transport (``/sse``); ``marker`` is its ``MCP_TEST_MARKER`` file."""
    process = await anyio.open_process(
        [sys.executable, SERVER, "--sse" if sse else "--http"],
        env={"MCP_TEST_MARKER": str(marker)},
    )
    assert process.stdout is not None
    with anyio.fail_after(30):
        line = b""
        while not line.endswith(b"\n"):
            line += await process.stdout.receive(1)
    return HttpServer(process, int(line.split()[1]), marker, "/sse" if sse else "/mcp")


@asynccontextmanager
async def http_clients(server: str, **defaults: Any) -> AsyncIterator[Callable[..., McpClient]]:
    """``make(url, **options)``: an :class:`McpClient` of one HTTP server named ``server``
    (``trust_content`` on, then ``defaults``, then ``options``), each closed at the end."""
    async with anyio.create_task_group() as tg:
        made: list[McpClient] = []

        def make(url: str, **options: Any) -> McpClient:
            spec = HttpServerSpec(url=url, **{"trust_content": True, **defaults, **options})
            client = McpClient({server: spec}, spawn=tg.start_soon)
            made.append(client)
            return client

        yield make
        for client in made:
            await client.aclose()


def tool_ctx(signal: CancelSignal | None = None) -> ToolContext:
    """A tool context for calling an MCP tool's ``execute`` directly."""
    return ToolContext(signal=signal or CancelSignal(), tool_id="t", call_id="c", invocation_id="i")


def alive(pid: int) -> bool:
    """Is the process ``pid`` still there?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def marked(marker: Path, text: str) -> Callable[[], bool]:
    """Has the test server written ``text`` to its marker file?"""
    return lambda: marker.exists() and text in marker.read_text()


async def eventually(check: Callable[[], bool], seconds: float = 30) -> None:
    """Poll a condition another process makes true (a file it writes): there is no event to
    wait on across processes."""
    with anyio.fail_after(seconds):
        while True:
            if check():
                return
            await anyio.sleep(0.02)


async def cancel_once(marker: Path, text: str, signal: CancelSignal, reason: str) -> None:
    """Cancel ``signal`` once the test server wrote ``text`` (``started``) to ``marker``."""
    await eventually(marked(marker, text))
    signal.cancel(reason)


@asynccontextmanager
async def mcp_http_serve(
    config: Path, host: str = "127.0.0.1", env: Mapping[str, str] | None = None
) -> AsyncIterator[tuple[Process, str]]:
    """``agentrig mcp serve --http HOST:0`` as a process, with the URL its line announces."""
    process = await anyio.open_process(
        [AGENTRIG, "mcp", "serve", "-c", str(config), "--http", f"{host}:0"], env=env
    )
    try:
        assert process.stderr is not None
        line = b""
        with anyio.fail_after(60):
            while b"listening on " not in line or not line.endswith(b"\n"):
                line += await process.stderr.receive(1)
                if line.endswith(b"\n") and b"listening on " not in line:
                    line = b""  # a line printed before it
        # the shape agentrig serve's line has: agentrig COMMAND: listening on URL
        found = re.fullmatch(r"agentrig mcp: listening on (http://\S+:\d+/mcp)\n", line.decode())
        assert found is not None, line
        yield process, found[1]
    finally:
        with contextlib.suppress(ProcessLookupError):  # the test may have ended it
            process.terminate()
        with anyio.CancelScope(shield=True):
            await process.wait()


async def stderr_after_exit(process: Process, seconds: float = 10) -> bytes:
    """End ``process`` and return what it still writes on stderr (up to ``seconds``)."""
    process.terminate()
    assert process.stderr is not None
    said = b""
    with anyio.move_on_after(seconds):
        async for chunk in process.stderr:
            said += chunk
    return said


SERVE_CONFIG = """
[providers.local]
kind = "scripted"
options.script = [{ text = "Hello from the agent." }]
options.on_exhausted = "repeat"

[agents.assistant]
provider = "local"
model = "scripted-1"
"""
"""A composition for ``agentrig mcp serve``: one agent answering from a script."""


async def run_cli(*args: str, environ: Mapping[str, str]) -> tuple[int, str]:
    """Run ``agentrig ARGS`` to its end: (exit status, stderr)."""
    done = await anyio.run_process([AGENTRIG, *args], env=dict(environ), check=False)
    return done.returncode, done.stderr.decode()


@asynccontextmanager
async def mcp_session(url: str, http: httpx2.AsyncClient) -> AsyncIterator[ClientSession]:
    """The SDK's client session over ``http`` to ``url``, initialised (closes ``http``)."""
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        with anyio.fail_after(30):
            await session.initialize()
        yield session


def one_call_config(server: str, tool: str, **server_options: Any) -> dict[str, Any]:
    """A runtime config whose agent ``assistant`` (a scripted model) calls the MCP tool
    ``mcp__<server>__<tool>`` once, allowed, with ``server_options`` as the server's table."""
    name = f"mcp__{server}__{tool}"
    return {
        "providers": {
            "local": {
                "kind": "scripted",
                "options": {
                    "script": [{"tool_calls": [{"name": name, "arguments": {}}]}, {"text": "ok"}]
                },
            }
        },
        "agents": {
            "assistant": {"provider": "local", "model": "scripted-1", "tools": [f"mcp__{server}"]}
        },
        "permissions": {"allow": [f"mcp__{server}__*"]},
        "mcp_servers": {server: server_options},
    }
