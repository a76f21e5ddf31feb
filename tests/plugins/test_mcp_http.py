"""The MCP client over streamable HTTP: a real FastMCP server under uvicorn on 127.0.0.1 (a
free port), started and stopped by the test."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from _mcp_support import SERVER, cancel_once, eventually, marked
from agentrig_mcp import HttpServerSpec, McpClient, McpServerUnavailable
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
            client = McpClient(
                {"web": HttpServerSpec(url=url, **{"trust_content": True, **options})},
                spawn=tg.start_soon,
            )
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


async def test_a_response_over_the_limit_fails_the_call_bounded(
    http_server: HttpServer, client_for: Callable[..., McpClient]
) -> None:
    client = client_for(http_server.url, max_message_bytes=1_000_000)
    tools = {t.id: t for t in await client.tools("web")}
    huge = tools[ToolId("mcp__web__huge")]
    with anyio.fail_after(30), pytest.raises(McpServerUnavailable, match="over 1000000 bytes"):
        await huge.execute({"size": 3_000_000}, ctx())
    # within the limit, the connection (restarted) answers
    add = {t.id: t for t in await client.tools("web")}[ToolId("mcp__web__add")]
    assert (await add.execute({"a": 1, "b": 2}, ctx())).content == "3"


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


async def test_http_server_gone_mid_call_fails_the_call_at_once(
    http_server: HttpServer, client_for: Callable[..., McpClient]
) -> None:
    # the SDK only logs a response stream that breaks; agentrig watches the body, so the
    # call fails with mcp.unavailable when the server dies, long before its timeout
    client = client_for(http_server.url, timeout=600, restart_backoff=0)
    tools = {t.id: t for t in await client.tools("web")}
    marker = http_server.marker

    async def kill_once_started() -> None:
        await eventually(marked(marker, "started"))
        await http_server.stop()

    async with anyio.create_task_group() as tg:
        tg.start_soon(kill_once_started)
        with pytest.raises(McpServerUnavailable, match="connection broke") as info:
            await tools[ToolId("mcp__web__hang")].execute({}, ctx())
    assert info.value.code == "mcp.unavailable"  # not mcp.timeout: the timeout did not fire
    assert "the call to 'hang'" in str(info.value)
    # the next call tries to restart it and finds nothing listening
    with pytest.raises(McpServerUnavailable):
        await tools[ToolId("mcp__web__add")].execute({"a": 1, "b": 2}, ctx())


def _web_config(
    url: str, *, call: str = "mcp__web__add", arguments: Any = None, **options: Any
) -> dict[str, Any]:
    arguments = {"a": 1, "b": 2} if arguments is None else arguments
    return {
        "providers": {
            "local": {
                "kind": "scripted",
                "options": {
                    "script": [
                        {"tool_calls": [{"name": call, "arguments": arguments}]},
                        {"text": "ok"},
                    ]
                },
            }
        },
        "agents": {
            "assistant": {"provider": "local", "model": "scripted-1", "tools": ["mcp__web"]}
        },
        "permissions": {"allow": ["mcp__web__*"]},
        "mcp_servers": {"web": {"url": url, "trust_content": True, **options}},
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


async def test_a_store_credential_in_a_header_reaches_the_server_and_no_log(
    http_server: HttpServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    import agentrig
    from agentrig.builtins._credential_file import FileCredentialStore

    secret = "Bearer mcp-secret-7f3a9c"
    vault = tmp_path / "vault" / "credentials.json"
    await FileCredentialStore(vault).set("mcp", "web", secret)
    cfg = _web_config(
        http_server.url,
        call="mcp__web__credential",
        arguments={},
        allow_private_url=True,
        headers={"Authorization": "$STORE:vault:mcp/web"},
    )
    cfg["credential_stores"] = {"vault": {"kind": "file", "options": {"path": str(vault)}}}
    caplog.set_level(logging.DEBUG)
    async with agentrig.open_runtime(cfg) as rt:
        await rt.agent(AgentId("assistant")).run("who am I")
        session = rt.agent(AgentId("assistant")).session
        texts = [m.text for m in session.derive_messages() if m.role == "tool"]
        recorded = json.dumps([e.model_dump(mode="json") for e in session.events])
    # resolved from the store and sent to the real server on loopback ...
    assert marked(http_server.marker, f"authorization={secret}")()
    assert texts == ["a credential arrived"]
    # ... and written nowhere on agentrig's side: not the logs, not the session
    assert secret not in caplog.text
    assert "mcp-secret" not in recorded
    assert any(r.name == "agentrig.mcp.web" for r in caplog.records)  # the logs were seen
