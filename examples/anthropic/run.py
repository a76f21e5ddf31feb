"""Stream one answer from Anthropic.

    ANTHROPIC_API_KEY=sk-ant-... python examples/anthropic/run.py

Without the key (or without the agentrig-anthropic plugin) it says what it needs and exits 0.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import entry_points
from pathlib import Path

import anyio

import agentrig
from agentrig.llm import TextDelta

HERE = Path(__file__).resolve().parent
PROMPT = "In one sentence: what is a plugin host?"


def missing() -> str | None:
    if "anthropic" not in entry_points(group="agentrig.providers").names:
        return "the 'anthropic' provider plugin is not installed: pip install agentrig-anthropic"
    if not os.environ.get("ANTHROPIC_API_KEY"):
        return (
            "ANTHROPIC_API_KEY is not set. This example sends one request to api.anthropic.com; "
            "set the variable to an Anthropic API key and run it again."
        )
    return None


async def main() -> None:
    async with agentrig.open_runtime(
        HERE / "agentrig.toml", resolver=agentrig.env_resolver()
    ) as rt:
        stream = rt.agent("assistant").stream(PROMPT)
        async for chunk in stream:
            if isinstance(chunk, TextDelta):
                print(chunk.text, end="", flush=True)
        print()
        result = stream.result
        usage = result.invocation.usage
        print(
            f"usage: {usage.prompt} in, {usage.completion} out" if usage else "usage: not reported"
        )


if __name__ == "__main__":
    reason = missing()
    if reason is not None:
        print(f"Skipping the Anthropic example: {reason}")
        sys.exit(0)
    anyio.run(main)
