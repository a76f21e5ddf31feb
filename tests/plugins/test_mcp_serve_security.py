"""``agentrig mcp serve`` against hostile callers (issue 28, points 12 and 13).

Over streamable HTTP a foreign ``Host`` (DNS rebinding) or ``Origin`` calls nothing, bearer
keys from ``[mcp.serve] api_keys`` guard the endpoint, a non-loopback bind needs them; and
each MCP client session asks its own session of an agent, concurrently with the others.
The server is a real process (or, where the test must see inside the runtime, a real uvicorn
on a loopback socket in this process); the clients are raw httpx and the SDK's own client.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from _mcp_support import SERVE_CONFIG, eventually, mcp_http_serve, mcp_session, run_cli
from mcp import ClientSession, MCPError, types
from mcp.client.streamable_http import streamable_http_client

import agentrig
from agentrig.tools import tool

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]

CONFIG = SERVE_CONFIG
KEY = "mcp-test-key-5f2c9a"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
JSON_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn


def config_file(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "agentrig.toml"
    path.write_text(CONFIG + extra)
    return path


def env(**more: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}, **more}


async def post(url: str, headers: Mapping[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.post(url, json=INITIALIZE, headers={**JSON_HEADERS, **headers})


FOREIGN_HOSTS = [
    "evil.example",
    "evil.example:{port}",
    "127.0.0.1.evil.example:{port}",
    "localhost.evil.example:{port}",
    "rebind.127.0.0.1.nip.io:{port}",
    "10.0.0.1:{port}",
    "0.0.0.0:{port}",
    "127.0.0.1:{other}",
    "localhost",
    "[2001:db8::1]:{port}",
]
FOREIGN_ORIGINS = [
    "http://evil.example",
    "https://evil.example:{port}",
    "null",
    "http://127.0.0.1:{other}",
    "http://localhost:{other}",
    "http://127.0.0.1:{port}.evil.example",
    "chrome-extension://abcdefghijklmnop",
    "file://",
]


async def test_a_foreign_host_or_origin_calls_nothing(tmp_path: Path) -> None:
    async with mcp_http_serve(config_file(tmp_path), env=env()) as (_process, url):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        for host in FOREIGN_HOSTS:
            value = host.format(port=port, other=port + 1)
            answer = await post(url, {"host": value})
            assert answer.status_code == 421, (value, answer.text)
        for origin in FOREIGN_ORIGINS:
            value = origin.format(port=port, other=port + 1)
            answer = await post(url, {"origin": value})
            assert answer.status_code == 403, (value, answer.text)
        # the server's own names and origin are served
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            answer = await post(url, {"host": host, "origin": f"http://{host}"})
            assert answer.status_code == 200, (host, answer.text)
        # the printed URL and its spelling with a slash both answer (no redirect), and the
        # server names agentrig's version
        for served in (url, url + "/"):
            answer = await post(served, {})
            assert answer.status_code == 200, (served, answer.text)
            assert f'"version":"{agentrig.__version__}"' in answer.text.replace(" ", "")
        # the SDK's client behind a re-bound name gets nowhere
        rebound = httpx2.AsyncClient(headers={"host": "evil.example"}, timeout=30)
        # the SDK's error for the 421 (checked raw above), raised through its task groups
        with pytest.raises((MCPError, BaseExceptionGroup)) as info:
            await initialize(rebound, url)
        error: BaseException = info.value
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]  # out of the client's task groups
        assert isinstance(error, MCPError), repr(info.value)


async def initialize(http: httpx2.AsyncClient, url: str) -> None:
    async with mcp_session(url, http):
        pass


async def test_configured_names_and_origins_are_served(tmp_path: Path) -> None:
    extra = (
        '\n[mcp.serve]\nallowed_hosts = ["agents.internal"]\n'
        'allowed_origins = ["https://ide.example"]\n'
    )
    async with mcp_http_serve(config_file(tmp_path, extra), env=env()) as (_process, url):
        for headers in (
            {"host": "agents.internal"},
            {"host": "agents.internal:8443"},
            {"origin": "https://ide.example"},
        ):
            answer = await post(url, headers)
            assert answer.status_code == 200, (headers, answer.text)
        assert (await post(url, {"origin": "https://ide.example:1"})).status_code == 403
        async with httpx.AsyncClient(timeout=30) as http:
            preflight = await http.options(
                url,
                headers={
                    "origin": "https://ide.example",
                    "access-control-request-method": "POST",
                    "access-control-request-headers": "content-type, authorization",
                },
            )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://ide.example"


KEYED = '\n[mcp.serve]\napi_keys = ["$ENV:MCP_SERVE_KEY"]\n'
WRONG_KEYS = [
    {},
    {"authorization": ""},
    {"authorization": "Bearer"},
    {"authorization": "Bearer null"},
    {"authorization": f"Basic {KEY}"},
    {"authorization": f"Bearer {KEY[:-1]}"},
    {"authorization": f"Bearer {KEY}x"},
    {"authorization": f"Bearer {KEY.upper()}"},
    {"x-api-key": KEY},
    {"authorization": KEY},
]


async def test_bearer_keys_guard_the_endpoint(tmp_path: Path) -> None:
    served = mcp_http_serve(config_file(tmp_path, KEYED), env=env(MCP_SERVE_KEY=KEY))
    async with served as (_process, url):
        for headers in WRONG_KEYS:
            answer = await post(url, headers)
            assert answer.status_code == 401, (headers, answer.text)
            assert answer.headers["www-authenticate"].startswith("Bearer")
        for scheme in ("Bearer", "bearer", "BEARER"):
            answer = await post(url, {"authorization": f"{scheme} {KEY}"})
            assert answer.status_code == 200, answer.text
        authorized = httpx2.AsyncClient(headers={"authorization": f"Bearer {KEY}"}, timeout=30)
        async with (
            authorized,
            streamable_http_client(url, http_client=authorized) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool("ask_assistant", {"prompt": "hi"})
            assert not result.is_error


async def test_a_deeply_nested_body_is_a_parse_error_not_a_500(tmp_path: Path) -> None:
    async with mcp_http_serve(config_file(tmp_path), env=env()) as (_process, url):
        async with httpx.AsyncClient(timeout=30) as http:
            for depth in (101, 500, 1_000, 5_000, 100_000):
                for inner in ('{"a":' * depth + "1" + "}" * depth, "[" * depth + "]" * depth):
                    body = json.dumps({**INITIALIZE, "params": None}).replace("null", inner)
                    answer = await http.post(url, content=body, headers=JSON_HEADERS)
                    assert answer.status_code == 400, (depth, answer.text[:200])
                    assert answer.json()["error"]["code"] == -32700
        # the server is unharmed: a client connects and asks
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            nested: object = "x"
            for _ in range(40):  # deep, but within the bound
                nested = {"n": nested}
            result = await session.call_tool("ask_assistant", {"prompt": "hi", "extra": nested})
            assert result.is_error  # refused by the tool's schema, as any bad argument
            assert not (await session.call_tool("ask_assistant", {"prompt": "hi"})).is_error


async def test_a_non_loopback_bind_needs_keys_and_keys_are_references(tmp_path: Path) -> None:
    config = config_file(tmp_path)
    for host in ("0.0.0.0:0", "[::]:0", "192.0.2.1:0"):
        code, err = await run_cli("mcp", "serve", "-c", str(config), "--http", host, environ=env())
        assert code == 1, err
        (line,) = err.splitlines()
        assert line.startswith("agentrig mcp: error [mcp.unauthenticated_bind]: ")
    literal = config_file(tmp_path, '\n[mcp.serve]\napi_keys = ["sk-live-oops-123"]\n')
    code, err = await run_cli(
        "mcp", "serve", "-c", str(literal), "--http", "127.0.0.1:0", environ=env()
    )
    assert code == 1
    assert "mcp.serve" in err
    assert "sk-live-oops-123" not in err  # a key typed in by mistake is never echoed
    missing = config_file(tmp_path, KEYED)
    code, err = await run_cli(
        "mcp", "serve", "-c", str(missing), "--http", "127.0.0.1:0", environ=env()
    )
    assert code == 1
    assert "mcp.serve.api_keys" in err
    # with keys, a wildcard address is served
    keyed = mcp_http_serve(missing, host="0.0.0.0", env=env(MCP_SERVE_KEY=KEY))
    async with keyed as (_process, url):
        answer = await post(url.replace("0.0.0.0", "127.0.0.1"), {"authorization": f"Bearer {KEY}"})
        assert answer.status_code == 200, answer.text


# ---- one client's conversation is never another's (in this process, to look inside) ------

MET: dict[str, Any] = {}


@tool(risk="inspect")
async def meet(who: str) -> str:
    """Wait until two callers are here at once (serialised clients never meet)."""
    arrived: anyio.Event = MET["event"]
    MET["count"] += 1
    if MET["count"] >= 2:
        arrived.set()
    with anyio.fail_after(20):
        await arrived.wait()
    return f"{who} met"


MEET = {"tool_calls": [{"name": "meet", "arguments": {"who": "x"}}]}
RUNTIME: dict[str, Any] = {
    "providers": {
        "local": {
            "kind": "scripted",
            "options": {
                "script": [MEET, MEET, {"text": "done"}, {"text": "done"}, {"text": "again"}],
                "on_exhausted": "repeat",
            },
        }
    },
    "agents": {"assistant": {"provider": "local", "model": "scripted-1", "tools": ["meet"]}},
}


@pytest.fixture
async def served() -> AsyncIterator[tuple[agentrig.Runtime, str]]:
    from agentrig_mcp._serve import build_server, serve_http

    MET.update(event=anyio.Event(), count=0)
    memory = agentrig.MemorySource()
    memory.add("tools", "meet", meet)
    async with agentrig.open_runtime(RUNTIME, memory=memory) as rt:
        listening: list[str] = []
        started = anyio.Event()

        def announce(url: str) -> None:
            listening.append(url)
            started.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(
                lambda: serve_http(build_server(rt), "127.0.0.1", 0, on_listening=announce)
            )
            with anyio.fail_after(30):
                await started.wait()
            yield rt, listening[0]
            tg.cancel_scope.cancel()


def text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def ask(url: str, prompts: list[str], answers: list[str]) -> None:
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for prompt in prompts:
            result = await session.call_tool("ask_assistant", {"prompt": prompt})
            assert not result.is_error, text(result)
            answers.append(text(result))


def user_texts(request: Any) -> list[str]:
    return [
        block.text
        for message in request.messages
        if message.role == "user"
        for block in message.content
        if getattr(block, "text", None)
    ]


async def test_each_client_has_its_own_conversation_and_clients_run_at_once(
    served: tuple[agentrig.Runtime, str],
) -> None:
    from agentrig.ids import ProviderId
    from agentrig.plugin import PROVIDERS

    rt, url = served
    answers: list[str] = []
    async with anyio.create_task_group() as tg:
        # both first asks call `meet`, which returns only when both are in it at once
        tg.start_soon(ask, url, ["secret of client A", "and then?"], answers)
        tg.start_soon(ask, url, ["question of client B"], answers)
    assert sorted(answers) == ["again", "done", "done"]
    provider: Any = rt.catalog(PROVIDERS).get(ProviderId("local"))
    for request in provider.requests:
        seen = " | ".join(user_texts(request))
        assert not ("client A" in seen and "client B" in seen), seen
    follow_up = [r for r in provider.requests if "and then?" in user_texts(r)]
    assert follow_up  # client A's second ask continues client A's conversation
    assert "secret of client A" in user_texts(follow_up[0])
    # the client sessions ended: their agents are gone, the configured one stays
    await eventually(lambda: not [a for a in rt.agents.ids() if ".mcp-" in a], 10)
    assert json.dumps(sorted(rt.agents.ids())) == '["assistant"]'
