"""The user's edge takes plain strings: ``rt.agent("assistant")`` and ``rt.agents.*`` validate
a name with its id factory (``InvalidIdError`` naming it) and hand back the branded id."""

from __future__ import annotations

from typing import Any

import pytest

import agentrig
from agentrig.errors import InvalidIdError

pytestmark = pytest.mark.anyio

_CONFIG: dict[str, Any] = {
    "providers": {"local": {"kind": "scripted", "options": {"script": [{"text": "hi"}]}}},
    "agents": {"assistant": {"provider": "local", "model": "m"}},
}


async def test_a_configured_agent_by_its_plain_name() -> None:
    async with agentrig.open_runtime(_CONFIG) as rt:
        agent = rt.agent("assistant")
        assert agent.id == "assistant"
        assert rt.agents.get("assistant") is agent
        assert rt.agents.require("assistant") is agent
        assert (await agent.run("hello")).value == "hi"


@pytest.mark.parametrize("bad", ["two words", "1st", "", "a/b"])
async def test_a_malformed_name_is_refused_naming_it(bad: str) -> None:
    async with agentrig.open_runtime(_CONFIG) as rt:
        with pytest.raises(InvalidIdError, match=f"invalid AgentId {bad!r}"):
            rt.agent(bad)
        with pytest.raises(InvalidIdError, match=f"invalid AgentId {bad!r}"):
            rt.agents.get(bad)
        with pytest.raises(InvalidIdError, match=f"invalid AgentId {bad!r}"):
            await rt.agents.create(bad, provider="local", model="m")
        with pytest.raises(InvalidIdError, match=f"invalid AgentId {bad!r}"):
            await rt.agents.dispose(bad)


async def test_create_and_dispose_with_plain_strings() -> None:
    async with agentrig.open_runtime(_CONFIG) as rt:
        helper = await rt.agents.create("helper", provider="local", model="m", session_id="s-1")
        assert (helper.id, helper.session_id) == ("helper", "s-1")
        with pytest.raises(InvalidIdError, match="invalid SessionId 'no spaces'"):
            await rt.agents.create("other", provider="local", model="m", session_id="no spaces")
        await rt.agents.dispose("helper")
        assert rt.agents.get("helper") is None
