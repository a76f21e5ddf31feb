"""open_runtime() of a small config with 200 extra installed-but-unused entry points vs none.

    python benchmarks/bench_open_runtime.py [--quick]

Also guards the cost of one open itself (issue 20: it once regressed from ~0.6 ms to
~40 ms): ``open_runtime`` of the small config against validating its config,
measured interleaved in the same run; target within 100x (the open composes the runtime
through its listener plugins, builds a pluggy manager, and closes it again).  Validating the
config means validating the tables the kernel's model held when the target was set: five of
them (:data:`MOVED_TABLES`) have their own models in their layers since c8765c4, so the floor
validates those too -- the kernel model alone is reported beside it
(``benchmarks/README.md``, 2026-12-07, "the floor of one open").

The extra entry points come from a throwaway ``*.dist-info`` directory generated in a
temporary directory and put on ``sys.path`` -- exactly what ``pip install`` leaves behind --
whose modules raise when imported: discovery must list them without importing any (the
script checks that none was imported and none failed).  Target: within 1.2x.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import cold_child_env, compare, emit, gc_paused, median

from agentrig.cli import plugin_report
from agentrig.kernel import MemorySource, RuntimeConfig, open_runtime

GROUPS = ("agentrig.tools", "agentrig.providers", "agentrig.session_stores", "agentrig.sealers")
UNUSED = 200
OPEN_TARGET = 100.0  # one open within 100x validating the config model alone
#: the layers' tables that left ``RuntimeConfig`` in c8765c4 (validated by their own models;
#: the sixth, ``[claude_code]``, is now read by an importer, and this config has none)
MOVED_TABLES = ("agents", "delegation", "model_selection", "permissions", "hooks")

# the built-in JSONL store: composition builds and checks it; the bench writes no session, so
# its directory is never created
_SESSIONS = str(Path(tempfile.gettempdir()) / "agentrig-bench-open-runtime-sessions")
CONFIG = {
    "session_stores": {"main": {"kind": "jsonl", "options": {"directory": _SESSIONS}}},
    "plugins": {"disabled": []},
}


def write_unused_dist(root: Path) -> None:
    info = root / "agentrig_bench_unused-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: agentrig-bench-unused\nVersion: 1.0\n", encoding="utf-8"
    )
    lines: list[str] = []
    for g, group in enumerate(GROUPS):
        lines.append(f"[{group}]")
        per_group = UNUSED // len(GROUPS)
        lines += [f"unused_{g}_{i} = bench_unused_{g}_{i}:thing" for i in range(per_group)]
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    for g in range(len(GROUPS)):
        for i in range(UNUSED // len(GROUPS)):
            (root / f"bench_unused_{g}_{i}.py").write_text(
                "raise RuntimeError('an unused plugin was imported')\n", encoding="utf-8"
            )


def memory() -> MemorySource:
    """An in-memory source beside the installed plugins (empty: the store is the built-in)."""
    return MemorySource()


async def open_once(expect_unused: bool) -> float:
    start = time.perf_counter_ns()
    async with open_runtime(CONFIG, memory=memory(), environ={}) as rt:
        elapsed = time.perf_counter_ns() - start
        report = plugin_report(rt.index)
    unused = [r for r in report if r.distribution == "agentrig-bench-unused"]
    if expect_unused:
        assert len(unused) == UNUSED, len(unused)
        assert all(r.status == "available" for r in unused), "an unused plugin was loaded"
    else:
        assert not unused
    return elapsed / 1000


def validate_once() -> float:
    start = time.perf_counter_ns()
    RuntimeConfig.model_validate(CONFIG)
    return (time.perf_counter_ns() - start) / 1000


def _moved_models() -> list[tuple[str, Any]]:
    """The models of :data:`MOVED_TABLES`, found as the kernel finds them (entry points)."""
    found = entry_points(group="agentrig.config_sections")
    core = [e for e in found if e.dist is not None and e.dist.name == "agentrig"]
    return [(e.name, e.load()) for e in core if e.name in MOVED_TABLES]


def validate_tables_once(models: list[tuple[str, Any]]) -> float:
    """Validating what ``RuntimeConfig`` validated before c8765c4: its tables and the five."""
    start = time.perf_counter_ns()
    RuntimeConfig.model_validate(CONFIG)
    for name, model in models:
        model.model_validate(CONFIG.get(name, {}))
    return (time.perf_counter_ns() - start) / 1000


async def measure(
    runs: int, expect_unused: bool, floor: list[float], tables: list[float] | None = None
) -> list[float]:
    """``runs`` opens; each is followed by one floor sample (the config model alone) and,
    with ``tables``, one of the tables the model held when the target was set."""
    models = _moved_models()
    for _ in range(3):  # warm-up
        await open_once(expect_unused)
        validate_once()
        validate_tables_once(models)
    out = []
    with gc_paused():
        for _ in range(runs):
            out.append(await open_once(expect_unused))
            floor.append(validate_once())
            if tables is not None:
                tables.append(validate_tables_once(models))
    return out


_COLD_CHILD = """
import sys, time, anyio
sys.path.insert(0, {bench!r})
from bench_open_runtime import CONFIG, memory
from agentrig.kernel import open_runtime
async def first_open():
    start = time.perf_counter_ns()
    async with open_runtime(CONFIG, memory=memory(), environ={{}}):
        print((time.perf_counter_ns() - start) / 1000)
