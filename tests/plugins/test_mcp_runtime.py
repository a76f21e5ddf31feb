"""agentrig-mcp as an installed plugin: ``[mcp_servers.*]`` in a composition, the tools in an
agent's runs (through permissions and hooks), ``.mcp.json`` approval, deferral, cancellation,
``tools/list_changed`` between turns, the egress policy and no process left behind."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from agentrig_mcp import MCP, McpClient

import agentrig
from agentrig.cancel import CancelSignal
from agentrig.errors import ConfigError
from agentrig.kernel import Observation

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]

SERVER = str(Path(__file__).with_name("_mcp_server.py"))


def server(*args: str, **options: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [SERVER, *args], **options}


def config(script: list[dict[str, Any]], tools: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "providers": {"local": {"kind": "scripted", "options": {"script": script}}},
        "agents": {"assistant": {"provider": "local", "model": "scripted-1", "tools": tools}},
        **extra,
    }


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def tool_texts(rt: agentrig.Runtime) -> list[tuple[str, str, str]]:
    messages = rt.agent("assistant").session.derive_messages()
    return [(m.name, m.status, m.text) for m in messages if m.role == "tool"]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def eventually(check: Callable[[], bool]) -> None:
    with anyio.fail_after(10):
        while True:
            if check():
                return
            await anyio.sleep(0.02)


async def test_an_agent_calls_mcp_tools_through_permissions() -> None:
    cfg = config(
        [call("mcp__demo__add", a=2, b=3), call("mcp__demo__remove", path="/"), {"text": "done"}],
        ["mcp__demo"],
        mcp_servers={"demo": server()},
        permissions={"allow": ["mcp__demo__add"], "deny": ["mcp__demo__remove"]},
    )
    async with agentrig.open_runtime(cfg) as rt:
        assert "mcp__demo__add" in rt.tools.ids()
        result = await rt.agent("assistant").run("go")
        assert result.value == "done"
        results = tool_texts(rt)
    assert results[0] == ("mcp__demo__add", "ok", "5")
    assert results[1][0] == "mcp__demo__remove"
    assert results[1][1] == "error"
    assert "removed" not in results[1][2]


async def test_is_error_reaches_the_model_as_an_error_result() -> None:
    cfg = config(
        [call("mcp__demo__fail", message="no such repo"), {"text": "sorry"}],
        ["mcp__demo__fail"],
        mcp_servers={"demo": server()},
        permissions={"allow": ["mcp__demo__*"]},
    )
    async with agentrig.open_runtime(cfg) as rt:
        await rt.agent("assistant").run("go")
        [(name, status, text)] = tool_texts(rt)
    assert (name, status) == ("mcp__demo__fail", "error")
    assert "no such repo" in text


async def test_servers_stop_with_the_runtime() -> None:
    cfg = config([call("mcp__demo__whoami"), {"text": "ok"}], ["mcp__demo"])
    cfg["mcp_servers"] = {"demo": server()}
    cfg["permissions"] = {"allow": ["mcp__demo__whoami"]}
    async with agentrig.open_runtime(cfg) as rt:
        await rt.agent("assistant").run("who?")
        pid = int(tool_texts(rt)[0][2].split()[0])
        assert alive(pid)
    assert not alive(pid)


async def test_unused_servers_do_not_start_until_used() -> None:
    cfg = config([], [], mcp_servers={"idle": server()})
    async with agentrig.open_runtime(cfg) as rt:
        client = rt.services.require(MCP)
        assert isinstance(client, McpClient)
        assert client.connection("idle").starts == 0
        assert [str(r.uri) for r in await client.list_resources("idle")] == ["note://hello"]
        assert client.connection("idle").starts == 1


async def test_project_file_servers_need_approval(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "proj": {
                        "command": "${PYTHON}",
                        "args": [SERVER],
                        "env": {"MCP_TEST_GREETING": "${GREETING:-hello}"},
                    }
                }
            }
        )
    )
    toml = tmp_path / "agentrig.toml"
    base = """
[providers.local]
kind = "scripted"
options.script = [
  { tool_calls = [{ name = "mcp__proj__whoami", arguments = {} }] },
  { text = "ok" },
]

[agents.assistant]
provider = "local"
model = "scripted-1"
tools = ["mcp__proj"]

