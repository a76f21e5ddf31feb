"""Fault injection for the session-store crash tests: a child process under a libc shim.

``faultinject.c`` (beside this file) is compiled once per test session and preloaded into a
child Python that appends to a store; the shim makes the store's ``write``/``fsync`` calls
fail (EIO, ENOSPC, a short write) or kills the process inside one -- the real calls of the
real store, on a real file, the way a failing disk shows itself to the process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs

from agentrig.session import SessionEvent, parse_event

SHIM_SOURCE = Path(__file__).with_name("faultinject.c")


def build_shim(directory: Path) -> Path:
    """Compile the shim into ``directory``; the C compiler is set up by ``dev.py setup``."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler is not None, "a C compiler is needed (dev.py setup installs gcc)"
    target = directory / "faultinject.so"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O1", "-o", str(target), str(SHIM_SOURCE), "-ldl"],
        check=True,
    )
    return target


#: The child: append ``BATCHES`` batches of two events; after each, report what happened.
CHILD = """
import json, os, sys
from importlib.metadata import entry_points
import anyio
from agentrig.llm import UserMessage
from agentrig.session import (
    BrokenWriterError, Session, SessionStoreError, TurnStart, UserMessageEvent, dump_event,
)

KIND, BASE, OPTIONS, BATCHES = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
factory = entry_points(group="agentrig.session_stores")[KIND].load()
store = factory({"id": "main", "options": OPTIONS, "base_dir": BASE})

def say(kind, **data):
    print(json.dumps({"kind": kind, **data}), flush=True)

async def main():
    writer = await store.open_writer("ses_fault")
    os.environ["FAULT_ARMED"] = "1"  # setup done: from here on the shim counts and fails
    session = Session("ses_fault")
    for turn in range(1, BATCHES + 1):
        batch = [
            session.append(TurnStart(turn=turn)),
            session.append(UserMessageEvent(message=UserMessage.of(f"turn {turn} " + "x" * 300))),
        ]
        say("attempt", events=[dump_event(e) for e in batch])
        try:
            await writer.append(batch)
        except SessionStoreError as exc:
            say("failed", code=exc.code, message=str(exc))
            try:
                await writer.append([session.append(TurnStart(turn=turn + 1))])
            except BrokenWriterError as refused:
                say("refused", code=refused.code)
            else:
                say("accepted-after-failure")
            break
        say("confirmed", seqs=[e.seq for e in batch])
    await writer.aclose()
    await store.aclose()

anyio.run(main)
"""


@attrs.frozen
class ChildRun:
    """What the child reported, and how it ended."""

    returncode: int
    attempted: tuple[SessionEvent, ...]
    confirmed: tuple[int, ...]
    lines: tuple[dict[str, Any], ...]
    stderr: str

    def kinds(self) -> list[str]:
        return [line["kind"] for line in self.lines]

    @property
    def matching_calls(self) -> int:
        """The shim's count of calls it watched (printed when the child exits normally)."""
        for line in self.stderr.splitlines():
            if line.startswith("faultinject: "):
                return int(line.split()[1])
        raise AssertionError(f"the shim did not report its count:\n{self.stderr}")


def run_child(
    shim: Path,
    kind: str,
    base: Path,
    options: dict[str, Any],
    fault: dict[str, str],
    batches: int = 3,
    *,
    armed: bool = False,
) -> ChildRun:
    """Run the appending child under the shim with ``fault`` (the ``FAULT_*`` settings).

    The fault is armed once the child has opened its writer, or from the start (``armed``:
    the store's own setup -- creating files, a database schema -- meets it too).
    """
    env = {**os.environ, "LD_PRELOAD": str(shim), **fault}
    env.pop("FAULT_ARMED", None)
    if armed:
        env["FAULT_ARMED"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(base), json.dumps(options), str(batches)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = tuple(json.loads(line) for line in done.stdout.splitlines() if line.strip())
    attempted = tuple(
        parse_event(raw) for line in lines if line["kind"] == "attempt" for raw in line["events"]
    )
    confirmed = tuple(seq for line in lines if line["kind"] == "confirmed" for seq in line["seqs"])
    return ChildRun(done.returncode, attempted, confirmed, lines, done.stderr)