anyio.run(first_open)
"""


def cold_open_us(extra_path: str | None, pycache: str) -> float:
    """The FIRST open_runtime of a fresh process (no listing cached yet), in microseconds."""
    import os
    import subprocess

    extra = {}
    if extra_path is not None:
        extra["PYTHONPATH"] = extra_path + os.pathsep + os.environ.get("PYTHONPATH", "")
    code = _COLD_CHILD.format(bench=str(Path(__file__).resolve().parent))
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=cold_child_env(pycache, extra),
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (< 1 minute)")
    args = parser.parse_args()
    runs = 30 if args.quick else 200
    base: list[float] = []
    extra: list[float] = []
    model: list[float] = []
    tables: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_unused_dist(root)
        for _ in range(5):  # alternate the two setups so both see the same machine state
            base += anyio.run(measure, runs // 5, False, model, tables)
            sys.path.insert(0, str(root))
            importlib.invalidate_caches()
            extra += anyio.run(measure, runs // 5, True, [])
            sys.path.remove(str(root))
            importlib.invalidate_caches()
        imported = [m for m in sys.modules if m.startswith("bench_unused_")]
        assert not imported, f"unused plugins were imported: {imported[:3]}"
        # the first open of a fresh process pays for reading every entry point once
        # (alternating, after one run of each that fills the bytecode cache)
        pycache = f"{tmp}/pycache"
        cold: dict[str | None, list[float]] = {None: [], str(root): []}
        for sample in range(1 + (5 if args.quick else 15)):
            for path, samples in cold.items():
                elapsed = cold_open_us(path, pycache)
                if sample:
                    samples.append(elapsed)
        cold_base, cold_extra = median(cold[None]), median(cold[str(root)])
    assert len(_moved_models()) == len(MOVED_TABLES), "a moved table has no model"
    compare(
        "open_runtime_small_config",
        median(base),
        median(tables),
        "us",
        OPEN_TARGET,
        floor_name="validating the same config: RuntimeConfig.model_validate and the layers' "
        "models of the five tables it held when the target was set",
        statistic="median",
    )
    emit(
        "open_runtime_small_config_vs_the_kernel_model_alone",
        median(base),
        "us",
        floor=round(median(model), 3),
        ratio=round(median(base) / median(model), 3),
        floor_name="RuntimeConfig.model_validate of the same config (reported)",
        statistic="median",
    )
    compare(
        f"open_runtime_with_{UNUSED}_unused_entry_points",
        median(extra),
        median(base),
        "us",
        1.2,
        floor_name="same config, no extra entry points",
        statistic="median",
    )
    compare(
        f"first_open_runtime_of_a_process_with_{UNUSED}_unused_entry_points",
        cold_extra,
        cold_base,
        "us",
        1.2,
        floor_name="first open, no extra entry points",
        statistic="median",
    )


if __name__ == "__main__":
    main()
