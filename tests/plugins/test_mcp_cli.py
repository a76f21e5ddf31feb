"""``agentrig mcp serve`` as a real process: consumed by agentrig's own MCP client over stdio
and by the SDK's clients (its session over streamable HTTP, its high-level client in the
newer revision over both); usage and config errors; the plugin is listed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from _mcp_support import AGENTRIG, SERVER, cancel_once, eventually, marked, mcp_http_serve
from agentrig_mcp import McpClient, StdioServerSpec
from mcp import ClientSession, StdioServerParameters, types
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types.version import LATEST_MODERN_VERSION

from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.ids import ToolId
from agentrig.tools import ToolContext

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]

CONFIG = """
[providers.local]
kind = "scripted"
options.script = [{ text = "Hello from the agent." }]

[agents.assistant]
provider = "local"
model = "scripted-1"
tools = ["mcp_resources"]
"""


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "agentrig.toml"
    path.write_text(CONFIG)
    return path


def ctx() -> ToolContext:
    return ToolContext(signal=CancelSignal(), tool_id="t", call_id="c", invocation_id="i")


@pytest.fixture
async def client_group() -> AsyncIterator[anyio.abc.TaskGroup]:
    async with anyio.create_task_group() as tg:
        yield tg


async def test_served_over_stdio_to_agentrigs_own_client(
    config_file: Path, client_group: anyio.abc.TaskGroup
) -> None:
    # agentrig serving itself: its answers need no untrusted-data label
    spec = StdioServerSpec(
        command=AGENTRIG, args=("mcp", "serve", "-c", str(config_file)), trust_content=True
    )
    client = McpClient({"rig": spec}, spawn=client_group.start_soon)
    try:
        tools = {t.id: t for t in await client.tools("rig")}
        assert set(tools) == {
            "mcp__rig__ask_assistant",
            "mcp__rig__list_mcp_resources",
            "mcp__rig__read_mcp_resource",
        }
        answer = await tools[ToolId("mcp__rig__ask_assistant")].execute({"prompt": "hi"}, ctx())
        assert not answer.is_error
        assert answer.content == "Hello from the agent."
        # served tools keep their risk: the resource tools are inspect (readOnlyHint)
        annotations = tools[ToolId("mcp__rig__list_mcp_resources")].definition.annotations
        assert annotations is not None
        assert annotations.read_only_hint
    finally:
        await client.aclose()


async def test_served_over_http_to_the_sdk_client(config_file: Path) -> None:
    async with mcp_http_serve(config_file) as (_process, url):
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url)
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await asks_the_assistant(session)


async def asks_the_assistant(client: ClientSession | Client) -> None:
    """The served tools hold ``ask_assistant``, which answers as scripted."""
    names = {t.name for t in (await client.list_tools()).tools}
    assert "ask_assistant" in names
    result = await client.call_tool("ask_assistant", {"prompt": "hi"})
    assert not result.is_error
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "Hello from the agent."


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_served_to_the_sdks_client_in_its_default_mode(
    config_file: Path, transport: str
) -> None:
    """The SDK's high-level client opens with ``server/discover`` (the 2026-07-28 revision)
    and gets it, over stdio and HTTP; its asks answer as over the handshake."""

    async def use(target: str | StdioServerParameters) -> None:
        with anyio.fail_after(60):
            async with Client(target) as client:
                assert client.protocol_version == LATEST_MODERN_VERSION
                await asks_the_assistant(client)

    if transport == "stdio":
        await use(
            StdioServerParameters(command=AGENTRIG, args=["mcp", "serve", "-c", str(config_file)])
        )
        return
    async with mcp_http_serve(config_file) as (_process, url):
        await use(url)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AGENTRIG, *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_usage_and_config_errors_are_one_line(tmp_path: Path, config_file: Path) -> None:
    """In the core's shape for every command: ``agentrig mcp: error [code]: ...``."""
    bad_address = run_cli("mcp", "serve", "-c", str(config_file), "--http", "nonsense")
    assert bad_address.returncode == 2
    (line,) = bad_address.stderr.splitlines()
    assert line == ("agentrig mcp: error [mcp.bad_address]: --http wants HOST:PORT, got 'nonsense'")
    broken = tmp_path / "broken.toml"
    broken.write_text(CONFIG + '\n[mcp_servers.x]\ncommand = "x"\ntimout = 1\n')
    failed = run_cli("mcp", "serve", "-c", str(broken))
    assert failed.returncode == 1
    (line,) = failed.stderr.splitlines()
    assert line.startswith(
        f"agentrig mcp: error [config.extra_forbidden]: {broken}: mcp_servers.x.timout: "
    )
    unknown_agent = run_cli("mcp", "serve", "-c", str(config_file), "--agent", "asistant")
    assert unknown_agent.returncode == 1
    (line,) = unknown_agent.stderr.splitlines()
    assert line.startswith("agentrig mcp: error [")
    assert "did you mean 'assistant'" in line


def test_the_plugin_and_its_command_are_listed() -> None:
    helped = run_cli("--help")
    assert helped.returncode == 0
    assert "mcp" in helped.stdout
    listed = run_cli("plugins")
    assert listed.returncode == 0
    assert "agentrig-mcp" in listed.stdout


async def test_a_clients_cancellation_reaches_the_served_tool(
    tmp_path: Path, client_group: anyio.abc.TaskGroup
) -> None:
    # client -> `agentrig mcp serve` -> its agent's MCP tool -> the test server: cancelling
    # at the client cancels the call all the way down (notifications/cancelled twice)
    marker = tmp_path / "marker"
    config_file = tmp_path / "agentrig.toml"
    config_file.write_text(
        CONFIG.replace('tools = ["mcp_resources"]', 'tools = ["mcp__demo"]')
        + f"""
[permissions]
allow = ["mcp__demo__*"]

[mcp_servers.demo]
command = {json.dumps(sys.executable)}
args = [{json.dumps(SERVER)}]
env = {{ MCP_TEST_MARKER = {json.dumps(str(marker))} }}
"""
    )
    spec = StdioServerSpec(command=AGENTRIG, args=("mcp", "serve", "-c", str(config_file)))
    client = McpClient({"rig": spec}, spawn=client_group.start_soon)
    try:
        hang = {t.id: t for t in await client.tools("rig")}[ToolId("mcp__rig__mcp__demo__hang")]
        signal = CancelSignal()

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_once, marker, "started", signal, "stop")
            with pytest.raises(AbortError):
                await hang.execute(
                    {},
                    ToolContext(signal=signal, tool_id="t", call_id="c", invocation_id="i"),
                )
        await eventually(marked(marker, "cancelled"))
    finally:
        await client.aclose()
