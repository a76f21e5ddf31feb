"""The MCP client over streamable HTTP and the legacy HTTP+SSE transport (``type = "sse"``):
a real FastMCP server (``streamable_http_app`` / ``sse_app``) under uvicorn on 127.0.0.1 (a
free port), started and stopped by the test."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from _mcp_support import (
    HttpServer,
    cancel_once,
    eventually,
    http_clients,
    marked,
    start_http_server,
    tool_ctx,
)
from agentrig_mcp import HttpServerSpec, McpClient, McpServerUnavailable, parse_mcp_json
from mcp import types

from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.ids import AgentId, ToolId

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]


@pytest.fixture
async def http_server(tmp_path: Path) -> AsyncIterator[HttpServer]:
    server = await start_http_server(tmp_path / "marker")
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def sse_server(tmp_path: Path) -> AsyncIterator[HttpServer]:
    """The test server on the legacy HTTP+SSE transport (FastMCP's ``sse_app``)."""
    server = await start_http_server(tmp_path / "marker", sse=True)
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def client_for() -> AsyncIterator[Callable[..., McpClient]]:
    async with http_clients("web") as make:
        yield make


@pytest.fixture
async def sse_client_for() -> AsyncIterator[Callable[..., McpClient]]:
    async with http_clients("old", type="sse") as make:
        yield make


ctx = tool_ctx


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
    caplog.set_level(logging.DEBUG)  # every library's records, the SDK's and httpx's too
    # agentrig's own level as well: a test earlier in the process may have left it higher
    caplog.set_level(logging.DEBUG, logger="agentrig")
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


# ---- the legacy HTTP+SSE transport (type = "sse") ----------------------------------------


async def test_sse_calls_errors_resources_and_cancellation(
    sse_server: HttpServer, sse_client_for: Callable[..., McpClient]
) -> None:
    client = sse_client_for(sse_server.url)
    tools = {t.id: t for t in await client.tools("old")}
    assert (await tools[ToolId("mcp__old__add")].execute({"a": 20, "b": 22}, ctx())).content == (
        "42"
    )
    failed = await tools[ToolId("mcp__old__fail")].execute({"message": "nope"}, ctx())
    assert failed.is_error
    assert "nope" in failed.content
    (content,) = (await client.read_resource("old", "note://hello")).contents
    assert isinstance(content, types.TextResourceContents)
    assert content.text == "hello from a resource"
    # a cancelled call is cancelled on the server too
    signal = CancelSignal()
    async with anyio.create_task_group() as tg:
        tg.start_soon(cancel_once, sse_server.marker, "started", signal, "stop")
        with pytest.raises(AbortError):
            await tools[ToolId("mcp__old__hang")].execute({}, ctx(signal))
    await eventually(marked(sse_server.marker, "cancelled"))


async def test_an_sse_server_gone_mid_call_fails_the_call_at_once(
    sse_server: HttpServer, sse_client_for: Callable[..., McpClient]
) -> None:
    client = sse_client_for(sse_server.url, timeout=600, restart_backoff=0)
    tools = {t.id: t for t in await client.tools("old")}

    async def kill_once_started() -> None:
        await eventually(marked(sse_server.marker, "started"))
        await sse_server.stop()

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(kill_once_started)
            with pytest.raises(McpServerUnavailable) as info:
                await tools[ToolId("mcp__old__hang")].execute({}, ctx())
    assert info.value.code == "mcp.unavailable"


async def test_an_sse_server_from_mcp_json_with_a_store_credential(
    sse_server: HttpServer, tmp_path: Path
) -> None:
    from agentrig.builtins._credential_file import FileCredentialStore

    secret = "Bearer sse-secret-41c2"
    vault = tmp_path / "vault" / "credentials.json"
    await FileCredentialStore(vault).set("mcp", "old", secret)
    # Claude Code's shape: "type": "sse"
    project = tmp_path / ".mcp.json"
    project.write_text(json.dumps({"mcpServers": {"old": {"type": "sse", "url": sse_server.url}}}))
    servers = parse_mcp_json(project, None)
    assert servers["old"] == HttpServerSpec(type="sse", url=sse_server.url)
    config: dict[str, Any] = {
        "providers": {
            "local": {
                "kind": "scripted",
                "options": {
                    "script": [
                        {"tool_calls": [{"name": "mcp__old__credential", "arguments": {}}]},
                        {"text": "ok"},
                    ]
                },
            }
        },
        "agents": {"a": {"provider": "local", "model": "scripted-1", "tools": ["mcp__old"]}},
        "permissions": {"allow": ["mcp__old__*"]},
        "credential_stores": {"vault": {"kind": "file", "options": {"path": str(vault)}}},
        "mcp_servers": {
            "old": {
                "type": "sse",
                "url": sse_server.url,
                "headers": {"Authorization": "$STORE:vault:mcp/old"},
                "trust_content": True,
                "allow_private_url": True,  # loopback: the egress policy needs consent
            }
        },
    }
    import agentrig

    async with agentrig.open_runtime(config) as rt:
        await rt.agent(AgentId("a")).run("go")
        session = rt.agent(AgentId("a")).session
        texts = [m.text for m in session.derive_messages() if m.role == "tool"]
        recorded = json.dumps([e.model_dump(mode="json") for e in session.events])
    assert texts == ["a credential arrived"]
    assert marked(sse_server.marker, f"authorization={secret}")()
    assert "sse-secret" not in recorded
    # without the consent, the egress policy refuses the loopback server
    del config["mcp_servers"]["old"]["allow_private_url"]
    with pytest.raises(McpServerUnavailable, match="'old' is not available"):
        async with agentrig.open_runtime(config):
            pytest.fail("the runtime opened with a loopback server and no consent")
