"""Model selection and presets, offline: list the presets, switch an agent to one, read the
reasoning audit of each run, and save a default that the next agent starts on.

    python examples/model-presets/run.py
"""

from __future__ import annotations

import tempfile
import tomllib
from pathlib import Path

import anyio

import agentrig
from agentrig.agent import agent_configs
from agentrig.ids import AgentId

HERE = Path(__file__).resolve().parent


def describe(result: agentrig.RunResult[str]) -> str:
    (audit,) = result.invocation.reasoning
    sent = dict(audit.native) or "nothing"
    return (
        f"{result.invocation.model}: asked {audit.requested}, {audit.disposition} "
        f"({audit.effective}), sent {sent}"
    )


async def main() -> None:
    config = tomllib.loads((HERE / "agentrig.toml").read_text(encoding="utf-8"))
    # keep the saved selection out of the example's folder: a fresh settings file per run
    config["model_selection"] = {
        "settings": str(Path(tempfile.mkdtemp()) / "model.toml"),
        "presets": [str(HERE / "presets")],
    }
    async with agentrig.open_runtime(config) as rt:
        selection = rt.model_selection
        print("presets:", ", ".join(selection.presets.names()))
        agent = rt.agent("assistant")
        print(describe(await agent.run("hello")))
        agent.select("deep")
        print(describe(await agent.run("think hard")))
        selection.save(selection.presets.resolve("deep"))
        print("saved the default:", selection.current())
        assistant = agent_configs(rt.loaded)[AgentId("assistant")]
        second = await rt.agents.create("second", config=assistant)
        print("a new agent starts on", second.selection.model)


if __name__ == "__main__":
    anyio.run(main)
