"""The first hour: an agent from a config mapping, its tools passed as plain functions."""

from __future__ import annotations

import pytest

import agentrig
from agentrig.ids import AgentId

pytestmark = pytest.mark.anyio

CALLS: list[tuple[int, int]] = []


def add(a: int, b: int) -> int:
    """Add two integers."""
    CALLS.append((a, b))
    return a + b


CONFIG = {
    "providers": {
        "local": {
            "kind": "scripted",
            "options": {
                "script": [
                    {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
                    {"text": "2 + 3 = 5"},
                ]
            },
        }
    },
    "permissions": {"allow": ["add"]},
}


async def test_a_plain_function_passed_to_create_is_a_tool_the_model_calls() -> None:
    CALLS.clear()
    async with agentrig.open_runtime(CONFIG) as rt:
        agent = await rt.agents.create(AgentId("calc"), provider="local", model="m", tools=[add])
        result = await agent.run("What is 2 + 3?")
        assert result.value == "2 + 3 = 5"
        assert CALLS == [(2, 3)]
        (offered,) = agent.all_tools()
        assert (offered.id, offered.description) == ("add", "Add two integers.")
        tool_messages = [m for m in agent.session.derive_messages() if m.role == "tool"]
        assert [m.text for m in tool_messages] == ["5"]
        other = await rt.agents.create(AgentId("calc2"), provider="local", model="m", tools=[add])
        assert other.all_tools()[0] is offered  # the same function is the same tool
        assert [a.id for a in rt.agents] == ["calc", "calc2"]


async def test_run_sync_runs_a_mapping_config_whose_tool_is_a_module_reference() -> None:
    CALLS.clear()
    config = {
        **CONFIG,
        "agents": {"calc": {"provider": "local", "model": "m", "tools": [f"{__name__}:add"]}},
    }
    result = await _in_thread(config)
    assert (result.value, CALLS) == ("2 + 3 = 5", [(2, 3)])


async def _in_thread(config: dict[str, object]) -> agentrig.RunResult[object]:
    import anyio.to_thread

    return await anyio.to_thread.run_sync(agentrig.run_sync, config, "What is 2 + 3?")
