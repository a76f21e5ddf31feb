"""Streamed chunks per second: the OpenAI adapters + the agent loop against httpx alone.

    python benchmarks/bench_stream.py [--quick] [--profile]

The same Chat Completions SSE body (a long answer of many small text deltas, served from
memory by ``httpx.MockTransport`` in 4 KiB pieces) is consumed two ways in one run (and the
same again for a Responses API body -- ``event:`` lines, ``response.output_text.delta``
events -- through the ``openai-responses`` provider over HTTP, against its own floor):

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
RESPONSES_URL = "https://api.openai.com/v1/responses"
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


def _event(kind: str, number: int, **fields: Any) -> str:
    data = json.dumps({"type": kind, **fields, "sequence_number": number})
    return f"event: {kind}\ndata: {data}\n\n"


def responses_body(deltas: int) -> bytes:
    """A Responses API stream of one message answered in ``deltas`` text deltas."""
    item = {"type": "message", "id": "msg_bench", "status": "in_progress", "role": "assistant"}
    response: dict[str, Any] = {
        "id": "resp_bench",
        "object": "response",
        "status": "in_progress",
        "model": "gpt-5-mini-2025-08-07",
        "output": [],
    }
    where = {"item_id": "msg_bench", "output_index": 0, "content_index": 0}
    part = {"type": "output_text", "text": "", "annotations": []}
    lines = [
        _event("response.created", 0, response=response),
        _event("response.in_progress", 1, response=response),
        _event("response.output_item.added", 2, output_index=0, item={**item, "content": []}),
        _event("response.content_part.added", 3, **where, part=part),
    ]
    text = []
    for i in range(deltas):
        text.append(f"w{i % 10} ")
        lines.append(
            _event("response.output_text.delta", 4 + i, **where, delta=text[-1], logprobs=[])
        )
    done = {**part, "text": "".join(text)}
    message = {**item, "status": "completed", "content": [done]}
    final = {**response, "status": "completed", "output": [message]}
    final["usage"] = {"input_tokens": 5, "output_tokens": deltas, "total_tokens": deltas + 5}
    n = 4 + deltas
    lines += [
        _event("response.output_text.done", n, **where, text=done["text"], logprobs=[]),
        _event("response.content_part.done", n + 1, **where, part=done),
        _event("response.output_item.done", n + 2, output_index=0, item=message),
        _event("response.completed", n + 3, response=final),
    ]
    return "".join(lines).encode()


class MemoryBody(httpx.AsyncByteStream):
    def __init__(self, body: bytes) -> None:
        self.body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.body), PIECE):
            yield self.body[start : start + PIECE]


def transport(body: bytes, responses: bytes) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        served = responses if request.url.path.endswith("/responses") else body
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=MemoryBody(served)
        )

    return httpx.MockTransport(handler)


async def floor_run(client: httpx.AsyncClient, url: str = URL) -> int:
    count = 0
    async with client.stream("POST", url, json={"stream": True}) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                data = line[6:]
                if data != "[DONE]":
                    json.loads(data)
                    count += 1
            # (a Responses stream's "event:" lines are read and skipped, as any client does)
    return count


async def agent_run(agent: Any) -> int:
    count = 0
    async for chunk in agent.stream("go"):
        if chunk.type == "text_delta":
            count += 1
    return count


async def adapter_run(provider: Any, model: str = "gpt-4o") -> int:
    from agentrig.cancel import CancelSignal
    from agentrig.llm import ModelRequest, UserMessage

    request = ModelRequest(model=model, messages=(UserMessage.of("go"),))
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
        },
        "responses": {
            "kind": "openai-responses",
            "options": {"max_retries": 0, "transport": "http"},
            "credentials": {"api_key": "sk-bench"},
        },
    },
    "agents": {"bench": {"provider": "openai", "model": "gpt-4o"}},
}


async def measure(
    rt: Any, client: httpx.AsyncClient, provider_id: str, model: str, url: str, sizes: Any
) -> tuple[float, float, float, Any]:
    """(agent, floor, adapter) ns per delta, best of ``repeats``; and a fresh-agent maker."""
    deltas, repeats = sizes
    counter = 0

    # A fresh agent per run keeps the history (and so the request) the same size.
    async def fresh_agent() -> Any:
        nonlocal counter
        counter += 1
        name = f"bench-{provider_id}-{counter}"
        return await rt.agents.create(name, provider=provider_id, model=model)

    assert await floor_run(client, url) >= deltas
    assert await agent_run(await fresh_agent()) == deltas  # warm-up
    provider = rt.catalog(PROVIDERS).require(provider_id)
    assert await adapter_run(provider, model) == deltas
    value = base = adapter = float("inf")
    for _ in range(repeats):
        agent = await fresh_agent()
        gc.collect()
        start = time.process_time_ns()
        await agent_run(agent)
        value = min(value, (time.process_time_ns() - start) / deltas)
        gc.collect()
        start = time.process_time_ns()
        await floor_run(client, url)
        base = min(base, (time.process_time_ns() - start) / deltas)
        gc.collect()
        start = time.process_time_ns()
        await adapter_run(provider, model)
        adapter = min(adapter, (time.process_time_ns() - start) / deltas)
    return value, base, adapter, fresh_agent


def report(prefix: str, api: str, value: float, base: float, adapter: float, deltas: int) -> None:
    floor = f"httpx aiter_lines + json.loads, same bytes ({api})"
    compare(
        f"stream_{prefix}_agent_vs_httpx",
        value,
        base,
        "ns/delta",
        2.0,
        deltas=deltas,
        floor_name=floor,
    )
    compare(
        f"stream_{prefix}_adapter_vs_httpx",
        adapter,
        base,
        "ns/delta",
        2.0,
        deltas=deltas,
        floor_name=floor,
        note="provider.stream() alone, without the agent loop (for attribution)",
    )


async def main(quick: bool, profile: str | None) -> None:
    deltas = 2_000 if quick else 5_000
    sizes = (deltas, 3 if quick else 7)
    mock = transport(sse_body(deltas), responses_body(deltas))
    async with (
        httpx.AsyncClient(transport=mock) as client,
        agentrig.open_runtime(CONFIG, environ={}, http_transport=mock) as rt,
    ):
        value, base, adapter, fresh_agent = await measure(
            rt, client, "openai", "gpt-4o", URL, sizes
        )
        responses = await measure(rt, client, "responses", "gpt-5-mini", RESPONSES_URL, sizes)
        if profile:
            agent = await fresh_agent()
            profiler = cProfile.Profile()
            profiler.enable()
            await agent_run(agent)
            profiler.disable()
            stats = pstats.Stats(profiler, stream=sys.stderr)
            sort = "cumulative" if profile == "cumulative" else "tottime"
            stats.sort_stats(sort).print_stats(30)
    report("openai", "Chat Completions", value, base, adapter, deltas)
    report("responses", "Responses", *responses[:3], deltas)
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
