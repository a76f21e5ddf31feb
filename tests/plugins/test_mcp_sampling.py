"""MCP sampling: a server built with the official SDK (FastMCP's ``ctx.session.create_message``)
asks the agent's model, in the middle of the agent's tool call, over stdio.

Offered only when ``mcp_servers.<name>.sampling`` says so (the capability is advertised then
only); the request goes through the calling agent's provider, output limit, signal and
budget (``request_config``), its usage counts in the run; ``ask`` goes to the approver and
no answer denies; outside an agent's call there is nobody to charge, so it is refused.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from _mcp_support import tool_ctx
from agentrig_mcp import MCP

import agentrig
from agentrig.agent import Agent
from agentrig.ids import AgentId
from agentrig.lifecycle import PermissionQuestion, RequestConfig
from agentrig.llm import Usage
from agentrig.session import event_usage
from agentrig.testing import Reply, ScriptedCall, ScriptedProvider

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]

ASKING = str(Path(__file__).with_name("_mcp_asking_server.py"))


def config(**server: Any) -> dict[str, Any]:
    return {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {
            "assistant": {
                "provider": "local",
                "model": "scripted-1",
                "tools": ["mcp__asking"],
                "max_tokens": 300,
            }
        },
        "mcp_servers": {
            "asking": {"command": sys.executable, "args": [ASKING], "trust_content": True, **server}
        },
        "permissions": {"allow": ["mcp__asking__*"]},
    }


def opened(provider: ScriptedProvider, **server: Any) -> Any:
    return agentrig.open_runtime(config(**server), overrides=[("providers", "local", provider)])


def call(tool: str, usage: Usage | None = None, **arguments: Any) -> Reply:
    return Reply(tool_calls=(ScriptedCall(tool, arguments),), usage=usage)


def summarize(max_tokens: int = 100_000, usage: Usage | None = None) -> Reply:
    return call("mcp__asking__summarize", usage, text="a long story", max_tokens=max_tokens)


def tool_results(rt: agentrig.Runtime) -> list[str]:
    messages = rt.agent(AgentId("assistant")).session.derive_messages()
    return [m.text for m in messages if m.role == "tool"]


async def test_capabilities_are_advertised_only_as_configured() -> None:
    provider = ScriptedProvider([call("mcp__asking__client_capabilities"), "ok"])
    async with opened(provider) as rt:
        await rt.agent(AgentId("assistant")).run("go")
        default = json.loads(tool_results(rt)[0])
    assert default == {"sampling": False, "elicitation": True}
    provider = ScriptedProvider([call("mcp__asking__client_capabilities"), "ok"])
    async with opened(provider, sampling="allow", elicitation=False) as rt:
        await rt.agent(AgentId("assistant")).run("go")
        configured = json.loads(tool_results(rt)[0])
    assert configured == {"sampling": True, "elicitation": False}


async def test_an_allowed_request_is_the_agents_model_call_and_counts_in_the_run() -> None:
    provider = ScriptedProvider(
        [
            summarize(),
            Reply(text="A story, short.", usage=Usage.of(40, 6)),
            Reply(text="done", usage=Usage.of(90, 2)),
        ]
    )
    async with opened(provider, sampling="allow") as rt:
        agent = rt.agent(AgentId("assistant"))
        result = await agent.run("summarize it")
        (answer,) = tool_results(rt)
        (logged,) = [e.data for e in agent.session.events if e.type == "model/side-call"]
        history = [m.text for m in agent.session.derive_messages()]
    assert answer == "model=scripted-1 stop=endTurn text=A story, short."
    assert (logged.source, logged.provider, logged.model) == ("mcp:asking", "local", "scripted-1")
    assert event_usage(logged) == Usage.of(40, 6)
    assert result.invocation.side_usage == Usage.of(40, 6)
    assert result.invocation.usage == Usage.of(130, 8)  # the rounds' and the sampling's
    assert not any("Summarize: a long story" in text for text in history)


class Budget:
    """Stops the run once ``budget`` tokens were logged, before the next model call (as the
    served API's token budget does), and keeps the output limit each call was chosen with."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.agent: Agent | None = None

    @agentrig.hookimpl
    async def request_config(
        self, payload: RequestConfig, next: Callable[[RequestConfig], Awaitable[RequestConfig]]
    ) -> RequestConfig:
        agent = self.agent
        assert agent is not None
        usages = [event_usage(e.data) for e in agent.session.events]
        used = sum(usage.total for usage in usages if usage is not None)
        signal = agent.current_signal
        if used >= self.budget and signal is not None:
            signal.cancel(f"the run used its token budget ({used} tokens)")
        return await next(payload)


async def test_the_run_budget_holds_for_sampling() -> None:
    provider = ScriptedProvider([summarize(usage=Usage.of(500, 10)), "never sent"])
    budget = Budget(400)
    async with opened(provider, sampling="allow") as rt:
        rt.add_plugin("budget", budget)
        agent = budget.agent = rt.agent(AgentId("assistant"))
        result = await agent.run("summarize it")
        events = [e.type for e in agent.session.events]
    assert result.interrupted  # the budget stopped the run at the sampling request
    assert "model/side-call" not in events
    assert len(provider.requests) == 1  # only the round went out


async def test_the_output_limit_is_the_smallest_of_the_three() -> None:
    provider = ScriptedProvider([summarize(max_tokens=50), "short", "done"])
    async with opened(provider, sampling="allow") as rt:
        await rt.agent(AgentId("assistant")).run("go")
    assert [r.max_tokens for r in provider.requests] == [300, 50, 300]  # the server's 50
    provider = ScriptedProvider([summarize(max_tokens=10_000), "short", "done"])
    async with opened(provider, sampling="allow", sampling_max_tokens=120) as rt:
        await rt.agent(AgentId("assistant")).run("go")
    assert [r.max_tokens for r in provider.requests] == [300, 120, 300]  # the config's cap
    provider = ScriptedProvider([summarize(max_tokens=10_000), "short", "done"])
    async with opened(provider, sampling="allow") as rt:
        await rt.agent(AgentId("assistant")).run("go")
    assert [r.max_tokens for r in provider.requests] == [300, 300, 300]  # the agent's


class Approver:
    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.questions: list[PermissionQuestion] = []

    @agentrig.hookimpl
    def permission_approver(self, payload: PermissionQuestion) -> object:
        self.questions.append(payload)
        return self.answer


async def test_ask_goes_to_the_approver_and_no_answer_denies() -> None:
    provider = ScriptedProvider([summarize(), "done"])
    async with opened(provider, sampling="ask") as rt:
        await rt.agent(AgentId("assistant")).run("go")
        (refused,) = tool_results(rt)
    assert refused.startswith("refused: the user did not approve the sampling request")
    assert "(code -1)" in refused

    approver = Approver("allow")
    provider = ScriptedProvider([summarize(), "The gist.", "done"])
    async with opened(provider, sampling="ask") as rt:
        rt.add_plugin("approver", approver)
        await rt.agent(AgentId("assistant")).run("go")
        (answer,) = tool_results(rt)
    assert answer == "model=scripted-1 stop=endTurn text=The gist."
    (question,) = approver.questions
    assert question.tool == "mcp__asking__sampling"
    assert question.arguments["messages"] == ["user: Summarize: a long story"]
    assert question.arguments["system"] == "You summarize."
    assert "sampling = 'ask'" in question.reason

    denier = Approver("deny")
    provider = ScriptedProvider([summarize(), "done"])
    async with opened(provider, sampling="ask") as rt:
        rt.add_plugin("approver", denier)
        await rt.agent(AgentId("assistant")).run("go")
        (refused,) = tool_results(rt)
    assert refused.startswith("refused: the user did not approve")


async def test_allow_for_the_session_is_kept_for_the_agent() -> None:
    approver = Approver(("allow", "remember", "mcp__asking__sampling"))  # the CLI's `a`
    provider = ScriptedProvider([summarize(), "first", summarize(), "second", "done"])
    async with opened(provider, sampling="ask") as rt:
        rt.add_plugin("approver", approver)
        await rt.agent(AgentId("assistant")).run("go")
        answers = tool_results(rt)
    assert [a.rsplit("=", 1)[-1] for a in answers] == ["first", "second"]
    assert len(approver.questions) == 1  # not asked again


async def test_off_is_refused_and_outside_an_agents_call_there_is_nobody_to_charge() -> None:
    provider = ScriptedProvider([summarize(), "done"])
    async with opened(provider) as rt:
        await rt.agent(AgentId("assistant")).run("go")
        (refused,) = tool_results(rt)
    assert refused.startswith("refused:")  # not offered: refused, nothing sent to a model
    assert len(provider.requests) == 2

    provider = ScriptedProvider(["never sent"])
    async with opened(provider, sampling="allow") as rt:
        client = rt.services.require(MCP)
        (tool,) = [t for t in await client.tools("asking") if t.id.endswith("summarize")]
        out = await tool.execute({"text": "x", "max_tokens": 10}, tool_ctx())
    assert "only during one agent's tool call" in out.content
    assert "no agent's tool call is in flight" in out.content
    assert provider.requests == []
