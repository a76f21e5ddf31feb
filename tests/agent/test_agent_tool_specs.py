"""The tool definitions a request carries: built once per tool object, shared by agents."""

from __future__ import annotations

from typing import Any, cast

import pytest

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedProvider
from agentrig.ids import AgentId
from agentrig.tools import tool

pytestmark = pytest.mark.anyio

CONFIG = {"providers": {"local": {"kind": "scripted"}}, "agents": {}}


def _lookup_v1(key: str) -> str:
    """Look a key up."""
    return key


def _lookup_v2(key: str, exact: bool = False) -> str:
    """Look a key up, exactly if asked."""
    return key


LOOKUP_V1 = tool(id="lookup", risk="inspect")(_lookup_v1)
LOOKUP_V2 = tool(id="lookup", risk="inspect")(_lookup_v2)


async def test_each_tool_object_is_offered_with_its_own_definition() -> None:
    # agents share the definition of the same tool object; another tool object with the
    # same id (a new version of it) is offered with its own description and schema
    provider = ScriptedProvider([Reply(text="a"), Reply(text="b"), Reply(text="c")])
    async with agentrig.open_runtime(
        CONFIG, overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        for name, fn in (("one", LOOKUP_V1), ("two", LOOKUP_V1), ("three", LOOKUP_V2)):
            agent = await rt.agents.create(
                AgentId(name), provider="local", model="scripted-1", tools=[fn]
            )
            await agent.run("go")
    first, second, third = (request.tools for request in provider.requests)
    assert first == second
    assert [spec.description for spec in first] == ["Look a key up."]
    assert [spec.description for spec in third] == ["Look a key up, exactly if asked."]
    assert "exact" in third[0].parameters["properties"]
    assert "exact" not in first[0].parameters["properties"]


async def test_agents_with_the_same_tool_objects_share_the_plan_of_their_offer() -> None:
    # the offer plan is a pure function of the tool objects, loaded set, policy, window and
    # overrides: agents with the same ones get the one plan, equal to computing it afresh;
    # another tool object with the same id is offered itself, never the cached one
    from agentrig.tools.deferral import DeferralPolicy, plan_offer

    async with agentrig.open_runtime(
        CONFIG, overrides=[("providers", "local", ScriptedProvider([]))], environ={}
    ) as rt:
        agents = [
            await rt.agents.create(AgentId(name), provider="local", model="scripted-1", tools=[fn])
            for name, fn in (("one", LOOKUP_V1), ("two", LOOKUP_V1), ("three", LOOKUP_V2))
        ]
        one, two, three = (agent.offered_tools() for agent in agents)
        assert one[0] is LOOKUP_V1
        assert two[0] is LOOKUP_V1
        assert three[0] is LOOKUP_V2
        assert one == list(plan_offer([LOOKUP_V1], policy=DeferralPolicy()).offered)
        assert agents[0]._port.offer.plan() is agents[1]._port.offer.plan()
        assert agents[0]._port.offer.plan() is not agents[2]._port.offer.plan()


async def test_a_shared_plan_withholds_what_a_fresh_one_withholds() -> None:
    # deferral on: every agent withholds the deferrable tools until it loads them, and one
    # agent loading a tool changes its own plan only
    from agentrig.builtins._tool_search import tool_search

    always = tool(id="always", risk="inspect", deferred=False)(_lookup_v1)
    async with agentrig.open_runtime(
        CONFIG, overrides=[("providers", "local", ScriptedProvider([]))], environ={}
    ) as rt:
        agents = [
            await rt.agents.create(
                AgentId(name),
                provider="local",
                model="scripted-1",
                tools=[always, LOOKUP_V1, cast(Any, tool_search)],
                deferral="on",
            )
            for name in ("one", "two")
        ]
        for agent in agents:
            assert [t.id for t in agent.offered_tools()] == ["always", "tool_search"]
            assert [t.id for t in agent.withheld_tools()] == ["lookup"]
        agents[0].load_tools(["lookup"])
        assert [t.id for t in agents[0].offered_tools()] == ["always", "lookup", "tool_search"]
        assert [t.id for t in agents[1].offered_tools()] == ["always", "tool_search"]
