"""Serve the example agent on a free loopback port and call it the way any client would.

    python examples/serve/run.py

Offline: the agent's model is the built-in ``scripted`` provider.  The server is the same one
``agentrig serve -c examples/serve/agentrig.toml`` starts; here it runs in-process on port 0
so the example never collides with anything.  The calls use plain httpx, so they show the
wire format; docs/server.md shows the same calls through the OpenAI and Anthropic SDKs.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import anyio
import httpx
from agentrig_server import AgentServer

import agentrig

HERE = Path(__file__).resolve().parent
QUESTION = [{"role": "user", "content": "What is 2 + 3?"}]


async def calls(http: httpx.AsyncClient) -> None:
    print("GET /v1/models ->", [m["id"] for m in (await http.get("/v1/models")).json()["data"]])

    answer = await http.post(
        "/v1/chat/completions", json={"model": "assistant", "messages": QUESTION}
    )
    body = answer.json()
    print("chat completion ->", body["choices"][0]["message"]["content"], body["usage"])

    pieces = []
    request = {"model": "assistant", "messages": QUESTION, "stream": True}
    async with http.stream("POST", "/v1/chat/completions", json=request) as stream:
        async for line in stream.aiter_lines():
            if line.startswith("data: {"):
                chunk = json.loads(line[6:])
                if chunk["choices"] and chunk["choices"][0]["delta"].get("content"):
                    pieces.append(chunk["choices"][0]["delta"]["content"])
    print(f"streamed in {len(pieces)} chunks ->", "".join(pieces))

    message = await http.post(
        "/v1/messages", json={"model": "assistant", "max_tokens": 256, "messages": QUESTION}
    )
    print("anthropic message ->", message.json()["content"][0]["text"])

    first = (
        await http.post("/v1/responses", json={"model": "assistant", "input": "2 + 3?"})
    ).json()
    follow = await http.post(
        "/v1/responses",
        json={"model": "assistant", "input": "And doubled?", "previous_response_id": first["id"]},
    )
    print(
        "response, continued ->",
        follow.json()["status"],
        follow.json()["previous_response_id"] == first["id"],
    )

    refused = await http.post(
        "/v1/chat/completions", json={"model": "assistant", "messages": QUESTION, "top_p": 0.5}
    )
    print("refused parameter ->", refused.status_code, refused.json()["error"]["message"])


async def main() -> None:
    async with agentrig.open_runtime(
        HERE / "agentrig.toml", resolver=agentrig.env_resolver()
    ) as rt:
        server = AgentServer(rt, port=0)  # the settings: the file's [server] table
        started = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(server.run, on_started=started.set))
            await started.wait()
            print("serving on", server.url)
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
                await calls(http)
            server.stop()


if __name__ == "__main__":
    anyio.run(main, backend="asyncio")
