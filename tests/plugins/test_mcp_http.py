"""The MCP client over streamable HTTP: a real FastMCP server under uvicorn on 127.0.0.1 (a
free port), started and stopped by the test."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from _mcp_support import SERVER, cancel_once, eventually, marked
from agentrig_mcp import HttpServerSpec, McpClient, McpError, McpServerUnavailable
from anyio.abc import Process
from mcp import types

from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.ids import AgentId, ToolId
from agentrig.tools import ToolContext

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]


class HttpServer:
    def __init__(self, process: Process, port: int, marker: Path) -> None:
        self.process = process
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.marker = marker

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        with anyio.CancelScope(shield=True):
            await self.process.wait()


async def start_http_server(marker: Path) -> HttpServer:
    process = await anyio.open_process(
        [sys.executable, SERVER, "--http"], env={"MCP_TEST_MARKER": str(marker)}
    )
    assert process.stdout is not None
    with anyio.fail_after(30):
        line = b""
        while not line.endswith(b"\n"):
            line += await process.stdout.receive(1)
    return HttpServer(process, int(line.split()[1]), marker)


@pytest.fixture
async def http_server(tmp_path: Path) -> AsyncIterator[HttpServer]:
    server = await start_http_server(tmp_path / "marker")
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def client_for() -> AsyncIterator[Callable[..., McpClient]]:
    async with anyio.create_task_group() as tg:
        made: list[McpClient] = []

        def make(url: str, **options: Any) -> McpClient:
            client = McpClient({"web": HttpServerSpec(url=url, **options)}, spawn=tg.start_soon)
            made.append(client)
            return client

        yield make
        for client in made:
            await client.aclose()


def ctx(signal: CancelSignal | None = None) -> ToolContext:
    return ToolContext(signal=signal or CancelSignal(), tool_id="t", call_id="c", invocation_id="i")


async def test_http_calls_errors_and_resources(
    http_server: HttpServer, client_for: Callable[..., McpClient]
) -> None:
    client = client_for(http_server.url)
    tools = {t.id: t for t in await client.tools("web")}
    add = tools[ToolId("mcp__web__add")]
    assert (await add.execute({"a": 20, "b": 22}, ctx())).content == "42"
    failed = await tools[ToolId("mcp__web__fail")].execute({"message": "nope"}, ctx())
    assert failed.is_error
    assert "nope" in failed.content
    read = await client.read_resource("web", "note://hello")
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert content.text == "hello from a resource"


async def test_http_cancellation_reaches_the_server(
    http_server: HttpServer, client_for: Callable[..., McpClient]
) -> None:
    client = client_for(http_server.url)
    hang = {t.id: t for t in await client.tools("web")}[ToolId("mcp__web__hang")]
    signal = CancelSignal()
    marker = http_server.marker

    async with anyio.create_task_group() as tg:
        tg.start_soon(cancel_once, marker, "started", signal, "stop")
        with pytest.raises(AbortError):
            await hang.execute({}, ctx(signal))
    await eventually(marked(marker, "cancelled"))


async def test_http_server_gone_mid_call_is_bounded_by_the_timeout(
    http_server: HttpServer, client_for: Callable[..., McpClient]
) -> None:
    # the SDK does not report a response stream that breaks: the per-server timeout bounds
    # the call; the next call finds the server gone
    client = client_for(http_server.url, timeout=2, restart_backoff=0)
    tools = {t.id: t for t in await client.tools("web")}
    marker = http_server.marker

    async def kill_once_started() -> None:
        await eventually(marked(marker, "started"))
        await http_server.stop()

    async with anyio.create_task_group() as tg:
        tg.start_soon(kill_once_started)
        with pytest.raises(McpError, match="within 2s") as info:
            await tools[ToolId("mcp__web__hang")].execute({}, ctx())
    assert info.value.code == "mcp.timeout"
    with pytest.raises(McpServerUnavailable):
        await tools[ToolId("mcp__web__add")].execute({"a": 1, "b": 2}, ctx())


def _web_config(url: str, **options: Any) -> dict[str, Any]:
    return {
        "providers": {
            "local": {
                "kind": "scripted",
                "options": {
                    "script": [
                        {"tool_calls": [{"name": "mcp__web__add", "arguments": {"a": 1, "b": 2}}]},
                        {"text": "ok"},
                    ]
                },
            }
        },
        "agents": {
            "assistant": {"provider": "local", "model": "scripted-1", "tools": ["mcp__web"]}
        },
        "permissions": {"allow": ["mcp__web__*"]},
        "mcp_servers": {"web": {"url": url, **options}},
    }


async def test_http_servers_go_through_the_egress_policy(http_server: HttpServer) -> None:
    from agentrig_mcp import McpServerUnavailable as Unavailable

    import agentrig

    # a loopback server is refused by the egress policy unless config consents
    with pytest.raises(Unavailable, match="'web' is not available"):
        async with agentrig.open_runtime(_web_config(http_server.url)):
            pass
    async with agentrig.open_runtime(_web_config(http_server.url, allow_private_url=True)) as rt:
        await rt.agent(AgentId("assistant")).run("add")
        messages = rt.agent(AgentId("assistant")).session.derive_messages()
        assert [m.text for m in messages if m.role == "tool"] == ["3"]
