"""200 simultaneous streaming clients on one server all complete.

A listener holds every run at its first model request until all 200 runs are in progress at
once, so the test shows 200 simultaneous runs without judging anything by the clock."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest
from server_support import KEY, RunningServer, scripted_config

import agentrig

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CLIENTS = 200
TEXT = "one two three four five six seven eight"


class Gate:
    """Holds each run before its model request until ``count`` runs are waiting."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.waiting = 0
        self.most = 0
        self._all: anyio.Event | None = None

    @agentrig.hookimpl
    async def request_config(self, payload: Any, next: Callable[[Any], Awaitable[Any]]) -> Any:
        if self._all is None:
            self._all = anyio.Event()
        self.waiting += 1
        self.most = max(self.most, self.waiting)
        if self.waiting >= self.count:
            self._all.set()
        await self._all.wait()
        return await next(payload)


@pytest.mark.anyio
async def test_two_hundred_simultaneous_streaming_clients_all_complete() -> None:
    gate = Gate(CLIENTS)
    settings = {
        "api_keys": ["$ENV:SERVER_KEY"],
        "rate_limit_per_minute": 100_000,
        "max_concurrent_per_key": CLIENTS,
        "agents": {"assistant": {"max_concurrent": CLIENTS}},
    }
    config = scripted_config([{"text": TEXT, "chunk_size": 4}])
    texts: list[str] = []
    with RunningServer(
        config, settings, environ={"SERVER_KEY": KEY}, plugins=[("gate", gate)]
    ) as srv:
        limits = httpx.Limits(max_connections=CLIENTS + 10, max_keepalive_connections=CLIENTS)
        async with httpx.AsyncClient(
            base_url=srv.base_url,
            headers={"authorization": f"Bearer {KEY}"},
            limits=limits,
            timeout=httpx.Timeout(120),
        ) as http:

            async def one(i: int) -> None:
                body = {
                    "model": "assistant",
                    "messages": [{"role": "user", "content": f"client {i}"}],
                    "stream": True,
                }
                parts: list[str] = []
                done = False
                async with http.stream("POST", "/v1/chat/completions", json=body) as response:
                    assert response.status_code == 200
                    async for line in response.aiter_lines():
                        if line == "data: [DONE]":
                            done = True
                        elif line.startswith("data: "):
                            chunk = json.loads(line[6:])
                            parts.append(chunk["choices"][0]["delta"].get("content") or "")
                assert done
                texts.append("".join(parts))

            async with anyio.create_task_group() as tg:
                for i in range(CLIENTS):
                    tg.start_soon(one, i)
    assert gate.most == CLIENTS
    assert texts == [TEXT] * CLIENTS
