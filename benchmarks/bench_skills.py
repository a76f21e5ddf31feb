"""What skills and project instructions cost (issue 31).

    python benchmarks/bench_skills.py [--quick]

* ``open_runtime`` of a small config with the skill steps on (``compose-skills``,
  ``compose-instructions``, ``compose-tool-scan``; no skill folder exists) against the same
  config with those steps disabled, interleaved in one run, best of each.  Target: within
  1.75x (four more listener plugins to register, a scan of each tool, a few ``stat`` calls:
  about 0.6 ms on a ~1.1 ms open).
* The deterministic registration scan of a real-format skill (the benign corpus of
  tests/skills, 11 skills in Claude Code's format) against loading it from disk
  (``load_skill``: walk, read, parse the frontmatter).  Target: within 3x.  The scanner
  keeps a bounded cache keyed by the registration's value, so a tool registered again by
  every runtime a process opens is scanned once; this line measures uncached scans.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import anyio
import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import compare, gc_paused, median

from agentrig.kernel import open_runtime
from agentrig.skills import load_skill, registration_of_skill, scan

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "skills" / "corpus" / "benign"
STEPS = ["compose-skills", "compose-instructions", "compose-tool-scan", "skill-guard"]
BASE = {
    "providers": {"p": {"kind": "scripted"}},
    "agents": {"a": {"provider": "p", "model": "m", "tools": ["tool_search"]}},
    "instructions": {"home": False, "project": False},
}
OFF = {**BASE, "plugins": {"disabled": STEPS}}
OFF.pop("instructions")


async def open_us(config: dict[str, object]) -> float:
    start = time.perf_counter_ns()
    async with open_runtime(config, environ={}):
        elapsed = time.perf_counter_ns() - start
    return elapsed / 1000


async def opens(runs: int) -> tuple[list[float], list[float]]:
    for _ in range(3):
        await open_us(BASE)
        await open_us(OFF)
    on, off = [], []
    with gc_paused():
        for _ in range(runs):
            on.append(await open_us(BASE))
            off.append(await open_us(OFF))
    return on, off


def scans(runs: int) -> tuple[float, float]:
    folders = sorted(CORPUS.iterdir())
    skills = [load_skill(f) for f in folders]
    load_times, scan_times = [], []
    with gc_paused():
        for i in range(runs):
            start = time.perf_counter_ns()
            for folder in folders:
                load_skill(folder)
            load_times.append((time.perf_counter_ns() - start) / len(folders) / 1000)
            # a fresh source each round: the scanner's value-keyed cache never answers here
            fresh = [attrs.evolve(registration_of_skill(s), source=f"round {i}") for s in skills]
            start = time.perf_counter_ns()
            for registration in fresh:
                assert scan(registration).allowed
            scan_times.append((time.perf_counter_ns() - start) / len(skills) / 1000)
    return median(scan_times), median(load_times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    runs = 30 if parser.parse_args().quick else 200
    on, off = anyio.run(opens, runs)
    # the best of each: on a shared machine the medians swing with the neighbours' load
    compare("open_runtime: skill steps on vs off", min(on), min(off), "us", 1.75)
    scanned, loaded = scans(runs)
    compare("scan one real-format skill vs loading it", scanned, loaded, "us", 3.0)


if __name__ == "__main__":
    main()
