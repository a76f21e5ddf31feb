"""One ID, one tool across every source (issue 11, point 2): entry points, toolsets, the
in-memory source and ``rt.agents.create(tools=...)``; an entry point's name is the id it
registers."""

from __future__ import annotations

from typing import Any

import pytest

from agentrig.cli import plugin_report
from agentrig.errors import ConfigError, DuplicateIdError, PluginLoadError
from agentrig.ids import AgentId, ToolId
from agentrig.kernel import MemorySource, open_runtime
from agentrig.plugin import TOOLS
from agentrig.tools import Toolset, tool


def make(tool_id: str, answer: str) -> Any:
    @tool(risk="inspect", id=tool_id)
    def lookup(city: str) -> str:
        """Look something up."""
        return answer

    return lookup


SCRIPTED = {"providers": {"local": {"kind": "scripted"}}}


def agent_with(*tools: str) -> dict[str, Any]:
    return {**SCRIPTED, "agents": {"a": {"provider": "local", "model": "m", "tools": list(tools)}}}


def test_an_entry_point_name_that_differs_from_its_tool_id_is_a_registration_error() -> None:
    memory = MemorySource()
    memory.add("tools", "weather", make("lookup_weather", "sun"), distribution="weather-dist")
    from agentrig.kernel import PluginIndex

    index = PluginIndex([memory])
    with pytest.raises(PluginLoadError) as info:
        index.load("tools", "weather")
    message = str(info.value)
    assert "named 'weather' but its tool's id is 'lookup_weather'" in message
    assert "weather-dist" in message
    (row,) = plugin_report(index)
    assert row.status == "failed"


def test_a_toolset_declares_the_ids_it_brings_each_once() -> None:
    from agentrig.kernel import PluginIndex

    memory = MemorySource()
    memory.add("tools", "weather", Toolset((make("forecast", "f"), make("alerts", "a"))))
    memory.add("tools", "twice", Toolset((make("same", "1"), make("same", "2"))))
    index = PluginIndex([memory])
    loaded: Any = index.load("tools", "weather")
    assert [t.id for t in loaded] == ["forecast", "alerts"]
    with pytest.raises(PluginLoadError, match="brings the tool id 'same' twice"):
        index.load("tools", "twice")


@pytest.mark.anyio
async def test_two_entries_bringing_one_id_is_a_config_error_naming_both() -> None:
    memory = MemorySource()
    memory.add("tools", "forecast", make("forecast", "plain"), distribution="plain-dist")
    memory.add(
        "tools",
        "weather_set",
        Toolset((make("forecast", "from the set"), make("alerts", "a"))),
        distribution="set-dist",
    )
    with pytest.raises(ConfigError) as info:
        async with open_runtime(agent_with("forecast", "weather_set"), memory=memory, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.code == "config.duplicate_tool"
    assert issue.path == ("agents", "a", "tools", 1)
    assert "tool id 'forecast' is brought by two entries" in issue.message
    assert "tools:forecast (plain-dist" in issue.message
    assert "tools:weather_set (set-dist" in issue.message


@pytest.mark.anyio
async def test_a_toolset_and_its_member_named_together_are_one_tool() -> None:
    memory = MemorySource()
    memory.add("tools", "weather_set", Toolset((make("forecast", "f"), make("alerts", "a"))))
    config = agent_with("weather_set")
    config["tools"] = {"weather_set": {}}
    async with open_runtime(config, memory=memory, environ={}) as rt:
        assert sorted(t.id for t in rt.agent(AgentId("a")).all_tools()) == ["alerts", "forecast"]


@pytest.mark.anyio
async def test_an_override_is_the_one_deliberate_replacement() -> None:
    memory = MemorySource()
    memory.add("tools", "weather_set", Toolset((make("forecast", "f"), make("alerts", "a"))))
    fake = make("forecast", "fake")
    async with open_runtime(
        agent_with("weather_set"),
        memory=memory,
        environ={},
        overrides=[("tools", "forecast", fake)],
    ) as rt:
        assert rt.catalog(TOOLS).require(ToolId("forecast")) is fake


@pytest.mark.anyio
async def test_agents_create_refuses_a_second_tool_with_a_taken_id() -> None:
    memory = MemorySource()
    memory.add("tools", "forecast", make("forecast", "installed"), distribution="plain-dist")
    async with open_runtime(agent_with("forecast"), memory=memory, environ={}) as rt:
        mine = make("forecast", "mine")
        with pytest.raises(DuplicateIdError) as info:
            await rt.agents.create(AgentId("b"), provider="local", model="m", tools=[mine])
        assert "already the id of a different tool of this runtime (from tools:forecast)" in str(
            info.value
        )
        other = make("other", "1")
        with pytest.raises(DuplicateIdError, match=r"items 0 and 1"):
            await rt.agents.create(
                AgentId("c"), provider="local", model="m", tools=[other, make("other", "2")]
            )
        assert rt.agents.get(AgentId("b")) is None
        assert rt.agents.get(AgentId("c")) is None
        # the runtime's own tool, or the same tool twice, is one tool
        installed = rt.catalog(TOOLS).require(ToolId("forecast"))
        agent = await rt.agents.create(
            AgentId("d"), provider="local", model="m", tools=[installed, other, other]
        )
        assert [t.id for t in agent.all_tools()] == ["forecast", "other"]
