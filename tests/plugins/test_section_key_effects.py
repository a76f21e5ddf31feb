"""Plugin table keys that the rest of their table makes ineffective are refused.

``[server.agents.<id>] approval_timeout`` does nothing unless the agent's approvals go
through the API, and ``[mcp_servers.<name>] resident_tools`` does nothing without the
server's own ``defer_above``; both used to be accepted and ignored.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentrig.errors import ConfigError
from agentrig.kernel import open_runtime

AGENT = {"providers": {"p": {"kind": "scripted"}}, "agents": {"a": {"provider": "p", "model": "m"}}}


async def _refused(config: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(ConfigError) as info:
        async with open_runtime({**AGENT, **config}, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    return issue.location(), issue.message


@pytest.mark.anyio
async def test_an_approval_timeout_without_api_approvals_is_refused() -> None:
    where, message = await _refused({"server": {"agents": {"a": {"approval_timeout": 30}}}})
    assert where == "server.agents.a"
    assert "approval_timeout has no effect with approvals = 'refuse'" in message


@pytest.mark.anyio
async def test_resident_tools_without_defer_above_are_refused() -> None:
    server = {"command": "true", "resident_tools": ["add"]}
    where, message = await _refused({"mcp_servers": {"calc": server}})
    assert where == "mcp_servers.calc"
    assert "resident_tools needs defer_above" in message


@pytest.mark.anyio
@pytest.mark.parametrize(
    "config",
    [
        {"server": {"agents": {"a": {"approvals": "api", "approval_timeout": 30}}}},
        {"mcp_servers": {"calc": {"command": "true", "defer_above": 5, "resident_tools": ["a"]}}},
    ],
)
async def test_the_same_keys_with_what_they_need_compose(config: dict[str, Any]) -> None:
    async with open_runtime({**AGENT, **config}, environ={}):
        pass
