"""Switching an agent's model: ``agent.model`` reads it synchronously from construction on,
``agent.set_model`` checks the switch (provider, listed model, capabilities) and it applies
from the next model round."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from agentrig.agent import Agent, ModelChoiceError
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.errors import RuntimeClosedError
from agentrig.kernel import MemorySource
from agentrig.llm import (
    Capabilities,
    ImageBlock,
    ModelListing,
    ProviderError,
    TextBlock,
    UserMessage,
)
from agentrig.session import RequestHeader
from agentrig.testing import Overrides, RuntimeFactory
from agentrig.tools import ToolContext, tool

pytestmark = pytest.mark.anyio


def _config(**agent: Any) -> dict[str, Any]:
    return {
        "providers": {"main": {"kind": "scripted"}, "other": {"kind": "scripted"}},
        "agents": {"assistant": {"provider": "main", "model": "small", **agent}},
        "permissions": {"mode": "bypass"},
    }


@asynccontextmanager
async def _agent(
    factory: RuntimeFactory,
    overrides: Overrides,
    main: ScriptedProvider,
    other: ScriptedProvider | None = None,
    **agent: Any,
) -> AsyncIterator[Agent]:
    overrides.set("providers", "main", main)
    overrides.set("providers", "other", other or ScriptedProvider())
    async with factory(_config(**agent)) as rt:
        yield rt.agent("assistant")


def _headers(agent: Agent) -> list[tuple[str, str]]:
    return [
        (e.data.provider, e.data.model)
        for e in agent.session.events
        if isinstance(e.data, RequestHeader)
    ]


async def test_the_model_is_readable_right_after_construction_and_switches_the_next_run(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    main = ScriptedProvider(["one", "two"])
    async with _agent(agentrig_runtime, agentrig_overrides, main) as agent:
        assert (agent.model, agent.provider_id) == ("small", "main")  # no run, no await
        await agent.run("first")
        agent.set_model("large")
        assert agent.model == "large"
        result = await agent.run("second")
        assert [r.model for r in main.requests] == ["small", "large"]
        assert result.invocation.model == "large"
        assert _headers(agent) == [("main", "small"), ("main", "large")]


async def test_a_switch_during_a_run_applies_from_the_next_round(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides, agentrig_entries: MemorySource
) -> None:
    @tool
    async def upgrade(ctx: ToolContext) -> str:
        """Switches the agent to a larger model."""
        ctx.agent.set_model("large")
        return "switched"

    agentrig_entries.add("tools", upgrade.id, upgrade)
    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("upgrade"),)), "done"]
    main = ScriptedProvider(script)
    overrides = agentrig_overrides
    async with _agent(agentrig_runtime, overrides, main, tools=["upgrade"]) as agent:
        result = await agent.run("go")
        assert result.value == "done"
        assert [r.model for r in main.requests] == ["small", "large"]
        assert result.invocation.model == "large"


async def test_a_switch_to_another_provider_sends_there(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    main, other = ScriptedProvider(["from main"]), ScriptedProvider(["from other"])
    async with _agent(agentrig_runtime, agentrig_overrides, main, other) as agent:
        agent.set_model("big", provider="other")
        assert (agent.model, agent.provider_id) == ("big", "other")
        assert (await agent.run("hi")).value == "from other"
        assert main.requests == []
        assert [r.model for r in other.requests] == ["big"]


async def test_refused_switches_name_their_reason_and_change_nothing(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    main = ScriptedProvider(["ok"], models=["small", "large"])
    assert isinstance(main, ModelListing)
    blind = ScriptedProvider(capabilities=Capabilities(vision=False))
    async with _agent(agentrig_runtime, agentrig_overrides, main, blind) as agent:
        cases: list[tuple[dict[str, Any], str]] = [
            ({"model": ""}, "model.invalid"),
            ({"model": "large", "provider": "nowhere"}, "model.unknown_provider"),
            ({"model": "huge"}, "model.unknown"),
        ]
        for arguments, code in cases:
            with pytest.raises(ModelChoiceError) as info:
                agent.set_model(**arguments)
            assert info.value.code == code
        # a picture in the history: a model that declares no vision cannot take the next turn
        image = ImageBlock(media_type="image/png", data="iVBO")
        await agent.run(UserMessage(content=(TextBlock(text="look"), image)))
        with pytest.raises(ModelChoiceError, match="'vision'") as info:
            agent.set_model("any", provider="other")
        assert info.value.code == "model.incapable"
        assert (agent.model, agent.provider_id) == ("small", "main")
        agent.set_model("large")  # a listed model of a capable provider is taken
        assert agent.model == "large"


async def test_a_disposed_agent_refuses_a_switch(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    async with _agent(agentrig_runtime, agentrig_overrides, ScriptedProvider()) as agent:
        await agent.runtime.agents.dispose(agent.id)
        with pytest.raises(RuntimeClosedError, match="disposed"):
            agent.set_model("large")


async def test_a_listing_provider_refuses_a_request_for_a_model_it_does_not_serve(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    main = ScriptedProvider(["never"], models=["large"])
    async with _agent(agentrig_runtime, agentrig_overrides, main) as agent:
        with pytest.raises(ProviderError, match="no model small") as info:
            await agent.run("hi")
        assert info.value.code == "provider.not_found"
