"""MCP config: ``[mcp_servers.NAME]``, ``[mcp]`` and Claude Code's ``.mcp.json`` (read verbatim,
``${VAR}`` expanded through the caller's resolver only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentrig_mcp import HttpServerSpec, StdioServerSpec, parse_mcp_json, parse_settings

from agentrig.errors import ConfigError


def paths(error: ConfigError) -> list[str]:
    return [issue.location() for issue in error.issues]


def test_stdio_and_http_servers_parse() -> None:
    servers, settings = parse_settings(
        {
            "files": {"command": "npx", "args": ["-y", "server-files"], "env": {"A": "1"}},
            "web": {"url": "https://mcp.example.com/mcp", "headers": {"X-Key": "$ENV:KEY"}},
            "pinned": {"type": "stdio", "command": "srv", "timeout": 5, "startup": "open"},
        },
        {"approved_project_servers": ["github"]},
        source="agentrig.toml",
    )
    assert servers["files"] == StdioServerSpec(
        command="npx", args=("-y", "server-files"), env={"A": "1"}
    )
    assert isinstance(servers["web"], HttpServerSpec)
    assert servers["web"].headers == {"X-Key": "$ENV:KEY"}
    assert servers["pinned"].timeout == 5
    assert servers["pinned"].startup == "open"
    assert settings.approved_project_servers == ("github",)


def test_bad_keys_are_named_with_their_path() -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(
            {
                "files": {"command": "srv", "timout": 5},
                "web": {"url": "ftp://nope"},
                "bad name": {"command": "x"},
                "a__b": {"command": "x"},
                "old": {"type": "ws", "url": "https://x/ws"},
            },
            {"aproved_project_servers": []},
            source="agentrig.toml",
        )
    found = paths(info.value)
    assert "mcp_servers.files.timout" in found
    assert "mcp_servers.web.url" in found
    assert "mcp_servers.bad name" in found
    assert "mcp_servers.a__b" in found
    assert "mcp_servers.old.type" in found
    assert "mcp.aproved_project_servers" in found
    assert info.value.source == "agentrig.toml"


def test_mcp_json_is_read_verbatim_with_variables(tmp_path: Path) -> None:
    project = tmp_path / ".mcp.json"
    project.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "github": {
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-github"],
                        "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
                    },
                    "api": {
                        "type": "http",
                        "url": "${API_BASE:-https://api.example.com}/mcp",
                        "headers": {"Authorization": "Bearer ${API_KEY}"},
                    },
                }
            }
        )
    )
    env = {"GITHUB_TOKEN": "ghp_x", "API_KEY": "k"}
    servers = parse_mcp_json(project, env.get)
    github = servers["github"]
    assert isinstance(github, StdioServerSpec)
    assert github.env == {"GITHUB_TOKEN": "ghp_x"}
    api = servers["api"]
    assert isinstance(api, HttpServerSpec)
    assert api.url == "https://api.example.com/mcp"
    assert api.headers == {"Authorization": "Bearer k"}


def test_mcp_json_variables_come_only_from_the_resolver(tmp_path: Path) -> None:
    project = tmp_path / ".mcp.json"
    project.write_text(json.dumps({"mcpServers": {"s": {"command": "x", "args": ["${HOME}"]}}}))
    with pytest.raises(ConfigError) as info:
        parse_mcp_json(project, None)
    assert paths(info.value) == ["mcpServers.s.args[0]"]
    assert "needs a resolver" in info.value.issues[0].message
    with pytest.raises(ConfigError, match="not set"):
        parse_mcp_json(project, dict[str, str]().get)


def test_mcp_json_shape_errors(tmp_path: Path) -> None:
    project = tmp_path / ".mcp.json"
    project.write_text("{not json")
    with pytest.raises(ConfigError, match="cannot read"):
        parse_mcp_json(project, None)
    project.write_text(json.dumps({"servers": {}}))
    with pytest.raises(ConfigError, match="mcpServers"):
        parse_mcp_json(project, None)
    project.write_text(json.dumps({"mcpServers": {"s": {"command": "x", "bogus": 1}}}))
    with pytest.raises(ConfigError) as info:
        parse_mcp_json(project, None)
    assert paths(info.value) == ["mcpServers.s.bogus"]


def test_config_check_validates_the_mcp_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the installed plugin declares [mcp_servers] and [mcp] (agentrig.config_sections) with
    # their checks; `agentrig config check` runs them
    from agentrig.cli import main

    path = tmp_path / "agentrig.toml"
    path.write_text('[mcp_servers.files]\ncommand = "srv"\ntimout = 5\n\n[mcp]\nproject_file = 3\n')
    assert main(["config", "check", str(path)]) == 1
    shown = capsys.readouterr().out
    assert "mcp_servers.files.timout: unknown key 'timout'" in shown
    assert "mcp.project_file" in shown
    path.write_text('[mcp_servers.files]\ncommand = "srv"\ntimeout = 5\n')
    assert main(["config", "check", str(path)]) == 0


def test_project_file_names_claude_code_accepts_are_made_usable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / ".mcp.json"
    entry = {"command": "srv"}
    names = ["my.server", "ok", "a.b", "a_b", "...", "x" * 60, "team/tools"]
    path.write_text(json.dumps({"mcpServers": {name: entry for name in names}}))
    servers = parse_mcp_json(path, None)
    # a dotted name no longer refuses the file: it is known under a usable name
    assert sorted(servers) == ["a_b", "my_server", "ok", "team_tools"]
    messages = [r.getMessage() for r in caplog.records]
    assert any("'a.b' left out" in m and "collides" in m for m in messages)
    assert any("'...' left out" in m for m in messages)
    assert any(f"'{'x' * 60}' left out" in m for m in messages)
