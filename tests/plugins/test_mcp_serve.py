"""agentrig served over MCP (``build_server``), consumed by the SDK's own ``ClientSession``:
tools through the same permissions, agents as ``ask_<agent>`` tools."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from agentrig_mcp._serve import build_server
from mcp import ClientSession, types
from mcp.client import Client

import agentrig
from agentrig.cancel import CancelSignal
from agentrig.errors import ConfigError
from agentrig.tools import tool

pytestmark = pytest.mark.anyio


@tool(risk="inspect")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(risk="execute")
def wipe(path: str) -> str:
    """Delete everything under a path."""
    return f"wiped {path}"


@tool(risk="inspect")
def stop() -> str:
    """Stopped by its user while it ran."""
    signal = CancelSignal()
    signal.cancel("the user pressed stop")
    raise signal.abort_error()


CONFIG: dict[str, Any] = {
    "providers": {
        "local": {"kind": "scripted", "options": {"script": [{"text": "The answer is 42."}]}}
    },
    "agents": {
        "assistant": {"provider": "local", "model": "scripted-1", "tools": ["add", "wipe", "stop"]},
        "other": {"provider": "local", "model": "scripted-1"},
    },
    "permissions": {"deny": ["wipe"]},
}


@pytest.fixture
async def runtime() -> AsyncIterator[agentrig.Runtime]:
    memory = agentrig.MemorySource()
    memory.add("tools", "add", add)
    memory.add("tools", "wipe", wipe)
    memory.add("tools", "stop", stop)
    async with agentrig.open_runtime(CONFIG, memory=memory) as rt:
        yield rt


@asynccontextmanager
async def session_for(
    rt: agentrig.Runtime, agents: list[str] | None = None
) -> AsyncIterator[ClientSession]:
    """The SDK's client session to the server in memory, over JSON-RPC (the handshake era)."""
    async with Client(build_server(rt, agents), mode="legacy") as client:
        yield client.session


def text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def test_tools_and_agents_are_listed(runtime: agentrig.Runtime) -> None:
    async with session_for(runtime) as session:
        assert isinstance(session, ClientSession)
        listed = {t.name: t for t in (await session.list_tools()).tools}
    assert set(listed) == {"add", "wipe", "stop", "ask_assistant", "ask_other"}
    assert listed["add"].annotations is not None
    assert listed["add"].annotations.read_only_hint is True
    assert listed["wipe"].annotations is not None
    assert listed["wipe"].annotations.destructive_hint is True
    assert listed["add"].input_schema["properties"].keys() == {"a", "b"}
    assert listed["ask_assistant"].input_schema["required"] == ["prompt"]


async def test_tool_calls_go_through_permissions(runtime: agentrig.Runtime) -> None:
    async with session_for(runtime) as session:
        added = await session.call_tool("add", {"a": 2, "b": 3})
        assert not added.is_error
        assert text(added) == "5"
        denied = await session.call_tool("wipe", {"path": "/"})
        assert denied.is_error
        assert "wiped" not in text(denied)
        invalid = await session.call_tool("add", {"a": "two"})
        assert invalid.is_error


async def test_ask_tool_runs_the_agent(runtime: agentrig.Runtime) -> None:
    async with session_for(runtime, ["assistant"]) as session:
        names = {t.name for t in (await session.list_tools()).tools}
        assert names == {"add", "wipe", "stop", "ask_assistant"}
        answer = await session.call_tool("ask_assistant", {"prompt": "What is 6 x 7?"})
    assert not answer.is_error
    assert text(answer) == "The answer is 42."


async def test_unknown_agent_is_refused_with_a_suggestion(runtime: agentrig.Runtime) -> None:
    with pytest.raises(ConfigError, match="did you mean 'assistant'"):
        build_server(runtime, ["asistant"])


async def test_the_server_says_agentrigs_version(runtime: agentrig.Runtime) -> None:
    options = build_server(runtime).create_initialization_options()
    assert options.server_version == agentrig.__version__


async def test_a_cancelled_tool_says_aborted_once(runtime: agentrig.Runtime) -> None:
    async with session_for(runtime, ["assistant"]) as session:
        stopped = await session.call_tool("stop", {})
    assert stopped.is_error
    assert text(stopped) == "aborted: the user pressed stop"


async def test_an_http_sessions_agents_end_after_the_sdks_idle_timeout() -> None:
    """Over HTTP each MCP session asks its own agents; a session the SDK ended for being
    idle has its agents disposed by the next request (and every one on the stop)."""
    import httpx
    from agentrig_mcp._serve_clients import PerSessionAgents, ask

    script = {"script": [{"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "4"}]}
    config = {
        "providers": {"local": {"kind": "scripted", "options": script}},
        "agents": {"assistant": {"provider": "local", "model": "scripted-1"}},
    }
    async with agentrig.open_runtime(config) as rt:
        opened: list[str] = []

        async def sdk(scope: Any, receive: Any, send: Any) -> None:
            # the SDK's part: a request without a session opens one; each asks the agent
            session = dict(scope["headers"]).get(b"mcp-session-id", b"").decode()
            if not session:
                session = f"s{len(opened)}"
                opened.append(session)
            await ask(rt, rt.agent("assistant"), "hi", CancelSignal())
            headers = [(b"mcp-session-id", session.encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b""})

        def per_session() -> list[str]:
            return [a for a in rt.agents.ids() if ".mcp-" in a]

        async def requests(sessions: PerSessionAgents, *asked: str) -> None:
            transport = httpx.ASGITransport(app=sessions)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
                for session in asked:
                    headers = {"mcp-session-id": session} if session else {}
                    assert (await http.post("/mcp", headers=headers)).status_code == 200

        kept = PerSessionAgents(sdk, rt, idle=3600.0)
        await requests(kept, "", "s0")  # s0 opened, then asked again
        (first,) = per_session()  # one session, one agent, asked twice
        await kept.aclose()  # the server stops: every session's agents end
        assert per_session() == []
        expiring = PerSessionAgents(sdk, rt, idle=0.0)  # every session is past the timeout
        await requests(expiring, "")  # s1
        (second,) = per_session()
        await requests(expiring, "")  # s2: s1 was idle, its agents end
        (third,) = per_session()
        assert len({first, second, third}) == 3
        await expiring.aclose()
        assert per_session() == []
