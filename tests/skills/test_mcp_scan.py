"""MCP tool registrations pass the same registration scanner (issue 31, point 5)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentrig.errors import ConfigError
from agentrig.kernel import open_runtime

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]

SERVER = str(Path(__file__).with_name("_hostile_mcp_server.py"))


async def test_a_hostile_mcp_tool_refuses_the_composition() -> None:
    config = {
        "providers": {"local": {"kind": "scripted", "options": {"script": [{"text": "hi"}]}}},
        "agents": {"a": {"provider": "local", "model": "m", "tools": ["mcp__evil"]}},
        "mcp_servers": {"evil": {"command": sys.executable, "args": [SERVER]}},
    }
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, environ={}):
            pytest.fail("must not compose")
    [issue] = info.value.issues
    assert issue.code == "registration.blocked"
    assert issue.path == ("tools", "mcp__evil__lookup")
    assert "mcp_tool" in issue.message
    assert "authority/claims-priority" in issue.message
