"""MCP tool registrations pass the same registration scanner (issue 31, point 5)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from agentrig.errors import UnknownIdError
from agentrig.kernel import open_runtime

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]

SERVER = str(Path(__file__).with_name("_hostile_mcp_server.py"))


async def test_a_hostile_mcp_tool_is_left_out_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # the scanner refuses the tool; a server's bad entry is skipped with a warning (issue 34
    # point 6) and never offered to a model.  This server has no other tool, so the agent
    # that names its toolset has nothing to offer under that name and is refused by it.
    caplog.set_level(logging.WARNING, logger="agentrig.mcp")
    config = {
        "providers": {"local": {"kind": "scripted", "options": {"script": [{"text": "hi"}]}}},
        "agents": {"a": {"provider": "local", "model": "m", "tools": ["mcp__evil"]}},
        "mcp_servers": {"evil": {"command": sys.executable, "args": [SERVER]}},
    }
    with pytest.raises(UnknownIdError, match="mcp__evil"):
        async with open_runtime(config, environ={}):
            pytest.fail("an agent naming an empty toolset must not compose")
    [warning] = [r.getMessage() for r in caplog.records if "mcp__evil__lookup" in r.getMessage()]
    assert "refused by the registration scanner" in warning
    assert "authority/claims-priority" in warning
