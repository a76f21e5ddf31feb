"""Workspace toolset: a sandboxed ``Bash`` round trip against a bare spawn of the same command.

    python benchmarks/bench_workspace.py [--quick] [--cpu]

For each sandbox backend that can run here (``bubblewrap`` needs ``bwrap``; ``native`` needs
root and the ``nobody`` user) it times ``Bash.execute`` of ``git --version`` in a temporary
workspace -- validation, the git filter check, the sandbox, bounded output -- and, in the
same run, alternated call by call with it, the floor: ``anyio.open_process(["/bin/sh", "-c",
COMMAND])`` with its output read.  Each line gives the best of N (``value``, ``floor``,
``ratio``: the line the target is read on) and the medians (``median``, ``floor_median``,
``median_ratio``), repeated; the target is a ratio of at most 1.5.  Both backends run the
round trip through the workspace's persistent command servers (the default); further lines
give the paths without them: bubblewrap's sandbox per command (and bwrap's setup alone), and
native's reaper per command (the host's reaper confines each command itself).
A ``Read`` of a 200-line file is reported too (information).

``--cpu`` measures, instead, the CPU time of each way per command -- the whole process tree:
agentrig, the reaper launcher, the servers, the commands -- which a loaded machine moves far
less than the wall clock: a child process runs N calls, another none (start-up and the first
call), and the difference is divided by N.  This process is a child subreaper, so every
helper a child leaves (the launcher outlives it briefly) is reaped here and counted.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import attrs
from _common import compare, emit

COMMAND = "git --version"
_PR_SET_CHILD_SUBREAPER = 36


async def _bare_once(argv: list[str] | None = None) -> None:
    process = await anyio.open_process(
        argv or ["/bin/sh", "-c", COMMAND],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        env={"PATH": "/usr/bin:/bin"},
    )
    async with process:
        assert process.stdout is not None
        async for _chunk in process.stdout:
            pass
        await process.wait()


def _bash_once(space: Any) -> Callable[[], Awaitable[None]]:
    from agentrig.builtins.workspace import BASH, WORKSPACE
    from agentrig.cancel import CancelSignal
    from agentrig.kernel import Services
    from agentrig.tools import ToolContext, check_input

    services = Services()
    services.provide(WORKSPACE, space)
    ctx = ToolContext(
        signal=CancelSignal(), tool_id="Bash", call_id="c", invocation_id="i", services=services
    )
    value = check_input(BASH, {"command": COMMAND}).value

    async def once() -> None:
        out = await BASH.execute(value, ctx)
        assert "git version" in out, out

    return once


async def _paired(
    runs: int, one: Callable[[], Awaitable[None]], other: Callable[[], Awaitable[None]]
) -> tuple[list[float], list[float]]:
    """Times of ``one`` and ``other`` in ms, alternated call by call (the same load for both)."""
    await one()  # warm: a persistent sandbox is set up, the reaper launcher started
    await other()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for fn, into in ((one, times[0]), (other, times[1])):
            start = time.perf_counter_ns()
            await fn()
            into.append((time.perf_counter_ns() - start) / 1e6)
    return times


def _space(root: Path, *, per_command: bool = False, **sandbox: Any) -> Any:
    from agentrig.builtins.workspace import SandboxConfig, Workspace, WorkspaceConfig, backend_for

    settings = SandboxConfig.model_validate(sandbox)
    backend = backend_for(settings, root)
    if per_command:  # no command server: each command set up alone (the old paths)
        backend = attrs.evolve(backend, python=None)
    return Workspace(root=root, config=WorkspaceConfig(sandbox=settings), backend=backend)


def _line(name: str, runs: tuple[list[float], list[float]], note: str = "") -> None:
    """Best of N (the ratio the target is read on) and the medians of both."""
    value, floor = min(runs[0]), min(runs[1])
    median, floor_median = statistics.median(runs[0]), statistics.median(runs[1])
    extra: dict[str, Any] = {
        "best_of": len(runs[0]),
        "median": round(median, 3),
        "floor_median": round(floor_median, 3),
        "median_ratio": round(median / floor_median, 3),
    }
    if note:
        extra["note"] = note
    compare(name, value, floor, "ms/call", target=1.5, **extra)


async def bench_bash(runs: int, root: Path, repeats: int) -> None:
    backends: list[tuple[str, dict[str, Any]]] = []
    if shutil.which("bwrap"):
        backends.append(("bubblewrap", {"backend": "bubblewrap"}))
    else:
        print('{"name": "Bash round trip, bubblewrap", "skipped": "bwrap not installed"}')
    if os.geteuid() == 0:
        backends.append(("native", {"backend": "native", "user": "nobody", "network": True}))
    else:
        print('{"name": "Bash round trip, native", "skipped": "needs root"}')
    for name, sandbox in backends:
        for repeat in range(repeats):
            space = _space(root, **sandbox)
            label = f"Bash round trip ({name}) vs bare spawn of the same command"
            label += f", {'persistent sandbox' if name == 'bubblewrap' else 'command server'}"
            label += f", repeat {repeat + 1}"
            _line(label, await _paired(runs, _bash_once(space), _bare_once))
        if name == "bubblewrap":
            old = _space(root, per_command=True, **sandbox)
            _line(
                "Bash round trip (bubblewrap), a sandbox per command, vs bare spawn",
                await _paired(runs, _bash_once(old), _bare_once),
                note="bwrap's setup per command (the path without a command server)",
            )
            argv = old.backend.argv(COMMAND, root)
            _line(
                "bare spawn of a per-command bwrap argv vs bare spawn of the command",
                await _paired(runs, lambda argv=argv: _bare_once(argv), _bare_once),
                note="what bwrap's setup alone costs",
            )
        else:
            alone = _space(root, per_command=True, **sandbox)
            _line(
                "Bash round trip (native), a reaper per command, vs bare spawn",
                await _paired(runs, _bash_once(alone), _bare_once),
                note="the host's reaper confines each command (the path without a server)",
            )


async def bench_read(runs: int, root: Path) -> None:
    from agentrig.builtins.workspace import READ, WORKSPACE, Workspace
    from agentrig.cancel import CancelSignal
    from agentrig.kernel import Services
    from agentrig.tools import ToolContext, check_input

    services = Services()
    services.provide(WORKSPACE, Workspace(root=root))
    ctx = ToolContext(
        signal=CancelSignal(), tool_id="Read", call_id="c", invocation_id="i", services=services
    )
    value = check_input(READ, {"file_path": "f.py"}).value
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter_ns()
        await READ.execute(value, ctx)
        best = min(best, time.perf_counter_ns() - start)
    emit("Read of a 200-line file", best / 1e3, "us/call")


#: the ways --cpu compares: the floor, then each sandboxed path that can run here
_CPU_WAYS = {
    "bare spawn": None,
    "native, command servers": {"backend": "native", "user": "nobody", "network": True},
    "native, a reaper per command": {"backend": "native", "user": "nobody", "network": True},
    "bubblewrap, persistent sandboxes": {"backend": "bubblewrap"},
}


async def _cpu_calls(way: str, calls: int, root: Path) -> None:
    """In a child process: the first call (start-up), then ``calls`` more, then close."""
    sandbox = _CPU_WAYS[way]
    space = None
    once: Callable[[], Awaitable[None]] = _bare_once
    if sandbox is not None:
        space = _space(root, per_command="reaper" in way, **sandbox)
        once = _bash_once(space)
    for _ in range(calls + 1):
        await once()
    if space is not None and space.backend.pool is not None:
        await space.backend.pool.aclose()


def _tree_cpu(way: str, calls: int) -> float:
    """CPU seconds of a child running ``calls`` calls of ``way``, every descendant included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    argv = [sys.executable, __file__, "--cpu-child", way, str(calls)]
    subprocess.run(argv, check=True)
    while True:  # the launcher and whatever else the child left: re-parented to us
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def bench_cpu(calls: int, repeats: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    ways = [
        way
        for way, sandbox in _CPU_WAYS.items()
        if sandbox is None
        or (sandbox["backend"] == "native" and os.geteuid() == 0)
        or (sandbox["backend"] == "bubblewrap" and shutil.which("bwrap"))
    ]
    per_call: dict[str, list[float]] = {way: [] for way in ways}
    for _ in range(repeats):
        for way in ways:  # alternated, pass by pass: the same load for each
            spent = _tree_cpu(way, calls) - _tree_cpu(way, 0)
            per_call[way].append(spent * 1000 / calls)
    floor = per_call["bare spawn"]
    for way in ways[1:]:
        compare(
            f"CPU per Bash round trip ({way}) vs a bare spawn of the same command",
            statistics.median(per_call[way]),
            statistics.median(floor),
            "ms CPU/call",
            target=1.5,
            passes=[round(v, 3) for v in per_call[way]],
            floor_passes=[round(v, 3) for v in floor],
            note=f"whole process tree, {calls} calls a pass minus none, median of passes",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="finish in well under a minute")
    parser.add_argument("--cpu", action="store_true", help="CPU time per command instead")
    parser.add_argument("--cpu-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentrig-bench-") as tmp:
        root = Path(tmp).resolve()
        root.chmod(0o777)
        (root / "f.py").write_text("".join(f"line = {i}\n" for i in range(200)))
        if args.cpu_child:
            anyio.run(_cpu_calls, args.cpu_child[0], int(args.cpu_child[1]), root)
        elif args.cpu:
            bench_cpu(100 if args.quick else 300, 3 if args.quick else 5)
        else:
            anyio.run(bench_bash, 20 if args.quick else 100, root, 3 if args.quick else 5)
            anyio.run(bench_read, 50 if args.quick else 500, root)


if __name__ == "__main__":
    main()
