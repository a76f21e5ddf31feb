"""End to end: a runtime whose provider is ``openai-responses`` talks to a second runtime served
by ``agentrig serve`` (its ``/v1/responses``), and completes runs in which the served agent
uses a tool.

The served agent reads a file with the workspace ``Read`` tool (server-side: the client sees
it as an ``mcp_call`` output item, kept as provider state); the second run continues the
first with ``previous_response_id`` (``store = true``) and sends only the new user message.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import signal
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from test_server_cli import agentrig_command, environment, listening_line

import agentrig
from agentrig.cancel import CancelSignal
from agentrig.ids import provider_id
from agentrig.llm import ModelRequest, ProviderStateBlock, UserMessage
from agentrig.plugin import PROVIDERS

pytestmark = [pytest.mark.subprocess, pytest.mark.integration]

KEY = "sk-served"

SERVED = """
[providers.local]
kind = "scripted"
options.on_exhausted = "repeat"
# by round (tool calls so far in the conversation): every new conversation reads the file
options.rounds = [
  { tool_calls = [{ name = "Read", arguments = { file_path = "notes.txt" } }] },
  { text = "The launch is on Friday.", usage = { prompt = 30, completion = 6 } },
]

[agents.assistant]
provider = "local"
model = "scripted-demo"
tools = ["Read"]

[permissions]
workspace = "{workspace}"

[server]
host = "127.0.0.1"
api_keys = ["$ENV:SERVER_KEY"]

[server.agents.assistant]
max_run_seconds = 30
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``agentrig serve`` on a free loopback port; yields its base URL."""
    root = tmp_path_factory.mktemp("served")
    (root / "notes.txt").write_text("the launch is on Friday\n")
    config = root / "agentrig.toml"
    config.write_text(SERVED.replace("{workspace}", str(root)))
    process = subprocess.Popen(
        [*agentrig_command(), "serve", "-c", str(config), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**environment(), "SERVER_KEY": KEY},
    )
    watchdog = threading.Timer(120, process.kill)  # a server that never listens fails
    watchdog.start()
    try:
        line = listening_line(process)
        watchdog.cancel()
        found = re.fullmatch(r"agentrig serve: listening on (http://127\.0\.0\.1:\d+)\n", line)
        assert found is not None, line
        yield found[1]
    finally:
        watchdog.cancel()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


class Recording(httpx.AsyncBaseTransport):
    """The real transport, keeping each request body the client runtime sends."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.bodies: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        content = await request.aread()
        if content:
            self.bodies.append(json.loads(content))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _client_config(base_url: str, *, store: bool) -> dict[str, Any]:
    return {
        "providers": {
            "served": {
                "kind": "openai-responses",
                "credentials": {"api_key": "$ENV:SERVER_KEY"},
                "options": {
                    "base_url": f"{base_url}/v1",
                    "allow_private_base_url": True,
                    "transport": "http",  # agentrig's server has no WebSocket mode
                    "store": store,
                },
            }
        },
        "agents": {"client": {"provider": "served", "model": "assistant"}},
    }


def _client(
    served: str, recording: Recording, *, store: bool
) -> contextlib.AbstractAsyncContextManager[agentrig.Runtime]:
    """The client runtime, its provider talking to ``served`` through ``recording``."""
    return agentrig.open_runtime(
        _client_config(served, store=store),
        resolver=agentrig.env_resolver({"SERVER_KEY": KEY}),
        http_transport=recording,
        environ={},
    )


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True])
async def test_a_client_runtime_runs_a_served_agent_that_uses_a_tool(
    served: str, stream: bool
) -> None:
    recording = Recording()
    tag = secrets.token_hex(4)  # a conversation of its own on the module's server
    async with _client(served, recording, store=True) as rt:
        agent = rt.agent("client")
        if stream:
            chunks = [chunk async for chunk in agent.stream(f"When is the launch? ({tag})")]
            assert chunks
            second = await agent.run("And again?")
        else:
            first = await agent.run(f"When is the launch? ({tag})")
            assert first.value == "The launch is on Friday."
            second = await agent.run("And again?")
        assert second.value == "The launch is on Friday."
        assert second.invocation.usage is not None
    one, two = recording.bodies
    assert one["store"] is True
    assert "previous_response_id" not in one
    assert two["previous_response_id"].startswith("resp_")
    assert [item["role"] for item in two["input"]] == ["user"]  # only the new message


@pytest.mark.anyio
async def test_the_served_tool_call_is_kept_as_provider_state(served: str) -> None:
    async with agentrig.open_runtime(
        _client_config(served, store=False),
        resolver=agentrig.env_resolver({"SERVER_KEY": KEY}),
        environ={},
    ) as rt:
        provider = rt.catalog(PROVIDERS).require(provider_id("served"))
        # a question of its own: the served agent's round counts its conversation's tool calls
        question = f"When is the launch? ({secrets.token_hex(4)})"
        request = ModelRequest(model="assistant", messages=(UserMessage.of(question),))
        answer = await provider.complete(request, signal=CancelSignal())
    message = answer.message
    assert message.text == "The launch is on Friday."
    assert message.stop_reason == "end"
    reads = [
        b.data
        for b in message.content
        if isinstance(b, ProviderStateBlock) and b.data["type"] == "mcp_call"
    ]
    assert [(c["name"], c["server_label"]) for c in reads] == [("Read", "agentrig")]
    assert "Friday" in reads[0]["output"]  # the workspace file was read server-side


@pytest.mark.anyio
async def test_without_store_the_second_run_sends_the_whole_conversation_back(served: str) -> None:
    """``store = false``: nothing is kept on the server, so the client runtime sends every
    earlier item again -- the served tool call's ``mcp_call`` item among them -- and the
    server takes it as the conversation's history."""
    recording = Recording()
    tag = secrets.token_hex(4)
    async with _client(served, recording, store=False) as rt:
        agent = rt.agent("client")
        assert (await agent.run(f"When is the launch? ({tag})")).value == "The launch is on Friday."
        second = await agent.run("And again?")
    # the served agent's conversation already holds its Read call, so it answers at once
    assert second.value == "The launch is on Friday."
    assert len(recording.bodies) == 2
    two = recording.bodies[1]
    assert "previous_response_id" not in two
    kinds = [item.get("type", "message") for item in two["input"]]
    assert kinds == ["message", "mcp_call", "message", "message"]
    assert two["input"][1]["name"] == "Read"
