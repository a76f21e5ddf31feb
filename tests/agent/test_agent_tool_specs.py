"""The tool definitions a request carries: built once per tool object, shared by agents."""

from __future__ import annotations

import pytest

import agentrig
from agentrig.builtins.scripted import Reply, ScriptedProvider
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
