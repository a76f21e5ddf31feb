"""Streamed chunks per second: the OpenAI adapter + the agent loop against httpx alone.

    python benchmarks/bench_stream.py [--quick] [--profile]

The same Chat Completions SSE body (a long answer of many small text deltas, served from
memory by ``httpx.MockTransport`` in 4 KiB pieces) is consumed two ways in one run:

* **value** -- ``agent.stream(...)`` of a runtime whose agent uses the installed ``openai``
  provider: SSE framing, JSON parsing, stream chunks, the loop's session log and the
  consumer's iteration;
* **floor** -- httpx alone: ``response.aiter_lines()`` and ``json.loads`` of each data line.

Both are reported as nanoseconds per delta (best of several interleaved runs); the ratio
target is 2.0.  Times are process CPU time: the body comes from memory (no I/O and no
waiting), so it differs from wall-clock time only by the time the process waits for a CPU
-- which on a shared machine is noise, not cost.  ``--profile`` prints a cProfile summary of
one agent run to stderr.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import compare, emit

import agentrig
from agentrig.llm import PROVIDERS

URL = "https://api.openai.com/v1/chat/completions"
PIECE = 4096


def sse_body(deltas: int) -> bytes:
    lines = []
    for i in range(deltas):
        chunk = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "delta": {"content": f"w{i % 10} "}, "finish_reason": None}],
        }
        lines.append(f"data: {json.dumps(chunk)}\n\n")
    end = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    lines.append(f"data: {json.dumps(end)}\n\n")
    lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


class MemoryBody(httpx.AsyncByteStream):
    def __init__(self, body: bytes) -> None:
        self.body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.body), PIECE):
            yield self.body[start : start + PIECE]


def transport(body: bytes) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=MemoryBody(body)
        )

    return httpx.MockTransport(handler)


async def floor_run(client: httpx.AsyncClient) -> int:
    count = 0
    async with client.stream("POST", URL, json={"stream": True}) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                data = line[6:]
                if data != "[DONE]":
                    json.loads(data)
                    count += 1
    return count


async def agent_run(agent: Any) -> int:
    count = 0
    async for chunk in agent.stream("go"):
        if chunk.type == "text_delta":
            count += 1
    return count


async def adapter_run(provider: Any) -> int:
    from agentrig.cancel import CancelSignal
    from agentrig.llm import ModelRequest, UserMessage

    request = ModelRequest(model="gpt-4o", messages=(UserMessage.of("go"),))
    count = 0
    async for chunk in provider.stream(request, signal=CancelSignal()):
        if chunk.type == "text_delta":
            count += 1
    return count


CONFIG: dict[str, Any] = {
    "plugins": {"autoload": False},
    "providers": {
        "openai": {
            "kind": "openai",
            "options": {"max_retries": 0},
            "credentials": {"api_key": "sk-bench"},
        }
    },
    "agents": {"bench": {"provider": "openai", "model": "gpt-4o"}},
}


async def main(quick: bool, profile: str | None) -> None:
    deltas = 2_000 if quick else 5_000
    repeats = 3 if quick else 7
    body = sse_body(deltas)
    mock = transport(body)
    async with (
        httpx.AsyncClient(transport=mock) as client,
        agentrig.open_runtime(CONFIG, environ={}, http_transport=mock) as rt,
    ):
        # A fresh agent per run keeps the history (and so the request) the same size.
        counter = 0

        async def fresh_agent() -> Any:
            nonlocal counter
            counter += 1
            return await rt.agents.create(f"bench-{counter}", provider="openai", model="gpt-4o")

        assert await floor_run(client) == deltas + 1  # + the finish chunk
        assert await agent_run(await fresh_agent()) == deltas  # warm-up
        provider = rt.catalog(PROVIDERS).require("openai")
        assert await adapter_run(provider) == deltas
        value = base = adapter = float("inf")
        for _ in range(repeats):
            agent = await fresh_agent()
            gc.collect()
            start = time.process_time_ns()
            await agent_run(agent)
            value = min(value, (time.process_time_ns() - start) / deltas)
            gc.collect()
            start = time.process_time_ns()
            await floor_run(client)
            base = min(base, (time.process_time_ns() - start) / deltas)
            gc.collect()
            start = time.process_time_ns()
            await adapter_run(provider)
            adapter = min(adapter, (time.process_time_ns() - start) / deltas)
        if profile:
            agent = await fresh_agent()
            profiler = cProfile.Profile()
            profiler.enable()
            await agent_run(agent)
            profiler.disable()
            stats = pstats.Stats(profiler, stream=sys.stderr)
            sort = "cumulative" if profile == "cumulative" else "tottime"
            stats.sort_stats(sort).print_stats(30)
    compare(
        "stream_openai_agent_vs_httpx",
        value,
        base,
        "ns/delta",
        2.0,
        deltas=deltas,
        floor_name="httpx aiter_lines + json.loads, same bytes",
    )
    compare(
        "stream_openai_adapter_vs_httpx",
        adapter,
        base,
        "ns/delta",
        2.0,
        deltas=deltas,
        floor_name="httpx aiter_lines + json.loads, same bytes",
        note="provider.stream() alone, without the agent loop (for attribution)",
    )
    emit("stream_openai_agent_rate", 1e9 / value, "deltas/s")
    emit("stream_httpx_floor_rate", 1e9 / base, "deltas/s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer deltas and runs (< 1 min)")
    parser.add_argument(
        "--profile",
        nargs="?",
        const="tottime",
        choices=["tottime", "cumulative"],
        help="cProfile one agent run (sorted by tottime or cumulative)",
    )
    args = parser.parse_args()
    anyio.run(main, args.quick, args.profile)
