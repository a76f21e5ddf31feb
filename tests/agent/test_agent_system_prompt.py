"""The system prompt: one head message, injected once per session, live updates reach the
very next request, and a resumed session gets the current prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agentloop_support import EnvFactory, check_invariant, events, request_texts, texts

from agentrig.agent import Agent
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.ids import AgentId
from agentrig.llm import SystemMessage
from agentrig.tools import ToolContext, tool

pytestmark = pytest.mark.anyio


def heads(agent: Agent) -> list[str]:
    return [p.text for p in events(agent, "system/prompt")]


async def test_prompt_is_injected_once_per_session(env: EnvFactory) -> None:
    async with env(["one", "two"], system_prompt="Be brief.") as e:
        await e.agent.run("a")
        await e.agent.run("b")
        assert heads(e.agent) == ["Be brief."]
        history = list(e.agent.session.derive_messages())
        assert [m.role for m in history].count("system") == 1
        assert history[0] == SystemMessage(text="Be brief.")
        for request in e.provider.requests:
            assert [m.role for m in request.messages].count("system") == 1
            assert request.messages[0] == SystemMessage(text="Be brief.")


async def test_no_prompt_means_no_system_message(env: EnvFactory) -> None:
    async with env(["one"]) as e:
        await e.agent.run("a")
        assert heads(e.agent) == []
        assert all(m.role != "system" for m in e.provider.requests[0].messages)


async def test_set_system_prompt_reaches_the_very_next_request(env: EnvFactory) -> None:
    async with env(["one", "two"], system_prompt="Old.") as e:
        await e.agent.run("a")
        await e.agent.set_system_prompt("New.")
        assert e.agent.system_prompt == "New."
        await e.agent.run("b")
        assert e.provider.requests[1].messages[0] == SystemMessage(text="New.")
        # the earlier request keeps what it was sent with
        assert e.provider.requests[0].messages[0] == SystemMessage(text="Old.")
        history = list(e.agent.session.derive_messages())
        assert [m for m in history if isinstance(m, SystemMessage)] == [SystemMessage(text="New.")]
        assert history[0] == SystemMessage(text="New.")
        assert heads(e.agent) == ["Old.", "New."]


async def test_set_system_prompt_during_a_turn_reaches_its_next_step(env: EnvFactory) -> None:
    @tool
    async def refresh(ctx: ToolContext) -> str:
        """Refresh the environment section of the prompt."""
        await ctx.agent.set_system_prompt("Refreshed.")
        return "refreshed"

    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("refresh"),)), "done"]
    async with env(script, tools=[refresh], system_prompt="Stale.") as e:
        await e.agent.run("go")
        assert [r.messages[0].text for r in e.provider.requests] == ["Stale.", "Refreshed."]
        check_invariant(e.agent)


def store(tmp_path: Path) -> dict[str, Any]:
    return {"session_stores": {"disk": {"kind": "jsonl", "options": {"directory": str(tmp_path)}}}}


@pytest.mark.parametrize("changed", [True, False], ids=["prompt-changed", "prompt-same"])
async def test_resumed_session_gets_the_current_prompt(
    env: EnvFactory, tmp_path: Path, changed: bool
) -> None:
    settings: dict[str, Any] = {"provider": "local", "model": "m1", "session_store": "disk"}
    async with env(["first answer"], config=store(tmp_path)) as e:
        agent = await e.rt.agents.create(AgentId("writer"), system_prompt="Old prompt.", **settings)
        await agent.run("remember me")
        session_id = agent.session_id

    current = "New prompt." if changed else "Old prompt."
    async with env(["second answer"], config=store(tmp_path)) as e:
        resumed = await e.rt.agents.resume(
            session_id, agent_id=AgentId("writer"), system_prompt=current, **settings
        )
        await resumed.run("do you?")
        request = e.provider.requests[0]
        assert request.messages[0] == SystemMessage(text=current)
        # the substantive history is preserved
        assert request_texts(request)[1:] == [
            "user:remember me",
            "assistant:first answer",
            "user:do you?",
        ]
        assert heads(resumed) == (["Old prompt.", "New prompt."] if changed else ["Old prompt."])
        assert texts(resumed.session.derive_messages())[0] == f"system:{current}"
        assert [t.turn for t in events(resumed, "turn/start")] == [1, 2]
        check_invariant(resumed)
