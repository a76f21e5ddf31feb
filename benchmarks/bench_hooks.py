"""Hook dispatch cost against a raw pluggy hook call with the same listeners.

    python benchmarks/bench_hooks.py [--quick]

* sync notify (``HookDispatcher.notify``) with 0, 1 and 5 sync listeners vs
  ``pm.hook.observe(payload=...)`` -- target ratio <= 1.0;
* async waterfall (``HookDispatcher.waterfall``) with 0, 1 and 5 async listeners that each
  ``await next(payload)``, vs a hand-written chain of the same awaits -- target <= 3.0;
* the raw pluggy call for reference.

Each measurement is the best of several batches (per-call nanoseconds); the floor is measured
in the same run, interleaved with the value.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_per_call_ns, compare, emit, gc_paused

import agentrig
from agentrig.kernel import HookDispatcher, new_plugin_manager
from agentrig.lifecycle import Observation


def observer() -> object:
    class Observer:
        @agentrig.hookimpl
        def observe(self, payload: Observation) -> None:
            return None

    return Observer()


def link() -> object:
    class Link:
        @agentrig.hookimpl
        async def request_config(self, payload: Any, next: Callable[[Any], Awaitable[Any]]) -> Any:
            return await next(payload)

    return Link()


def bench_notify(listeners: int, calls: int, repeats: int) -> None:
    hooks = HookDispatcher()
    for i in range(listeners):
        hooks.register(observer(), f"l{i}")
    raw = new_plugin_manager()
    for i in range(listeners):
        raw.register(observer(), f"l{i}")
    payload = Observation(kind="bench", agent_id=None)
    notify = hooks.notify
    raw_call = raw.hook.observe

    def ours(n: int) -> None:
        for _ in range(n):
            notify("observe", payload)

    def floor(n: int) -> None:
        for _ in range(n):
            raw_call(payload=payload)

    value, base = float("inf"), float("inf")
    for _ in range(repeats):  # interleave so both see the same machine state
        with gc_paused():
            value = min(value, best_per_call_ns(ours, calls, 1))
            base = min(base, best_per_call_ns(floor, calls, 1))
    compare(
        f"notify_sync_{listeners}_listeners",
        value,
        base,
        "ns/call",
        1.0,
        floor_name="raw pluggy hook call, same listeners",
    )
    if listeners == 0:
        emit("raw_pluggy_call_0_listeners", base, "ns/call")


async def bench_waterfall(listeners: int, calls: int, repeats: int) -> None:
    links = [link() for _ in range(listeners)]
    hooks = HookDispatcher()
    for i, plugin in enumerate(links):
        hooks.register(plugin, f"l{i}")

    async def default(payload: Any) -> Any:
        return payload

    # The floor: the same listeners chained by hand, in the same order, each awaited by a
    # step that is the previous listener's ``next`` -- the awaits, without any dispatch.
    order = [impl.fn for impl in hooks.plan("request_config")]

    def build(index: int) -> Callable[[Any], Awaitable[Any]]:
        if index == listeners:
            return default
        listener, inner = order[index], build(index + 1)

        async def step(payload: Any) -> Any:
            return await listener(payload, inner)

        return step

    hand_written = build(0)
    waterfall = hooks.waterfall
    payload = object()

    async def ours(n: int) -> None:
        for _ in range(n):
            await waterfall("request_config", payload, default)

    async def floor(n: int) -> None:
        for _ in range(n):
            await hand_written(payload)

    value, base = float("inf"), float("inf")
    for _ in range(repeats):  # interleaved small batches, best of each (as timeit does)
        with gc_paused():
            start = time.perf_counter_ns()
            await ours(calls)
            value = min(value, (time.perf_counter_ns() - start) / calls)
            start = time.perf_counter_ns()
            await floor(calls)
            base = min(base, (time.perf_counter_ns() - start) / calls)
    compare(
        f"waterfall_async_{listeners}_listeners",
        value,
        base,
        "ns/call",
        3.0,
        floor_name="the same listeners chained by hand",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (< 1 minute)")
    args = parser.parse_args()
    calls, repeats = (2_000, 40) if args.quick else (5_000, 200)
    for listeners in (0, 1, 5):
        bench_notify(listeners, calls, repeats)
    for listeners in (0, 1, 5):
        anyio.run(bench_waterfall, listeners, calls, repeats)


if __name__ == "__main__":
    main()
