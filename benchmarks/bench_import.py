"""Cold starts in fresh subprocesses: ``import agentrig`` and a whole ``agentrig run``.

    python benchmarks/bench_import.py [--quick]

Each statement runs in a new interpreter (``python -c ...``), all of them alternating, many
times; the medians are compared.

* ``import agentrig`` against ``import pluggy, pydantic``: target within 1.5x.
* the cold ``agentrig run`` of a one-reply scripted config (compose the runtime with every
  installed plugin, run one turn, print the answer) against
  ``import pydantic, httpx, anyio``: target within 2.5x (issue 20).

* ``agentrig --help`` and ``agentrig --version`` of the core (every listener plugin but the
  core's own disabled by name in ``AGENTRIG_DISABLE_PLUGINS``: the entry points are still
  scanned, as in an installation of agentrig alone) against ``import pydantic``: target
  within 1.5x (issue 37).

Also reports, for information, ``agentrig --help`` with every installed plugin autoloaded
(each plugin that could add a command is imported: their module-level imports count), the
cost of ``import agentrig.kernel`` (what composing a runtime needs) and of a bare interpreter
start.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import cold_child_env, compare, emit, median

# a one-reply scripted composition: what `agentrig run` needs and nothing else
RUN_CONFIG = """
[providers.local]
kind = "scripted"
options.script = [{ text = "hello" }]

[agents.main]
provider = "local"
model = "m"
"""
RUN = "import sys; from agentrig.cli import main; sys.exit(main())"

STATEMENTS: dict[str, list[str]] = {
    "agentrig": ["import agentrig"],
    "floor": ["import pluggy, pydantic"],
    "kernel": ["import agentrig.kernel"],
    "bare": ["pass"],
    "run": [RUN, "run", "-c", "agentrig.toml", "hi"],
    "run_floor": ["import pydantic, httpx, anyio"],
    "help": [RUN, "--help"],
    "version": [RUN, "--version"],
    "help_plugins": [RUN, "--help"],
    "help_floor": ["import pydantic"],
}
#: the statements run with the plugins' autoloading off (the core alone)
CORE_ONLY = {"help", "version"}


def _plugin_names() -> list[str]:
    """The listener plugins installed besides the core's own (disabled by name, as if absent:
    the entry points are still scanned, as they are in an installation of agentrig alone)."""
    from importlib.metadata import entry_points

    found = entry_points(group="agentrig.plugins")
    return sorted({e.name for e in found if e.dist is not None and e.dist.name != "agentrig"})


def run_once(arguments: list[str], cwd: str, env: dict[str, str]) -> float:
    start = time.perf_counter_ns()
    subprocess.run(
        [sys.executable, "-c", *arguments], check=True, cwd=cwd, env=env, capture_output=True
    )
    return (time.perf_counter_ns() - start) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (< 1 minute)")
    args = parser.parse_args()
    runs = 15 if args.quick else 60
    times: dict[str, list[float]] = {name: [] for name in STATEMENTS}
    with tempfile.TemporaryDirectory() as cwd:
        env = cold_child_env(f"{cwd}/pycache")
        core_env = {**env, "AGENTRIG_DISABLE_PLUGINS": ",".join(_plugin_names())}
        with open(f"{cwd}/agentrig.toml", "w", encoding="utf-8") as fh:
            fh.write(RUN_CONFIG)
        envs = {name: core_env if name in CORE_ONLY else env for name in STATEMENTS}
        for name, arguments in STATEMENTS.items():  # warm the OS file and bytecode caches
            run_once(arguments, cwd, envs[name])
        for _ in range(runs):
            for name, arguments in STATEMENTS.items():
                times[name].append(run_once(arguments, cwd, envs[name]))
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
    compare(
        "agentrig_run_scripted_one_reply_cold",
        median(times["run"]),
        median(times["run_floor"]),
        "ms",
        2.5,
        floor_name="python -c 'import pydantic, httpx, anyio'",
        statistic="median",
    )
    for name in ("help", "version"):
        compare(
            f"agentrig_{name}_cold",
            median(times[name]),
            median(times["help_floor"]),
            "ms",
            1.5,
            floor_name="python -c 'import pydantic'",
            statistic="median",
            plugins="core only (every other listener plugin disabled by name)",
        )
    emit(
        "agentrig_help_cold_every_plugin",
        median(times["help_plugins"]),
        "ms",
        statistic="median",
        ratio_to_pydantic=round(median(times["help_plugins"]) / median(times["help_floor"]), 3),
    )


if __name__ == "__main__":
    main()
