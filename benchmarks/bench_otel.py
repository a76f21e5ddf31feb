"""The cost of agentrig-otel: the W loop with the plugin enabled (no-op exporter) vs without.

* **W with otel** -- the workload of ``bench_loop.py`` (R runs of K tool rounds, scripted
  model, one no-op tool) in a runtime whose ``[otel]`` table enables the plugin with
  ``exporter = "none"``: every span and metric is built and recorded by the SDK, then
  dropped.  Floor: the same passes in a runtime without the table (the plugin installed but
  inert), measured interleaved in the same process.  Target: at most 1.3x.

Prints one JSON object per line (DESIGN §10); ``--quick`` finishes in well under a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import compare
from bench_loop import MODEL, NOOP, AgentrigW, K, _config, _memory

import agentrig

TARGET = 1.3


async def bench(runs: int, repeats: int) -> None:
    calls = runs * (K + 1)
    plain, traced = AgentrigW(), AgentrigW()
    otel: dict[str, Any] = {"otel": {"exporter": "none", "metrics": True}}
    best = {"plain": float("inf"), "otel": float("inf")}
    async with (
        agentrig.open_runtime(
            _config(),
            memory=_memory(),
            overrides=[("providers", "local", plain.provider)],
            environ={},
        ) as rt_plain,
        agentrig.open_runtime(
            {**_config(), **otel},
            memory=_memory(),
            overrides=[("providers", "local", traced.provider)],
            environ={},
        ) as rt_otel,
    ):
        assert not rt_plain.hooks.has_listeners("observe")
        assert rt_otel.hooks.has_listeners("observe")
        await plain.one_pass(rt_plain, min(runs, 20))  # warm-up
        await traced.one_pass(rt_otel, min(runs, 20))
        for _ in range(repeats):  # interleaved: both see the same machine state
            best["plain"] = min(best["plain"], await plain.one_pass(rt_plain, runs))
            best["otel"] = min(best["otel"], await traced.one_pass(rt_otel, runs))
    per_call = {name: seconds / calls * 1e6 for name, seconds in best.items()}
    compare(
        "w_otel_enabled_noop_exporter",
        per_call["otel"],
        per_call["plain"],
        "us/model-call",
        TARGET,
        floor_name="same W runs, plugin installed but not enabled",
        runs=runs,
        rounds=K,
        model=MODEL,
        tool=NOOP.id,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (< 1 minute)")
    args = parser.parse_args()
    runs, repeats = (50, 3) if args.quick else (200, 7)
    asyncio.run(bench(runs, repeats))


if __name__ == "__main__":
    main()
