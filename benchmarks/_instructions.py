"""Instruction counts of a benchmark's timed section, with valgrind's callgrind.

On a machine other processes share, wall-clock and even CPU-time ratios move with the load;
the number of instructions a section executes does not (to about 0.5 %).  A benchmark runs
each variant in a child process under ``valgrind --tool=callgrind --collect-atstart=no``;
the child switches counting on and off around its timed section through callgrind's client
requests (a three-line C helper compiled here, called with :mod:`ctypes`) and the parent reads
the total from the dump.  Needs valgrind with its headers and a C compiler; not for CI.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

#: the environment variable naming the compiled helper in a child
HELPER_ENV = "AGENTRIG_BENCH_CALLGRIND_HELPER"

_SOURCE = """#include <valgrind/callgrind.h>
void counting_on(void) { CALLGRIND_ZERO_STATS; CALLGRIND_TOGGLE_COLLECT; }
void counting_off(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS; }
"""


def build_helper(directory: Path) -> Path:
    """Compile the client-request helper into ``directory``; exit naming what is missing."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if shutil.which("valgrind") is None or compiler is None:
        sys.exit("--instructions needs valgrind and a C compiler (cc) on PATH")
    source, library = directory / "counting.c", directory / "counting.so"
    source.write_text(_SOURCE)
    built = subprocess.run(
        [compiler, "-O2", "-shared", "-fPIC", "-o", str(library), str(source)],
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        sys.exit(f"--instructions: building the callgrind helper failed (valgrind headers?):\n"
                 f"{built.stderr}")  # fmt: skip
    return library


class CountingClock:
    """A benchmark clock that counts instead: its first call switches counting on, the
    second off (and dumps the count), and so on; it reads 0.0."""

    def __init__(self) -> None:
        helper = ctypes.CDLL(os.environ[HELPER_ENV])
        self._switches: tuple[Callable[[], None], Callable[[], None]] = (
            helper.counting_on,
            helper.counting_off,
        )
        self.calls = 0

    def __call__(self) -> float:
        self._switches[self.calls % 2]()
        self.calls += 1
        return 0.0


def count(argv: Sequence[str], helper: Path, directory: Path, name: str) -> list[int]:
    """Run ``argv`` under callgrind; the instructions of each counted section, in order."""
    out = directory / f"{name}.%p"
    env = {**os.environ, HELPER_ENV: str(helper), "PYTHONHASHSEED": "0"}
    command = ["valgrind", "--tool=callgrind", "--collect-atstart=no",
               f"--callgrind-out-file={out}", *argv]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{name} failed under callgrind:\n{done.stderr[-3000:]}")
    dumps = sorted(
        (p for p in directory.glob(f"{name}.*") if re.search(r"\.\d+\.\d+$", p.name)),
        key=lambda p: int(p.name.rsplit(".", 1)[1]),
    )
    return [_total(path) for path in dumps]


def _total(dump: Path) -> int:
    for line in dump.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise ValueError(f"{dump}: no total")
