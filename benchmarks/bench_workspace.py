"""Workspace toolset: a sandboxed ``Bash`` round trip against a bare spawn of the same command.

    python benchmarks/bench_workspace.py [--quick]

For each sandbox backend that can run here (``bubblewrap`` needs ``bwrap``; ``native`` needs
root and the ``nobody`` user) it times ``Bash.execute`` of ``git --version`` in a temporary
workspace -- validation, the git filter check, the reaper, the sandbox's own setup, bounded
output -- and, in the same run, the floor: ``anyio.open_process(["/bin/sh", "-c", COMMAND])``
with its output read.  Best of N for both; the target is a ratio of at most 1.5.  A second
line compares the same round trip with a bare spawn of the backend's own argv (``bwrap ...``
or ``setpriv ...``): what the tool itself adds over the sandbox.
A ``Read`` of a 200-line file is reported too (information).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _common import compare, emit

COMMAND = "git --version"


async def _bare(runs: int, argv: list[str] | None = None) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter_ns()
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
        best = min(best, time.perf_counter_ns() - start)
    return best / 1e6


async def _sandboxed(space: Any, runs: int) -> float:
    from agentrig.builtins.workspace import BASH, WORKSPACE
    from agentrig.cancel import CancelSignal
    from agentrig.kernel.services import Services
    from agentrig.tools import ToolContext, check_input

    services = Services()
    services.provide(WORKSPACE, space)
    ctx = ToolContext(
        signal=CancelSignal(), tool_id="Bash", call_id="c", invocation_id="i", services=services
    )
    value = check_input(BASH, {"command": COMMAND}).value
    await BASH.execute(value, ctx)  # the reaper launcher starts with the first command
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter_ns()
        out = await BASH.execute(value, ctx)
        best = min(best, time.perf_counter_ns() - start)
        assert "git version" in out, out
    return best / 1e6


def _space(root: Path, **sandbox: Any) -> Any:
    from agentrig.builtins.workspace import SandboxConfig, Workspace, WorkspaceConfig, backend_for

    settings = SandboxConfig.model_validate(sandbox)
    return Workspace(
        root=root, config=WorkspaceConfig(sandbox=settings), backend=backend_for(settings, root)
    )


async def bench_bash(runs: int, root: Path) -> None:
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
        space = _space(root, **sandbox)
        sandboxed = await _sandboxed(space, runs)
        bare = await _bare(runs)
        confined = await _bare(runs, space.backend.argv(COMMAND, root))
        compare(
            f"Bash round trip ({name}) vs bare spawn of the same command",
            sandboxed,
            bare,
            "ms/call",
            target=1.5,
        )
        compare(
            f"Bash round trip ({name}) vs a bare spawn of the sandbox's own argv",
            sandboxed,
            confined,
            "ms/call",
            target=1.5,
            note="what the tool adds (reaper, checks, bounded reading) over the sandbox",
        )


async def bench_read(runs: int, root: Path) -> None:
    from agentrig.builtins.workspace import READ, WORKSPACE, Workspace
    from agentrig.cancel import CancelSignal
    from agentrig.kernel.services import Services
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
        anyio.run(bench_bash, 10 if args.quick else 40, root)
        anyio.run(bench_read, 50 if args.quick else 500, root)


if __name__ == "__main__":
    main()