[permissions]
allow = ["mcp__proj__*"]
"""
    toml.write_text(base)
    env = {"PYTHON": sys.executable}
    with pytest.raises(ConfigError) as info:
        async with agentrig.open_runtime(toml, resolver=env.get):
            pass
    assert info.value.issues[0].code == "mcp.not_approved"
    assert info.value.issues[0].location() == "agents.assistant.tools[0]"
    toml.write_text(base + '\n[mcp]\napproved_project_servers = ["proj"]\n')
    async with agentrig.open_runtime(toml, resolver=env.get) as rt:
        await rt.agent("assistant").run("who?")
        assert tool_texts(rt)[0][2].endswith(" hello")


async def test_unknown_and_disabled_servers_are_refused() -> None:
    cfg = config([], ["mcp__dmeo"], mcp_servers={"demo": server()})
    with pytest.raises(ConfigError, match="did you mean 'demo'"):
        async with agentrig.open_runtime(cfg):
            pass
    cfg = config([], ["mcp__demo"], mcp_servers={"demo": server(enabled=False)})
    with pytest.raises(ConfigError, match="disabled"):
        async with agentrig.open_runtime(cfg):
            pass


async def test_bad_server_config_names_the_key() -> None:
    cfg = config([], [], mcp_servers={"demo": {"command": "x", "timout": 3}})
    with pytest.raises(ConfigError) as info:
        async with agentrig.open_runtime(cfg):
            pass
    assert [i.location() for i in info.value.issues] == ["mcp_servers.demo.timout"]


async def test_large_servers_are_deferred_and_found_through_tool_search() -> None:
    cfg = config(
        [
            call("tool_search", query="Numbered tool 499"),
            call("mcp__many__t499", x=1),
            {"text": "found it"},
        ],
        ["mcp__many", "tool_search"],
        mcp_servers={"many": server("--tools", "500", defer_above=50, resident_tools=["add"])},
        permissions={"allow": ["mcp__many__*"]},
    )
    async with agentrig.open_runtime(cfg) as rt:
        agent = rt.agent("assistant")
        offered = {t.id for t in agent.offered_tools()}
        assert "mcp__many__t499" not in offered
        assert offered == {"tool_search", "mcp__many__add"}
        await agent.run("find the tool")
        results = tool_texts(rt)
    assert "mcp__many__t499" in results[0][2]
    assert results[1] == ("mcp__many__t499", "ok", "500")


async def test_progress_becomes_observations() -> None:
    seen: list[Observation] = []

    class Watcher:
        @agentrig.hookimpl
        def observe(self, payload: Observation) -> None:
            if payload.kind == "mcp/progress":
                seen.append(payload)

    cfg = config(
        [call("mcp__demo__progress", steps=2), {"text": "ok"}],
        ["mcp__demo"],
        mcp_servers={"demo": server()},
        permissions={"allow": ["mcp__demo__*"]},
    )
    async with agentrig.open_runtime(cfg, plugins=[("watcher", Watcher())]) as rt:
        await rt.agent("assistant").run("go")
    assert [o.data["progress"] for o in seen] == [1, 2]
    assert seen[0].agent_id == "assistant"


async def test_cancelling_a_run_cancels_the_mcp_request(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    cfg = config(
        [call("mcp__demo__hang"), {"text": "never"}],
        ["mcp__demo"],
        mcp_servers={"demo": server(env={"MCP_TEST_MARKER": str(marker)})},
        permissions={"allow": ["mcp__demo__*"]},
    )
    async with agentrig.open_runtime(cfg) as rt:
        signal = CancelSignal()

        async def stop_when_started() -> None:
            await eventually(lambda: marker.exists() and "started" in marker.read_text())
            signal.cancel("user pressed stop")

        async with anyio.create_task_group() as tg:
            tg.start_soon(stop_when_started)
            result = await rt.agent("assistant").run("go", signal=signal)
        assert result.interrupted
        await eventually(lambda: "cancelled" in marker.read_text())
        [(name, status, text)] = tool_texts(rt)
    assert (name, status) == ("mcp__demo__hang", "error")
    assert "interrupted" in text


async def test_list_changed_refreshes_the_tools_between_turns() -> None:
    cfg = config(
        [
            call("mcp__demo__grow", name="sprout"),
            {"text": "grown"},
            call("mcp__demo__sprout"),
            {"text": "called"},
        ],
        ["mcp__demo"],
        mcp_servers={"demo": server()},
        permissions={"allow": ["mcp__demo__*"]},
    )
    async with agentrig.open_runtime(cfg) as rt:
        agent = rt.agent("assistant")
        await agent.run("grow")
        client = rt.services.require(MCP)
        await eventually(lambda: client.is_stale("demo"))
        assert "mcp__demo__sprout" not in {t.id for t in agent.all_tools()}
        await agent.run("call it")
        assert "mcp__demo__sprout" in {t.id for t in agent.all_tools()}
        results = tool_texts(rt)
    assert results[-1] == ("mcp__demo__sprout", "ok", "sprout says hi")
