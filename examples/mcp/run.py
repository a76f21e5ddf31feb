"""The MCP example: an agent calls a tool of an MCP server (stdio), offline.

    python examples/mcp/run.py

The model is the built-in ``scripted`` provider; the tool is real: ``weather_server.py``
runs as a subprocess, started when the runtime composes and stopped when it closes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio

import agentrig

HERE = Path(__file__).resolve().parent


def resolver(name: str) -> str | None:
    """``${VAR}`` in .mcp.json resolves here: PYTHON is this interpreter, the rest the env."""
    return sys.executable if name == "PYTHON" else os.environ.get(name)


async def main() -> None:
    async with agentrig.open_runtime(HERE / "agentrig.toml", resolver=resolver) as rt:
        agent = rt.agent("assistant")
        print("tools:", ", ".join(t.id for t in agent.all_tools()))
        result = await agent.run("What should I pack for Lisbon today?")
        for message in agent.session.derive_messages():
            if message.role == "tool":
                print(f"[tool] {message.name} -> {message.text}")
        print("answer:", result.value)

        from agentrig_mcp import MCP

        client = rt.services.require(MCP)
        resources = await client.list_resources("weather")
        print("resources:", ", ".join(str(r.uri) for r in resources))
        prompt = await client.prompt_message("weather", "packing_list", {"city": "Oslo"})
        print("prompt:", prompt.text)


if __name__ == "__main__":
    anyio.run(main)
