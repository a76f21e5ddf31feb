"""Clients of the newer official SDK generation (``mcp`` 2.x) drive ``agentrig mcp serve``.

The plugin runs on the SDK line its pin names; a client written with the newer line runs in
an environment of its own (installed once into the venv's prefix, as the otel plugin's
lowest-SDK test does), so both generations meet as they would on a user's machine.  Such a
client opens each connection with ``server/discover`` (a later protocol revision); the
server answers "method not found" and the client falls back to ``initialize`` -- without the
~90-line validation dump the SDK's server session used to print for it on every connection.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from _mcp_support import AGENTRIG, SERVE_CONFIG, mcp_http_serve, stderr_after_exit, tool_ctx

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.subprocess]

#: the newer SDK release the client is written with (the newest on the package index)
NEWER_SDK = "2.3.0"
CLIENT = str(Path(__file__).with_name("_mcp_newer_client.py"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn


@pytest.fixture(scope="module")
def newer_sdk() -> dict[str, str]:
    """The environment of a process that imports the newer SDK (installed once)."""
    target = Path(sys.prefix) / f"agentrig-mcp-client-sdk-{NEWER_SDK}"
    done = target / ".installed"
    if not done.exists():
        subprocess.run(
            [
                sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                "--target", str(target), f"mcp=={NEWER_SDK}",
            ],
            check=True,
        )  # fmt: skip
        done.write_text(NEWER_SDK)
    base = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    return {**base, "PYTHONPATH": str(target)}


async def newer_client(env: dict[str, str], *args: str) -> tuple[dict[str, object], str]:
    """Run the newer SDK's client to its end: (its JSON line, its stderr)."""
    with anyio.fail_after(120):
        done = await anyio.run_process([sys.executable, CLIENT, *args], env=env, check=False)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, out[-2000:] + err[-4000:]
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result, err


def check(result: dict[str, object]) -> None:
    assert result["sdk"] == NEWER_SDK
    assert result["server"] == "agentrig"
    assert result["tools"] == ["ask_assistant"]
    assert result["answer"] == "Hello from the agent."
    assert result["error"] is False


async def test_a_newer_sdk_client_over_stdio_sees_no_noise(
    tmp_path: Path, newer_sdk: dict[str, str]
) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text(SERVE_CONFIG)
    # the server's stderr is the client's (the SDK's stdio client passes it through)
    result, err = await newer_client(
        newer_sdk, "stdio", AGENTRIG, "mcp", "serve", "-c", str(config)
    )
    check(result)
    assert "validation error" not in err
    assert "Failed to validate" not in err
    assert len(err.splitlines()) <= 2, err  # at most the scripted model's context warning


async def test_a_newer_sdk_client_over_http(tmp_path: Path, newer_sdk: dict[str, str]) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text(SERVE_CONFIG)
    # the server runs on the plugin's own SDK: the newer one is the client's alone
    own = {k: v for k, v in newer_sdk.items() if k != "PYTHONPATH"}
    async with mcp_http_serve(config, env=own) as (process, url):
        result, _ = await newer_client(newer_sdk, "http", url)
        check(result)
        rest = await stderr_after_exit(process)
    assert b"validation error" not in rest
    assert b"Failed to validate" not in rest


async def test_a_newer_sdk_server_runs_as_a_stdio_server(newer_sdk: dict[str, str]) -> None:
    """A server written with the 2.x SDK, in an environment of its own, is a toolset."""
    from agentrig_mcp import McpClient, StdioServerSpec

    server = str(Path(__file__).with_name("_mcp_newer_server.py"))
    spec = StdioServerSpec(
        command=sys.executable,
        args=(server,),
        env={"PYTHONPATH": newer_sdk["PYTHONPATH"]},
        trust_content=True,
    )
    ctx = tool_ctx()
    async with anyio.create_task_group() as tg:
        client = McpClient({"newer": spec}, spawn=tg.start_soon)
        try:
            tools = {str(t.id): t for t in await client.tools("newer")}
            assert sorted(tools) == ["mcp__newer__add", "mcp__newer__sdk"]
            assert (await tools["mcp__newer__sdk"].execute({}, ctx)).content == NEWER_SDK
            assert (await tools["mcp__newer__add"].execute({"a": 2, "b": 3}, ctx)).content == "5"
        finally:
            await client.aclose()
