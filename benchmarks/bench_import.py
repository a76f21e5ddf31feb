"""Cold ``import agentrig`` against ``import pluggy, pydantic``, in fresh subprocesses.

    python benchmarks/bench_import.py [--quick]

Each import runs in a new interpreter (``python -c ...``), alternating the two, many times;
the medians are compared.  Target: within 1.5x.  Also reports, for information, the cost of
``import agentrig.kernel`` (what composing a runtime needs).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import compare, emit, median

STATEMENTS = {
    "agentrig": "import agentrig",
    "floor": "import pluggy, pydantic",
    "kernel": "import agentrig.kernel",
    "bare": "pass",
}


def run_once(statement: str) -> float:
    start = time.perf_counter_ns()
    subprocess.run([sys.executable, "-c", statement], check=True)
    return (time.perf_counter_ns() - start) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (< 1 minute)")
    args = parser.parse_args()
    runs = 15 if args.quick else 60
    times: dict[str, list[float]] = {name: [] for name in STATEMENTS}
    for statement in STATEMENTS.values():  # warm the OS file cache
        run_once(statement)
    for _ in range(runs):
        for name, statement in STATEMENTS.items():
            times[name].append(run_once(statement))
    emit("interpreter_start_bare", median(times["bare"]), "ms")
    compare(
        "import_agentrig_cold",
        median(times["agentrig"]),
        median(times["floor"]),
        "ms",
        1.5,
        floor_name="python -c 'import pluggy, pydantic'",
        statistic="median",
    )
    emit("import_agentrig_kernel_cold", median(times["kernel"]), "ms", statistic="median")


if __name__ == "__main__":
    main()
