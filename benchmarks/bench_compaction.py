"""What automatic compaction costs a turn that does not compact (issue 29).

    python benchmarks/bench_compaction.py [--quick]

Two agents of one runtime answered by the scripted provider, alike but for
``compaction.auto`` (on, at 0.8 of a window the conversation never nears, against off):
batches of one-reply turns, interleaved, best batch of each.  Both measure the context
before every request (the pre-send guard needs it either way); the compacting one also
compares it with its threshold.  Target: within 1.05x.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import compare, gc_paused

from agentrig.agent import Agent
from agentrig.kernel import open_runtime
from agentrig.testing import ScriptedProvider

AGENT = {"provider": "p", "model": "bench-model"}
CONFIG = {
    "providers": {"p": {"kind": "scripted"}},
    "agents": {
        "on": {**AGENT, "compaction": {"auto": True, "at": 0.8}},
        "off": {**AGENT, "compaction": {"auto": False}},
    },
}


async def batch_us(agent: Agent, turns: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(turns):
        await agent.run("What is the weather like?")
    return (time.perf_counter_ns() - start) / turns / 1000


async def main(quick: bool) -> None:
    from agentrig.llm import ModelInfo

    turns, repeats = (20, 15) if quick else (50, 40)
    provider = ScriptedProvider(["Sunny and mild."], on_exhausted="repeat")
    async with open_runtime(CONFIG, overrides=[("providers", "p", provider)], environ={}) as rt:
        rt.models.register(ModelInfo(model="bench-model", context_window=10_000_000))
        on, off = rt.agent("on"), rt.agent("off")
        await batch_us(on, turns)  # warm-up
        await batch_us(off, turns)
        best_on = best_off = float("inf")
        with gc_paused():
            for _ in range(repeats):
                best_on = min(best_on, await batch_us(on, turns))
                best_off = min(best_off, await batch_us(off, turns))
        compare(
            "turn without a compaction, auto compaction on vs off",
            best_on,
            best_off,
            "us",
            1.05,
            compactions=sum(1 for e in on.session.events if e.type == "context/compaction"),
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    anyio.run(main, parser.parse_args().quick)
