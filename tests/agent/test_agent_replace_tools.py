"""``Agent.replace_tools``: a plugin swaps an agent's tool set between turns."""

from __future__ import annotations

import pytest

import agentrig
from agentrig.ids import AgentId
from agentrig.tools import ToolDefinitionError, tool

pytestmark = pytest.mark.anyio


@tool(risk="inspect")
def first() -> str:
    """The first tool."""
    return "one"


@tool(risk="inspect")
def second() -> str:
    """The second tool."""
    return "two"


CONFIG = {
    "providers": {"local": {"kind": "scripted", "options": {"script": []}}},
    "agents": {"a": {"provider": "local", "model": "scripted-1"}},
}


async def test_replaced_tools_are_offered_and_callable() -> None:
    async with agentrig.open_runtime(CONFIG) as rt:
        agent = await rt.agents.create(
            AgentId("b"), provider="local", model="scripted-1", tools=[first]
        )
        assert [t.id for t in agent.offered_tools()] == ["first"]
        agent.replace_tools([second])
        assert [t.id for t in agent.offered_tools()] == ["second"]
        assert [t.id for t in agent.all_tools()] == ["second"]
        result = await agent.call_tool("second", {})
        assert result.value.text == "two"


async def test_replacing_checks_the_contract() -> None:
    async with agentrig.open_runtime(CONFIG) as rt:
        agent = await rt.agents.create(
            AgentId("b"), provider="local", model="scripted-1", tools=[first]
        )
        with pytest.raises(ToolDefinitionError, match="replace_tools: tool ids given twice: first"):
            agent.replace_tools([first, first])
        assert [t.id for t in agent.all_tools()] == ["first"]
