"""The inbound API server against a bare Starlette endpoint on the same stack and client.

    python benchmarks/bench_server.py [--quick]

One uvicorn server (h11, in a process of its own) serves two things from one Starlette app:

* **value** -- ``POST /v1/chat/completions`` of ``agentrig-server``: admission (key, rate,
  slots), validation, a per-request agent on the scripted provider, the run, the rendering;
* **floor** -- ``POST /bare/...``: a bare Starlette endpoint returning the *same* JSON (or
  streaming the *same* SSE frames, one send per frame).

The client is one keep-alive ``httpx.Client`` for both, requests interleaved.  The scripted
provider hands each reply over as one buffer (``checkpoint = "reply"``, as a fast upstream
does), so the numbers measure the server, not a simulated network's pacing.  Reported: the
median time per non-streamed completion (target ratio 2.0) and the time per streamed token of
a long answer (target ratio 2.0).
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import compare, median

import agentrig

KEY = "sk-bench-0123456789"
TOKENS = 200
ANSWER = "".join(f"w{i % 10} " for i in range(TOKENS))  # 3 characters per token


def config() -> dict[str, Any]:
    return {
        "providers": {
            "short": {
                "kind": "scripted",
                "options": {
                    "script": [{"text": "Hello there!", "usage": {"prompt": 7, "completion": 3}}],
                    "on_exhausted": "repeat",
                    "checkpoint": "reply",
                },
            },
            "long": {
                "kind": "scripted",
                "options": {
                    "script": [
                        {
                            "text": ANSWER,
                            "chunk_size": 3,
                            "usage": {"prompt": 7, "completion": TOKENS},
                        }
                    ],
                    "on_exhausted": "repeat",
                    "checkpoint": "reply",
                },
            },
        },
        "agents": {
            "short": {"provider": "short", "model": "scripted-1"},
            "long": {"provider": "long", "model": "scripted-1"},
        },
    }


# the client's key is a named key with every rule of its own on (models, requests and tokens
# per minute, parallel requests, a token budget per period), so each request pays for the
# key checks and the spend ledger; the totals go to a temporary state directory
SETTINGS = {
    "api_keys": ["$ENV:OTHER_KEY"],
    "keys": {
        "bench": {
            "key": "$ENV:BENCH_KEY",
            "models": ["short", "long"],
            "rpm_limit": 10_000_000,
            "tpm_limit": 10**12,
            "max_parallel_requests": 1000,
            "max_budget_tokens": 10**15,
            "budget_duration": "30d",
        }
    },
    "rate_limit_per_minute": 10_000_000,
    "agents": {"short": {}, "long": {}},
}


async def serve() -> None:
    """The server process: the runtime, the app with the bare endpoints added, uvicorn."""
    import tempfile

    from agentrig_server import parse_settings

    resolver = agentrig.env_resolver({"BENCH_KEY": KEY, "OTHER_KEY": KEY + "-other"})
    with tempfile.TemporaryDirectory(prefix="bench-server-") as state:
        settings = parse_settings({**SETTINGS, "state_dir": state})
        await _serve(resolver, settings)


async def _serve(resolver: Any, settings: Any) -> None:
    import uvicorn
    from agentrig_server import create_app
    from agentrig_server._serve import _Server

    async with agentrig.open_runtime(config(), resolver=resolver, environ={}) as rt:
        app = await create_app(rt, settings)
        bare: dict[str, Any] = {}

        async def learn(request: Request) -> Response:
            bare.update(await request.json())  # {"json": ..., "frames": [...]}
            return JSONResponse({})

        async def bare_json(request: Request) -> Response:
            await request.body()
            return Response(bare["json"].encode(), media_type="application/json")

        async def bare_stream(request: Request) -> Response:
            await request.body()

            async def frames() -> Any:
                for frame in bare["frames"]:
                    yield frame.encode()

            return StreamingResponse(frames(), media_type="text/event-stream")

        app.router.routes.append(Route("/bare/learn", learn, methods=["POST"]))
        app.router.routes.append(Route("/bare/json", bare_json, methods=["POST"]))
        app.router.routes.append(Route("/bare/stream", bare_stream, methods=["POST"]))
        uv = uvicorn.Config(
            app, port=0, lifespan="off", log_level="warning", access_log=False, http="h11"
        )
        server = _Server(uv, lambda: print(server.bound[1], flush=True) if server.bound else None)
        await server.serve()


def timed(client: httpx.Client, path: str, body: dict[str, Any], stream: bool) -> float:
    start = time.perf_counter()
    if stream:
        with client.stream("POST", path, json=body) as response:
            for _ in response.iter_raw():
                pass
    else:
        client.post(path, json=body).read()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        anyio.run(serve, backend="asyncio")
        return
    rounds = 150 if args.quick else 1000
    stream_rounds = 20 if args.quick else 100
    # the server runs in a process of its own, so client and server never share a GIL
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        measure(port, rounds, stream_rounds)
    finally:
        process.terminate()
        process.wait(30)


def measure(port: int, rounds: int, stream_rounds: int) -> None:
    # TCP_NODELAY: without it the request body waits for the ACK of its headers (Nagle against
    # delayed ACK), and both sides measure the same 40 ms stall instead of the server
    nodelay = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    with httpx.Client(
        base_url=f"http://127.0.0.1:{port}",
        headers={"authorization": f"Bearer {KEY}"},
        timeout=60,
        transport=nodelay,
    ) as client:
        short = {"model": "short", "messages": [{"role": "user", "content": "Hi"}]}
        answer = client.post("/v1/chat/completions", json=short).text
        long = {"model": "long", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
        with client.stream("POST", "/v1/chat/completions", json=long) as response:
            body = response.read().decode()
        frames = [frame + "\n\n" for frame in body.split("\n\n") if frame]
        tokens = sum(1 for f in frames if '"content":"w' in f)
        assert tokens == TOKENS, tokens
        client.post("/bare/learn", json={"json": answer, "frames": frames})
        for _ in range(20):  # warm up both
            timed(client, "/v1/chat/completions", short, False)
            timed(client, "/bare/json", short, False)
        value, floor = [], []
        for _ in range(rounds):
            value.append(timed(client, "/v1/chat/completions", short, False))
            floor.append(timed(client, "/bare/json", short, False))
        compare(
            "chat completion, non-streamed, per request",
            median(value) * 1e6,
            median(floor) * 1e6,
            "us",
            2.0,
        )
        value, floor = [], []
        for _ in range(stream_rounds):
            value.append(timed(client, "/v1/chat/completions", long, True))
            floor.append(timed(client, "/bare/stream", long, True))
        compare(
            f"chat completion, streamed, per token ({TOKENS} tokens)",
            median(value) / TOKENS * 1e6,
            median(floor) / TOKENS * 1e6,
            "us",
            2.0,
        )


if __name__ == "__main__":
    main()
