"""The agent layer's caches answer only for the objects they were filled for.

Each cache here is checked against what makes one stale: a config at a dead config's address
(the registry's built configs), a replaced tool with the same name (the offer's definitions
and plans).  ``id`` is patched to one constant in the module under test: every object then
looks "at the same address", which a cache keyed by ``id()`` alone would confuse.
"""

from __future__ import annotations

from typing import Any

import pytest

import agentrig
from agentrig.agent import _offer, _registry
from agentrig.ids import AgentId
from agentrig.tools import Tool, tool

pytestmark = pytest.mark.anyio

_CONFIG: dict[str, Any] = {
    "providers": {"local": {"kind": "scripted", "options": {"script": []}}},
    "agents": {
        "a": {"provider": "local", "model": "model-a"},
        "b": {"provider": "local", "model": "model-b"},
    },
}


def _described(description: str) -> Tool:
    """A new tool object ``t`` with the given description."""

    def t(text: str) -> str:
        return text

    t.__doc__ = description
    made: Tool = tool(risk="inspect")(t)
    return made


async def test_settings_over_another_base_config_build_their_own_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_registry, "id", lambda obj: 1, raising=False)
    async with agentrig.open_runtime(_CONFIG) as rt:
        made = []
        for name in ("a", "b"):  # the configured agents, made again with the same settings
            await rt.agents.dispose(AgentId(name))
            made.append(await rt.agents.create(AgentId(name), system_prompt="same"))
        a, b = made
    assert (a.config.model, b.config.model) == ("model-a", "model-b")


async def test_a_replaced_tool_is_offered_with_its_own_definition(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_offer, "id", lambda obj: 1, raising=False)
    async with agentrig.open_runtime(_CONFIG) as rt:
        agent = await rt.agents.create(AgentId("c"), provider="local", model="m")
        for description in ("The first one.", "The second, a longer one."):
            replacement = _described(description)
            agent.replace_tools([replacement])
            [offered] = agent.offered_tools()
            assert offered is replacement
            assert agent.tool_spec(offered).description == description
            assert agent.tool_spec_chars(offered) > len(description)
        other = await rt.agents.create(AgentId("d"), provider="local", model="m")
        other.replace_tools([_described("A third.")])
        assert other.tool_spec(other.offered_tools()[0]).description == "A third."
