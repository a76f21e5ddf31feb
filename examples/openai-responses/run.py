"""A tool-using run on OpenAI's Responses API, streamed, with reasoning summaries.

    OPENAI_API_KEY=sk-... python examples/openai-responses/run.py

The agent has one tool (``add``), given to the runtime in memory; the model calls it, the
result goes back as a ``function_call_output`` item on the same WebSocket, and the answer
streams.  Without the key (or without the agentrig-openai plugin) it says what it needs and
exits 0.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import entry_points
from pathlib import Path

import anyio

import agentrig
from agentrig.llm import ReasoningDelta, TextDelta, ToolResultChunk
from agentrig.tools import tool

HERE = Path(__file__).resolve().parent
PROMPT = "What is 1234 + 5678? Use the tool."


@tool(risk="inspect")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def missing() -> str | None:
    if "openai-responses" not in entry_points(group="agentrig.providers").names:
        return "the 'openai-responses' provider is not installed: pip install agentrig-openai"
    if not os.environ.get("OPENAI_API_KEY"):
        return (
            "OPENAI_API_KEY is not set. This example sends a few requests to api.openai.com; "
            "set the variable to an OpenAI API key and run it again."
        )
    return None


def tools() -> agentrig.MemorySource:
    source = agentrig.MemorySource()
    source.add("tools", "add", add)
    return source


async def main() -> None:
    async with agentrig.open_runtime(
        HERE / "agentrig.toml", resolver=agentrig.env_resolver(), memory=tools()
    ) as rt:
        stream = rt.agent("assistant").stream(PROMPT)
        async for chunk in stream:
            if isinstance(chunk, ReasoningDelta):
                print(f"[thinking] {chunk.text}", end="", flush=True)
            elif isinstance(chunk, TextDelta):
                print(chunk.text, end="", flush=True)
            elif isinstance(chunk, ToolResultChunk):
                print(f"\n[tool] {chunk.name} -> {chunk.text}")
        print()
        usage = stream.result.invocation.usage
        print(
            f"usage: {usage.prompt} in ({usage.cache_read or 0} cached), "
            f"{usage.completion} out ({usage.reasoning or 0} reasoning)"
            if usage
            else "usage: not reported"
        )


if __name__ == "__main__":
    reason = missing()
    if reason is not None:
        print(f"Skipping the OpenAI Responses example: {reason}")
        sys.exit(0)
    anyio.run(main)
