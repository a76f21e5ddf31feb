"""Stream one answer from a local OpenAI-compatible server (Ollama on 127.0.0.1:11434).

    ollama pull llama3.2 && ollama serve
    python examples/local-openai-compatible/run.py

No key is needed.  When nothing answers on 127.0.0.1:11434 within a second (or the
agentrig-openai plugin is missing) it says what it needs and exits 0.
"""

from __future__ import annotations

import socket
import sys
from importlib.metadata import entry_points
from pathlib import Path

import anyio

import agentrig
from agentrig.llm import TextDelta

HERE = Path(__file__).resolve().parent
HOST, PORT = "127.0.0.1", 11434
PROMPT = "In one sentence: what is a plugin host?"


def server_up() -> bool:
    try:
        with socket.create_connection((HOST, PORT), timeout=1.0):
            return True
    except OSError:
        return False


def missing() -> str | None:
    if "openai" not in entry_points(group="agentrig.providers").names:
        return "the 'openai' provider plugin is not installed: pip install agentrig-openai"
    if not server_up():
        return (
            f"no OpenAI-compatible server answers on http://{HOST}:{PORT}/v1. Start Ollama "
            "(`ollama pull llama3.2 && ollama serve`), or point options.base_url in "
            "agentrig.toml at your vLLM / llama.cpp server, and run it again."
        )
    return None


async def main() -> None:
    async with agentrig.open_runtime(HERE / "agentrig.toml") as rt:
        stream = rt.agent("assistant").stream(PROMPT)
        async for chunk in stream:
            if isinstance(chunk, TextDelta):
                print(chunk.text, end="", flush=True)
        print()


if __name__ == "__main__":
    reason = missing()
    if reason is not None:
        print(f"Skipping the local OpenAI-compatible example: {reason}")
        sys.exit(0)
    anyio.run(main)
