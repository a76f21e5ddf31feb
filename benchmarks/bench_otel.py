"""The cost of agentrig-otel: the W loop with the plugin enabled (no-op exporter) vs without.

* **W with otel** -- the workload of ``bench_loop.py`` (R runs of K tool rounds, scripted
  model, one no-op tool) in a runtime whose ``[otel]`` table enables the plugin with
  ``exporter = "none"``: every span and metric is built and recorded, then dropped.
  Floor: the same passes in a runtime without the table (the plugin installed but inert),
  measured interleaved in the same process.  Target: at most 1.3x.
* ``--cpu`` times the passes with the process's CPU time instead of the wall clock (robust
  to other processes on a shared machine) and adds two informational rows: the plugin
  without metrics, and a listener of ``observe`` that does nothing (what the loop spends
  building observations for any listener).

Prints one JSON object per line (DESIGN §10); ``--quick`` finishes in well under a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import compare
from bench_loop import MODEL, NOOP, AgentrigW, K, _config, _memory

import agentrig
from agentrig.plugin import Observation, hookimpl

TARGET = 1.3


class NullListener:
    """An ``observe`` listener that does nothing: the loop builds its observations."""

    @hookimpl
    def observe(self, payload: Observation) -> None:
        return None


def _variants(cpu: bool) -> dict[str, tuple[dict[str, Any], list[tuple[str, object]]]]:
    """name -> (extra config, plugins); the first is the floor."""
    variants: dict[str, tuple[dict[str, Any], list[tuple[str, object]]]] = {
        "plain": ({}, []),
        "otel": ({"otel": {"exporter": "none", "metrics": True}}, []),
    }
    if cpu:
        variants["otel_no_metrics"] = ({"otel": {"exporter": "none", "metrics": False}}, [])
        variants["observe_listener"] = ({}, [("null-listener", NullListener())])
    return variants


async def bench(runs: int, repeats: int, cpu: bool) -> None:
    calls = runs * (K + 1)
    variants = _variants(cpu)
    best = dict.fromkeys(variants, float("inf"))
    async with AsyncExitStack() as stack:
        loops: dict[str, tuple[Any, AgentrigW]] = {}
        for name, (extra, plugins) in variants.items():
            w = AgentrigW()
            if cpu:
                w.clock = time.process_time
            rt = await stack.enter_async_context(
                agentrig.open_runtime(
                    {**_config(), **extra},
                    memory=_memory(),
                    overrides=[("providers", "local", w.provider)],
                    plugins=plugins,
                    environ={},
                )
            )
            loops[name] = (rt, w)
        assert not loops["plain"][0].hooks.has_listeners("observe")
        assert loops["otel"][0].hooks.has_listeners("observe")
        for rt, w in loops.values():  # warm-up
            await w.one_pass(rt, min(runs, 20))
        for _ in range(repeats):  # interleaved: all see the same machine state
            for name, (rt, w) in loops.items():
                best[name] = min(best[name], await w.one_pass(rt, runs))
    per_call = {name: seconds / calls * 1e6 for name, seconds in best.items()}
    clock = "process CPU time" if cpu else "wall clock"
    common = {"runs": runs, "rounds": K, "model": MODEL, "tool": NOOP.id, "clock": clock}
    common["load_average"] = [round(x, 2) for x in os.getloadavg()]
    floor_name = "same W runs, plugin installed but not enabled"
    suffix = "_cpu" if cpu else ""
    compare(
        f"w_otel_enabled_noop_exporter{suffix}",
        per_call["otel"],
        per_call["plain"],
        "us/model-call",
        TARGET,
        floor_name=floor_name,
        **common,
    )
    for name in ("otel_no_metrics", "observe_listener"):
        if name in per_call:
            compare(
                f"w_{name}{suffix}",
                per_call[name],
                per_call["plain"],
                "us/model-call",
                TARGET,
                floor_name=floor_name,
                informational=True,
                **common,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (< 1 minute)")
    parser.add_argument(
        "--cpu", action="store_true", help="time with process CPU time (a shared machine)"
    )
    args = parser.parse_args()
    runs, repeats = (50, 3) if args.quick else (200, 7)
    if args.cpu:
        runs, repeats = (60, 5) if args.quick else (60, 15)
    asyncio.run(bench(runs, repeats, args.cpu))


if __name__ == "__main__":
    main()
