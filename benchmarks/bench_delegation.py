"""What delegating costs against doing the same work with a directly created agent (issue 30).

    python benchmarks/bench_delegation.py [--quick]

One runtime, one scripted provider answering every request at once.  A delegated call is
``lead.delegate("reviewer", prompt)``: admission (limits, lineage), creation through the
registry, a one-reply run, disposal.  The floor is the same work done by hand: an agent
created from the same config, run on the prompt, disposed.  Batches interleaved, best batch
of each.  Target: within 1.2x.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import compare, gc_paused

from agentrig.agent import Agent, agent_configs
from agentrig.ids import AgentId
from agentrig.kernel import Runtime, open_runtime
from agentrig.testing import ScriptedProvider

CONFIG = {
    "providers": {"p": {"kind": "scripted"}},
    "agents": {
        "lead": {"provider": "p", "model": "bench-model", "subagents": ["reviewer"]},
        "reviewer": {"provider": "p", "model": "bench-model", "description": "Reviews."},
    },
}
PROMPT = "Review this change."


async def delegated_us(lead: Agent, calls: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(calls):
        await lead.delegate("reviewer", PROMPT)
    return (time.perf_counter_ns() - start) / calls / 1000


async def direct_us(rt: Runtime, calls: int, counter: list[int]) -> float:
    config = agent_configs(rt.loaded)[AgentId("reviewer")]
    start = time.perf_counter_ns()
    for _ in range(calls):
        counter[0] += 1
        agent = await rt.agents.create(f"direct-{counter[0]}", config=config)
        await agent.run(PROMPT)
        await rt.agents.dispose(agent.id)
    return (time.perf_counter_ns() - start) / calls / 1000


async def main(quick: bool) -> None:
    calls, repeats = (20, 10) if quick else (50, 30)
    provider = ScriptedProvider(["Looks good."], on_exhausted="repeat")
    async with open_runtime(CONFIG, overrides=[("providers", "p", provider)], environ={}) as rt:
        lead, counter = rt.agent("lead"), [0]
        await delegated_us(lead, calls)  # warm-up
        await direct_us(rt, calls, counter)
        best_delegated = best_direct = float("inf")
        with gc_paused():
            for _ in range(repeats):
                best_delegated = min(best_delegated, await delegated_us(lead, calls))
                best_direct = min(best_direct, await direct_us(rt, calls, counter))
        compare(
            "delegated call vs the same work by a directly created agent",
            best_delegated,
            best_direct,
            "us",
            1.2,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    anyio.run(main, parser.parse_args().quick)
