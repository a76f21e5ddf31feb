"""``[[mcp.serve.clients]]``: an access policy that fails closed (spec 002, MCP access).

A grant constrains which tool names an authenticated caller lists and calls; a grant
without a caller to authenticate (stdio) is an error, and so is a pattern that names no
served tool.  A real ``agentrig mcp serve --http`` process, the SDK's own clients (the
handshake era and the 2026-07-28 revision).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import anyio
import httpx2
import pytest
from _mcp_support import SERVE_CONFIG, mcp_http_serve, mcp_session, run_cli, stderr_after_exit
from mcp import ClientSession, types
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types.version import LATEST_MODERN_VERSION

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]

CONFIG = (
    SERVE_CONFIG
    + """
[agents.other]
provider = "local"
model = "scripted-1"

[mcp.serve]
api_keys = ["$ENV:ADMIN_KEY"]

[[mcp.serve.clients]]
key = "$ENV:CI_KEY"
tools = ["ask_assist*"]
"""
)
ADMIN = "admin-key-31b6"
CI = "ci-key-7d01"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn


def env(**more: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    return {**base, "ADMIN_KEY": ADMIN, "CI_KEY": CI, **more}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agentrig.toml"
    path.write_text(text)
    return path


async def as_caller(
    url: str, key: str, era: str = "handshake"
) -> tuple[set[str], list[types.CallToolResult]]:
    """What the caller with ``key`` lists and gets from both ask tools: with the SDK's session
    (the ``initialize`` handshake) or its high-level client in the newer revision."""
    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {key}"}, timeout=30)
    async with contextlib.AsyncExitStack() as stack:
        if era == "handshake":
            client: ClientSession | Client = await stack.enter_async_context(mcp_session(url, http))
        else:
            await stack.enter_async_context(http)
            transport = streamable_http_client(url, http_client=http)
            client = await stack.enter_async_context(Client(transport))
            assert client.protocol_version == LATEST_MODERN_VERSION
        with anyio.fail_after(30):
            names = {t.name for t in (await client.list_tools()).tools}
            calls = [
                await client.call_tool(name, {"prompt": "hi"})
                for name in ("ask_assistant", "ask_other")
            ]
    return names, calls


def text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


@pytest.mark.parametrize("era", ["handshake", "2026"])
async def test_a_grant_constrains_what_its_caller_lists_and_calls(tmp_path: Path, era: str) -> None:
    async with mcp_http_serve(write(tmp_path, CONFIG), env=env()) as (_process, url):
        names, (mine, theirs) = await as_caller(url, CI, era)
        assert names == {"ask_assistant"}
        assert not mine.is_error
        assert theirs.is_error
        assert text(theirs) == "mcp.not_granted: this caller may not use 'ask_other'"
        # a key from api_keys has every tool
        names, (mine, theirs) = await as_caller(url, ADMIN, era)
        assert names == {"ask_assistant", "ask_other"}
        assert not mine.is_error
        assert not theirs.is_error


async def test_a_grant_without_an_authenticated_caller_is_an_error(tmp_path: Path) -> None:
    # stdio has no caller to authenticate: the grant is refused, never ignored
    code, err = await run_cli("mcp", "serve", "-c", str(write(tmp_path, CONFIG)), environ=env())
    assert code == 1, err
    (line,) = err.splitlines()
    assert line.startswith("agentrig mcp: error [mcp.unauthenticated_grant]: ")
    assert "mcp.serve.clients" in line


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        # a pattern that matches nothing would grant nothing: a typo is named, not served
        (('"ask_assist*"', '"ask_asistant"'), "mcp.serve.clients[0].tools[0]"),
        # a key in the file is refused and never echoed
        (('"$ENV:CI_KEY"', '"ci-literal-9"'), "clients[0].key must be a secret reference"),
    ],
)
async def test_a_bad_grant_is_an_error(
    tmp_path: Path, change: tuple[str, str], expected: str
) -> None:
    config = write(tmp_path, CONFIG.replace(*change))
    code, err = await run_cli(
        "mcp", "serve", "-c", str(config), "--http", "127.0.0.1:0", environ=env()
    )
    assert code == 1, err
    assert expected in err
    assert "ci-literal-9" not in err


async def test_clients_closing_their_sessions_print_no_traceback(tmp_path: Path) -> None:
    config = write(tmp_path, SERVE_CONFIG)
    async with mcp_http_serve(config, env=env()) as (process, url):
        for _ in range(2):
            async with mcp_session(url, httpx2.AsyncClient(timeout=30)) as session:
                await session.call_tool("ask_assistant", {"prompt": "hi"})
        await anyio.sleep(0.5)  # the server notices the closed streams
        said = await stderr_after_exit(process)
    assert b"Traceback" not in said, said.decode()
    assert b"Error in standalone SSE writer" not in said
