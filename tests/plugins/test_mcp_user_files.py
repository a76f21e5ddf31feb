"""Servers from the files users already have (``[mcp] user_files``): Claude Code's
``~/.claude.json`` (user and local scope) and Codex's ``~/.codex/config.toml``, each read in
its tool's shape; an entry agentrig cannot use is left out with a warning, not the file."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest
from _mcp_support import SERVER
from agentrig_mcp import MCP

import agentrig
from agentrig.errors import ConfigError
from agentrig.ids import AgentId
from agentrig.plugin import TOOLS

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]


def write_files(tmp_path: Path, project: Path) -> tuple[Path, Path]:
    stdio = {"command": sys.executable, "args": [SERVER], "env": {"MCP_TEST_GREETING": "${HELLO}"}}
    claude = tmp_path / "home" / ".claude.json"
    claude.parent.mkdir()
    claude.write_text(
        json.dumps(
            {
                "numStartups": 12,  # Claude Code keeps much more in this file: ignored
                "mcpServers": {
                    "user_scope": stdio,
                    "old_sse": {"type": "sse", "url": "https://example.com/sse"},
                    "socket": {"type": "ws", "url": "wss://example.com/ws"},
                },
                "projects": {
                    str(project.resolve()): {"mcpServers": {"local_scope": stdio}},
                    "/elsewhere": {"mcpServers": {"not_here": stdio}},
                },
            }
        )
    )
    codex = tmp_path / "home" / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text(
        f"""
model = "o3"

[mcp_servers.toml_srv]
command = {json.dumps(sys.executable)}
args = [{json.dumps(SERVER)}]
env = {{ MCP_TEST_GREETING = "from codex" }}
startup_timeout_sec = 20
tool_timeout_sec = 30

[mcp_servers.filtered]
command = {json.dumps(sys.executable)}
args = [{json.dumps(SERVER)}]
enabled_tools = ["add", "whoami", "weather", "not_listed"]
disabled_tools = ["weather"]

[mcp_servers.unusable]
command = "srv"
default_tools_approval_mode = "prompt"
"""
    )
    return claude, codex


def config(project: Path, claude: Path, codex: Path, tools: list[str]) -> Path:
    """``agentrig.toml`` in the project: an agent calling ``tools`` (``whoami``) in order."""
    calls = ", ".join(f'{{ tool_calls = [{{ name = "{t}", arguments = {{}} }}] }}' for t in tools)
    path = project / "agentrig.toml"
    path.write_text(
        f"""
[providers.local]
kind = "scripted"
options.script = [{calls}, {{ text = "done" }}]

[agents.a]
provider = "local"
model = "scripted-1"
tools = {json.dumps(tools)}

[permissions]
allow = ["mcp__user_scope__*", "mcp__local_scope__*", "mcp__toml_srv__*"]

[mcp]
user_files = [{json.dumps(str(claude))}, {json.dumps(str(codex))}]
"""
    )
    return path


async def test_servers_from_claude_and_codex_files_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="agentrig.mcp")
    project = tmp_path / "project"
    project.mkdir()
    claude, codex = write_files(tmp_path, project)
    tools = ["mcp__user_scope__whoami", "mcp__local_scope__whoami", "mcp__toml_srv__whoami"]
    toml = config(project, claude, codex, tools)
    async with agentrig.open_runtime(
        toml, resolver=lambda name: "hi there" if name == "HELLO" else None
    ) as rt:
        ids = {str(i) for i in rt.catalog(TOOLS).ids()}
        assert set(tools) <= ids
        await rt.agent(AgentId("a")).run("go")
        messages = rt.agent(AgentId("a")).session.derive_messages()
    texts = [m.text.split("\n")[-1] for m in messages if m.role == "tool"]
    assert [t.split(" ", 1)[1] for t in texts] == ["hi there", "hi there", "from codex"]
    warnings = [r.getMessage() for r in caplog.records]
    assert any("'socket' left out" in w for w in warnings)
    assert not any("old_sse" in w for w in warnings)  # the legacy SSE transport is read
    assert any("'unusable' left out" in w and "default_tools_approval_mode" in w for w in warnings)
    assert not any("not_here" in w for w in warnings)  # another project's: not read at all


async def test_codex_tool_filters_choose_the_tools(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Codex's ``enabled_tools`` is an allow list and ``disabled_tools`` a deny list applied
    after it: the server's other tools are not offered, and an agent naming one is refused."""
    caplog.set_level(logging.WARNING, logger="agentrig.mcp")
    project = tmp_path / "project"
    project.mkdir()
    claude, codex = write_files(tmp_path, project)
    async with agentrig.open_runtime(
        config(project, claude, codex, ["mcp__filtered"]), resolver=lambda name: "x"
    ) as rt:
        ids = {str(i) for i in rt.catalog(TOOLS).ids() if str(i).startswith("mcp__filtered__")}
        assert ids == {"mcp__filtered__add", "mcp__filtered__whoami"}
        (listed,) = (await rt.services.require(MCP).tools("filtered"),)
        assert sorted(t.definition.name for t in listed) == ["add", "whoami"]
    assert any("not_listed" in r.getMessage() for r in caplog.records)
    with pytest.raises(ConfigError, match="mcp__filtered__remove"):
        async with agentrig.open_runtime(
            config(project, claude, codex, ["mcp__filtered__remove"]), resolver=lambda name: "x"
        ):
            pytest.fail("the runtime opened with a tool its server filters out")


async def test_a_server_of_another_project_is_not_there(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    claude, codex = write_files(tmp_path, project)
    with pytest.raises(ConfigError, match="no MCP server 'not_here'"):
        async with agentrig.open_runtime(
            config(project, claude, codex, ["mcp__not_here"]), resolver=lambda name: None
        ):
            pass
