"""The provider examples explain themselves and exit 0 when their key or server is missing."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agentrig.ids import AgentId
from agentrig.plugin import PROVIDERS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

pytestmark = pytest.mark.subprocess


def _ollama_running() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 11434), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.mark.parametrize(
    ("example", "needs"),
    [
        ("openai", "OPENAI_API_KEY is not set"),
        ("openai-responses", "OPENAI_API_KEY is not set"),
        ("anthropic", "ANTHROPIC_API_KEY is not set"),
        ("local-openai-compatible", "no OpenAI-compatible server answers on"),
    ],
)
def test_an_example_without_its_key_or_server_explains_and_exits_0(
    example: str, needs: str
) -> None:
    if example == "local-openai-compatible" and _ollama_running():
        pytest.skip("a server answers on 127.0.0.1:11434; the example would really run")
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / example / "run.py")],
        env={},  # no keys, nothing inherited
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Skipping the" in done.stdout
    assert needs in done.stdout
    assert done.stderr == ""


@pytest.mark.anyio
@pytest.mark.parametrize("example", ["openai", "anthropic", "local-openai-compatible"])
async def test_each_example_config_composes(example: str) -> None:
    from agentrig import open_runtime

    # A stand-in key: composing builds the providers (options validated) but sends nothing.
    async with open_runtime(
        EXAMPLES / example / "agentrig.toml", resolver=lambda _name: "sk-test", environ={}
    ) as rt:
        assert rt.agent(AgentId("assistant")) is not None
        assert len(rt.catalog(PROVIDERS).ids()) == 1


@pytest.mark.anyio
async def test_the_responses_example_composes_with_its_tool() -> None:
    import importlib.util

    from agentrig import open_runtime

    spec = importlib.util.spec_from_file_location(
        "responses_example", EXAMPLES / "openai-responses" / "run.py"
    )
    assert spec is not None
    assert spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    async with open_runtime(
        EXAMPLES / "openai-responses" / "agentrig.toml",
        resolver=lambda _name: "sk-test",
        memory=example.tools(),
        environ={},
    ) as rt:
        agent = rt.agent(AgentId("assistant"))
        assert [t.id for t in agent.offered_tools()] == ["add"]
        provider = rt.catalog(PROVIDERS).require(agent.provider_id)
        assert provider.kind == "openai-responses"
