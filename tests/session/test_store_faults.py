"""Session stores under injected faults, in the spirit of SQLite's crash testing.

A child process appends to a real store on a real file while ``faultinject.c`` (preloaded)
makes its ``write``/``fsync`` calls fail with EIO or ENOSPC, stores half a write (a disk
filling up), or kills the process inside a call -- at every boundary a clean run crosses.
Afterwards, in this process without faults:

* every event an ``append`` confirmed loads back, unchanged;
* nothing that was not attempted appears, and what loads is a prefix of what was attempted;
* a writer whose append failed refused every later append (it never confirmed anything
  behind a torn record);
* opening the session again repairs it, and appending continues with a clean log.
"""

from __future__ import annotations

import errno
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from _faults import ChildRun, build_shim, run_child
from _store_support import STORE_OPTIONS, build_store, sample_events

from agentrig.session import LoadReport, SessionEvent

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="LD_PRELOAD shim and /proc/self/fd"),
]

#: the path fragment of the files each store writes through
_MATCH = {"jsonl": "ses_fault.jsonl", "sqlite": "sessions.sqlite3"}


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_shim(tmp_path_factory.mktemp("shim"))


def _options(kind: str) -> dict[str, Any]:
    return {**STORE_OPTIONS[kind], "durable": True}


def _fault(kind: str, op: str, mode: str, after: int, code: int = errno.EIO) -> dict[str, str]:
    return {
        "FAULT_MATCH": _MATCH[kind],
        "FAULT_OP": op,
        "FAULT_MODE": mode,
        "FAULT_AFTER": str(after),
        "FAULT_ERRNO": str(code),
    }


async def _load(kind: str, base: Path) -> LoadReport:
    store = build_store(kind, base, durable=True)
    try:
        if not await store.exists("ses_fault"):  # nothing was ever committed
            return LoadReport("ses_fault", ())
        return await store.load("ses_fault")
    finally:
        await store.aclose()


async def _continue(kind: str, base: Path, after: tuple[SessionEvent, ...]) -> LoadReport:
    """Open the session again without faults, append two events, load it back."""
    store = build_store(kind, base, durable=True)
    try:
        writer = await store.open_writer("ses_fault")
        start = after[-1].seq + 1 if after else 1
        follow = [
            e.model_copy(update={"seq": start + i})
            for i, e in enumerate(sample_events("ses_fault", 1)[:2])
        ]
        await writer.append(follow)
        await writer.aclose()
        report = await store.load("ses_fault")
    finally:
        await store.aclose()
    assert list(report.events) == [*after, *follow]
    return report


def _check_invariants(kind: str, base: Path, run: ChildRun) -> LoadReport:
    report = anyio.run(_load, kind, base)
    loaded = report.events
    # what loads is a prefix of what was attempted, and holds every confirmed event
    assert list(loaded) == list(run.attempted[: len(loaded)]), report.detail
    assert [e.seq for e in loaded][: len(run.confirmed)] == list(run.confirmed)
    return report


# ---- a failing write or flush -------------------------------------------------------------

_FAILURES = [
    pytest.param("write", "fail", errno.ENOSPC, id="write-enospc"),
    pytest.param("write", "short", errno.ENOSPC, id="short-write-then-enospc"),
    pytest.param("write", "once", errno.EIO, id="write-eio-once"),
    pytest.param("fsync", "fail", errno.EIO, id="fsync-eio"),
    pytest.param("fsync", "once", errno.EIO, id="fsync-eio-once"),
]


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
@pytest.mark.parametrize(("op", "mode", "code"), _FAILURES)
@pytest.mark.parametrize("after", [0, 2])
def test_a_failed_append_breaks_its_writer_and_loses_nothing_confirmed(
    shim: Path, tmp_path: Path, kind: str, op: str, mode: str, code: int, after: int
) -> None:
    run = run_child(shim, kind, tmp_path, _options(kind), _fault(kind, op, mode, after, code))
    assert run.returncode == 0, run.stderr
    kinds = run.kinds()
    assert "failed" in kinds, f"the fault never reached the store: {kinds}\n{run.stderr}"
    # the failure is reported as a store error naming the file, then the writer refuses
    failure = run.lines[kinds.index("failed")]
    assert failure["code"] == "session.store"
    assert str(tmp_path) in failure["message"]
    assert kinds[kinds.index("failed") + 1] == "refused"
    assert "accepted-after-failure" not in kinds

    report = _check_invariants(kind, tmp_path, run)
    # a failed batch is not stored: the log is exactly the confirmed events
    assert [e.seq for e in report.events] == list(run.confirmed)
    if kind == "jsonl":
        assert not report.damaged, report.detail
    after_repair = anyio.run(_continue, kind, tmp_path, report.events)
    if kind == "jsonl":
        assert not after_repair.damaged, after_repair.detail


# ---- a crash inside every write and every flush ------------------------------------------


def _boundaries(shim: Path, base: Path, kind: str, op: str) -> int:
    """How many matching calls a clean run makes (the shim counts; no fault fires)."""
    run = run_child(shim, kind, base, _options(kind), _fault(kind, op, "fail", 10**9), armed=True)
    assert run.returncode == 0, run.stderr
    assert len(run.confirmed) == 6
    return run.matching_calls


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
@pytest.mark.parametrize("op", ["write", "fsync"])
def test_a_process_killed_inside_any_write_or_flush_leaves_a_loadable_repairable_log(
    shim: Path, tmp_path: Path, kind: str, op: str
) -> None:
    count = _boundaries(shim, tmp_path / "clean", kind, op)
    assert count >= 3  # one per batch at least
    for boundary in range(count):
        base = tmp_path / f"kill-{boundary}"
        fault = _fault(kind, op, "kill", boundary)
        run = run_child(shim, kind, base, _options(kind), fault, armed=True)
        assert run.returncode == -signal.SIGKILL, (boundary, run.stderr)
        report = _check_invariants(kind, base, run)
        if kind == "jsonl" and report.damaged:
            assert report.detail is not None
            assert report.detail.startswith("torn final line"), report.detail
        repaired = anyio.run(_continue, kind, base, report.events)
        if kind == "jsonl":
            assert not repaired.damaged, (boundary, repaired.detail)
