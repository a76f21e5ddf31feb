"""The older official SDK generation (``mcp`` 1.x) meets the plugin, which runs on 2.x.

A client and a server written with 1.x run in an environment of their own: the 1.x SDK is
pip-installed (with its dependencies) into a directory of the virtual environment's prefix,
once, and put on ``PYTHONPATH`` for those subprocesses only -- never on this process's path
or into the environment's site-packages, which the pytest-xdist workers share.  So both
generations meet as they would on a user's machine: a 1.x client drives ``agentrig mcp
serve`` (over stdio and HTTP, opening with ``initialize``), and a 1.x server is a toolset.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from _mcp_support import AGENTRIG, SERVE_CONFIG, mcp_http_serve, stderr_after_exit, tool_ctx

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.subprocess]

#: the older SDK release the client and server are written with (the last 1.x release)
OLDER_SDK = "1.30.0"
CLIENT = str(Path(__file__).with_name("_mcp_older_client.py"))
SERVER = str(Path(__file__).with_name("_mcp_older_server.py"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn


def _install(target: Path) -> None:
    """pip-install the older SDK into ``target`` once (workers take turns on a lock)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with Path(f"{target}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = target / ".installed"
        if done.exists():
            return
        subprocess.run(
            [
                sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                "--target", str(target), f"mcp=={OLDER_SDK}",
            ],
            check=True,
            timeout=600,
        )  # fmt: skip
        done.write_text(OLDER_SDK)


@pytest.fixture(scope="module")
def older_sdk() -> dict[str, str]:
    """The environment of a process that imports the older SDK."""
    target = Path(sys.prefix) / f"agentrig-mcp-sdk-{OLDER_SDK}"
    _install(target)
    base = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    return {**base, "PYTHONPATH": str(target)}


async def older_client(env: dict[str, str], *args: str) -> tuple[dict[str, object], str]:
    """Run the older SDK's client to its end: (its JSON line, its stderr)."""
    with anyio.fail_after(120):
        done = await anyio.run_process([sys.executable, CLIENT, *args], env=env, check=False)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, out[-2000:] + err[-4000:]
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result, err


def check(result: dict[str, object]) -> None:
    assert result["sdk"] == OLDER_SDK
    assert result["server"] == "agentrig"
    assert result["tools"] == ["ask_assistant"]
    assert result["answer"] == "Hello from the agent."
    assert result["error"] is False


async def test_an_older_sdk_client_over_stdio_sees_no_noise(
    tmp_path: Path, older_sdk: dict[str, str]
) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text(SERVE_CONFIG)
    # the server's stderr is the client's (the SDK's stdio client passes it through); the
    # server itself gets the SDK's minimal environment, without the older SDK's path
    result, err = await older_client(
        older_sdk, "stdio", AGENTRIG, "mcp", "serve", "-c", str(config)
    )
    check(result)
    assert "Traceback" not in err
    assert "validation error" not in err
    assert len(err.splitlines()) <= 2, err  # at most the scripted model's context warning


async def test_an_older_sdk_client_over_http(tmp_path: Path, older_sdk: dict[str, str]) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text(SERVE_CONFIG)
    # the server runs on the plugin's own SDK: the older one is the client's alone
    own = {k: v for k, v in older_sdk.items() if k != "PYTHONPATH"}
    async with mcp_http_serve(config, env=own) as (process, url):
        result, _ = await older_client(older_sdk, "http", url)
        check(result)
        rest = await stderr_after_exit(process)
    assert b"Traceback" not in rest
    assert b"validation error" not in rest


async def test_an_older_sdk_server_runs_as_a_stdio_server(older_sdk: dict[str, str]) -> None:
    """A server written with the 1.x SDK, in an environment of its own, is a toolset."""
    from agentrig_mcp import McpClient, StdioServerSpec

    spec = StdioServerSpec(
        command=sys.executable,
        args=(SERVER,),
        env={"PYTHONPATH": older_sdk["PYTHONPATH"]},
        trust_content=True,
    )
    ctx = tool_ctx()
    async with anyio.create_task_group() as tg:
        client = McpClient({"older": spec}, spawn=tg.start_soon)
        try:
            tools = {str(t.id): t for t in await client.tools("older")}
            assert sorted(tools) == ["mcp__older__add", "mcp__older__sdk"]
            assert (await tools["mcp__older__sdk"].execute({}, ctx)).content == OLDER_SDK
            assert (await tools["mcp__older__add"].execute({"a": 2, "b": 3}, ctx)).content == "5"
        finally:
            await client.aclose()
