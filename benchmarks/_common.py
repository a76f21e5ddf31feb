"""Shared helpers of the benchmark scripts: timing and the one-JSON-object-per-line output."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any


def emit(name: str, value: float, unit: str, **extra: Any) -> None:
    """Print one result line: ``name``, ``value``, ``unit`` (+ ``floor``/``ratio``/``target``)."""
    print(json.dumps({"name": name, "value": round(value, 3), "unit": unit, **extra}), flush=True)


def compare(name: str, value: float, floor: float, unit: str, target: float, **extra: Any) -> None:
    """A comparison line: ``ratio = value / floor`` against ``target`` (lower is better)."""
    ratio = value / floor if floor else float("inf")
    emit(
        name,
        value,
        unit,
        floor=round(floor, 3),
        ratio=round(ratio, 3),
        target=target,
        ok=ratio <= target,
        **extra,
    )


def best_per_call_ns(run_batch: Callable[[int], None], calls: int, repeats: int) -> float:
    """Best-of-``repeats`` nanoseconds per call of ``run_batch(calls)``."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter_ns()
        run_batch(calls)
        best = min(best, (time.perf_counter_ns() - start) / calls)
    return best


def median(values: list[float]) -> float:
    return statistics.median(values)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while timing (as :mod:`timeit` does)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def cold_child_env(pycache: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a cold-start child: bytecode cached under ``pycache``.

    A user's installation has its modules compiled; a shell exporting
    ``PYTHONDONTWRITEBYTECODE`` (or a read-only editable checkout) would make every child
    compile every module from source instead.  ``PYTHONPYCACHEPREFIX`` keeps the cache out
    of the tree; a warm-up run fills it for value and floor alike.
    """
    env = {**os.environ, "PYTHONPYCACHEPREFIX": pycache, **(extra or {})}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
