"""Workspace toolset: a sandboxed ``Bash`` round trip against a bare spawn of the same command.

    python benchmarks/bench_workspace.py [--quick]

For each sandbox backend that can run here (``bubblewrap`` needs ``bwrap``; ``native`` needs
root and the ``nobody`` user) it times ``Bash.execute`` of ``git --version`` in a temporary
workspace -- validation, the git filter check, the sandbox, bounded output -- and, in the
same run, alternated call by call with it, the floor: ``anyio.open_process(["/bin/sh", "-c",
COMMAND])`` with its output read.  Best of N (and the medians) for both, repeated; the
target is a ratio of at most 1.5.  For bubblewrap the round trip runs in the workspace's
persistent sandbox (the default); further lines give the per-command sandbox (bwrap set up
for each command) and bwrap's setup alone.  For native (the reaper confines the command
between fork and exec), a line gives what the ``setpriv`` exec it used before (and
``prlimit`` with limits) cost over the bare command.
A ``Read`` of a 200-line file is reported too (information).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import attrs
from _common import compare, emit

COMMAND = "git --version"


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
    if per_command:  # no command server: a sandbox set up for each command (the old path)
        backend = attrs.evolve(backend, python=None)
    return Workspace(root=root, config=WorkspaceConfig(sandbox=settings), backend=backend)


def _line(name: str, runs: tuple[list[float], list[float]], note: str = "") -> None:
    value, floor = min(runs[0]), min(runs[1])
    extra = {"median": round(statistics.median(runs[0]), 3)}
    extra["floor_median"] = round(statistics.median(runs[1]), 3)
    if note:
        extra["note"] = note  # type: ignore[assignment]
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
            if name == "bubblewrap":
                label += f", persistent sandbox, repeat {repeat + 1}"
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
            argv = _exec_chain(space.backend)
            _line(
                "bare spawn of setpriv + sh (native's argv before) vs bare spawn of the command",
                await _paired(runs, lambda argv=argv: _bare_once(argv), _bare_once),
                note="the exec per command (two with limits) the reaper's confinement replaced",
            )


def _exec_chain(backend: Any) -> list[str]:
    """The argv native ran before its reaper confined commands itself (no limits set: no
    ``prlimit`` in front)."""
    return [
        "/usr/bin/setpriv",
        f"--reuid={backend.uid}",
        f"--regid={backend.gid}",
        "--clear-groups",
        "--no-new-privs",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
        "/bin/sh",
        "-c",
        COMMAND,
    ]


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="finish in well under a minute")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentrig-bench-") as tmp:
        root = Path(tmp).resolve()
        root.chmod(0o777)
        (root / "f.py").write_text("".join(f"line = {i}\n" for i in range(200)))
        anyio.run(bench_bash, 20 if args.quick else 100, root, 3 if args.quick else 5)
        anyio.run(bench_read, 50 if args.quick else 500, root)


if __name__ == "__main__":
    main()
