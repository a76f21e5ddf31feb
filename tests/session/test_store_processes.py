"""Session stores across processes: a writer in another process, and real crashes.

Each test starts a child Python that uses the same store (built through its entry point)
and either holds a writer, or is killed with SIGKILL in the middle of writing.
"""

from __future__ import annotations

import signal
import sys
import textwrap
from pathlib import Path

import anyio
import anyio.abc
import pytest
from _store_support import STORE_OPTIONS, StoreFactory, build_store, sample_events

from agentrig.session import SessionStore, WriterConflictError, dump_event, parse_event

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.subprocess,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and flock"),
]

_PRELUDE = """
import json, os, signal, sys, time
from importlib.metadata import entry_points
from pathlib import Path
import anyio
from agentrig.session import Session, UserMessageEvent, TurnStart, dump_event, parse_event
from agentrig.llm import UserMessage

KIND, BASE, OPTIONS = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
factory = entry_points(group="agentrig.session_stores")[KIND].load()
store = factory({"id": "main", "options": OPTIONS, "base_dir": BASE})

def say(text):
    sys.stdout.write(text + "\\n")
    sys.stdout.flush()
"""


async def _start(kind: str, base: Path, body: str) -> anyio.abc.Process:
    script = _PRELUDE + textwrap.dedent(body)
    import json

    return await anyio.open_process(
        [sys.executable, "-c", script, kind, str(base), json.dumps(STORE_OPTIONS[kind])],
        stdin=-1,
        stdout=-1,
        stderr=-1,
    )


async def _read_line(process: anyio.abc.Process) -> str:
    assert process.stdout is not None
    data = b""
    with anyio.fail_after(30):
        while not data.endswith(b"\n"):
            try:
                data += await process.stdout.receive(1)
            except anyio.EndOfStream:
                stderr = b""
                if process.stderr is not None:
                    async for chunk in process.stderr:
                        stderr += chunk
                raise AssertionError(f"child ended early: {stderr.decode()}") from None
    return data.decode().strip()


async def test_a_writer_in_another_process_is_refused_until_it_closes(
    store_kind: str, tmp_path: Path, make_store: StoreFactory
) -> None:
    child = await _start(
        store_kind,
        tmp_path,
        """
        async def main():
            writer = await store.open_writer("ses_shared")
            say("holding")
            sys.stdin.readline()          # hold the writer until the parent says so
            await writer.aclose()
            say("released")
            sys.stdin.readline()
        anyio.run(main)
        """,
    )
    store = make_store()
    try:
        assert await _read_line(child) == "holding"
        with pytest.raises(WriterConflictError, match="ses_shared"):
            await store.open_writer("ses_shared")

        assert child.stdin is not None
        await child.stdin.send(b"go\n")
        assert await _read_line(child) == "released"
        writer = await store.open_writer("ses_shared")  # free now
        await writer.aclose()
        await child.stdin.send(b"bye\n")
        with anyio.fail_after(30):
            assert await child.wait() == 0
    finally:
        await store.aclose()
        if child.returncode is None:
            child.kill()
        await child.aclose()


async def test_a_killed_writer_process_releases_its_session(
    store_kind: str, tmp_path: Path, make_store: StoreFactory
) -> None:
    child = await _start(
        store_kind,
        tmp_path,
        """
        async def main():
            writer = await store.open_writer("ses_orphan")
            say("holding")
            sys.stdin.readline()
        anyio.run(main)
        """,
    )
    store = make_store()
    try:
        assert await _read_line(child) == "holding"
        with pytest.raises(WriterConflictError):
            await store.open_writer("ses_orphan")
        child.send_signal(signal.SIGKILL)
        with anyio.fail_after(30):
            assert await child.wait() == -signal.SIGKILL
        writer = await store.open_writer("ses_orphan")  # the kernel dropped the dead lock
        await writer.aclose()
    finally:
        await store.aclose()
        if child.returncode is None:
            child.kill()
        await child.aclose()


# ---- JSONL: a real crash while appending --------------------------------------------------

_APPEND_LOOP = """
async def main():
    writer = await store.open_writer("ses_crash")
    session = Session("ses_crash")
    big = "x" * 400_000           # large lines: a kill lands inside a write() more often
    say("writing")
    turn = 0
    while True:
        turn += 1
        events = [
            session.append(TurnStart(turn=turn)),
            session.append(UserMessageEvent(message=UserMessage.of(f"{turn} {big}"))),
        ]
        await writer.append(events)
        if turn == 3:
            say("written")
anyio.run(main)
"""


async def _crash_jsonl_writer(tmp_path: Path) -> bytes:
    """Run the append loop in a child, SIGKILL it mid-stream; return the file's bytes."""
    child = await _start("jsonl", tmp_path, _APPEND_LOOP)
    try:
        assert await _read_line(child) == "writing"
        assert await _read_line(child) == "written"
        await anyio.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        with anyio.fail_after(30):
            assert await child.wait() == -signal.SIGKILL
    finally:
        if child.returncode is None:
            child.kill()
        await child.aclose()
    return (tmp_path / "state/sessions/ses_crash.jsonl").read_bytes()


async def test_jsonl_writer_killed_mid_append_leaves_a_loadable_prefix(tmp_path: Path) -> None:
    raw = await _crash_jsonl_writer(tmp_path)
    store = build_store("jsonl", tmp_path)
    complete_lines = raw[: raw.rfind(b"\n") + 1].count(b"\n")
    torn = raw[raw.rfind(b"\n") + 1 :]

    report = await store.load("ses_crash")

    # every complete event, in order, nothing invented
    assert len(report.events) == complete_lines >= 6
    assert [e.seq for e in report.events] == list(range(1, complete_lines + 1))
    assert report.damaged is bool(torn)
    if torn:
        assert report.detail is not None
        assert "torn final line" in report.detail

    # the next writer sets the torn bytes aside and appends cleanly
    writer = await store.open_writer("ses_crash")
    aside = tmp_path / "state/sessions/ses_crash.jsonl.torn"
    assert (aside.read_bytes() if aside.exists() else b"") == torn
    resumed = list(report.events)
    extra = sample_events("ses_crash", turns=1)
    follow = [e.model_copy(update={"seq": resumed[-1].seq + i + 1}) for i, e in enumerate(extra)]
    await writer.append(follow)
    await writer.aclose()
    after = await store.load("ses_crash")
    assert not after.damaged
    assert list(after.events) == resumed + follow


_FILLING_LOOP = """
import resource
from agentrig.session import BrokenWriterError, SessionStoreError
# Cap the file size inside the third batch: the write that crosses the cap is cut short by
# the kernel (a partial line reaches the disk) and the next one fails -- a disk filling up.
resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, 1_000_000))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write past the cap fails with EFBIG

async def main():
    writer = await store.open_writer("ses_crash")
    session = Session("ses_crash")
    big = "x" * 400_000
    turn = 0
    while True:
        turn += 1
        events = [
            session.append(TurnStart(turn=turn)),
            session.append(UserMessageEvent(message=UserMessage.of(f"{turn} {big}"))),
        ]
        try:
            await writer.append(events)
        except SessionStoreError:
            say(f"failed in batch {turn}")
            try:
                await writer.append([session.append(TurnStart(turn=turn + 1))])
            except BrokenWriterError:
                say("later append refused")
            os.kill(os.getpid(), signal.SIGKILL)
anyio.run(main)
"""


async def test_jsonl_append_cut_short_by_a_full_disk_is_cut_back_and_breaks_the_writer(
    tmp_path: Path,
) -> None:
    child = await _start("jsonl", tmp_path, _FILLING_LOOP)
    try:
        assert await _read_line(child) == "failed in batch 3"
        assert await _read_line(child) == "later append refused"
        with anyio.fail_after(30):
            assert await child.wait() == -signal.SIGKILL
    finally:
        if child.returncode is None:
            child.kill()
        await child.aclose()
    path = tmp_path / "state/sessions/ses_crash.jsonl"
    raw = path.read_bytes()
    # the partial third batch was cut back: the file ends on the last confirmed line
    assert raw.endswith(b"\n")
    assert len(raw) < 1_000_000

    store = build_store("jsonl", tmp_path)
    report = await store.load("ses_crash")
    assert not report.damaged, report.detail
    assert [e.seq for e in report.events] == [1, 2, 3, 4]  # the two confirmed batches

    writer = await store.open_writer("ses_crash")
    follow = [e.model_copy(update={"seq": 5 + i}) for i, e in enumerate(sample_events("x", 1)[1:])]
    await writer.append(follow)
    await writer.aclose()
    after = await store.load("ses_crash")
    assert not after.damaged
    assert list(after.events) == [*report.events, *follow]
    for event in after.events:
        assert parse_event(dump_event(event)) == event


# ---- SQLite: a process killed inside an open transaction ----------------------------------


async def test_sqlite_transaction_killed_before_commit_is_rolled_back_and_reported(
    tmp_path: Path,
) -> None:
    store: SessionStore = build_store("sqlite", tmp_path)
    committed = sample_events("ses_txn")
    writer = await store.open_writer("ses_txn")
    await writer.append(committed)
    await writer.aclose()
    await store.aclose()

    child = await _start(
        "sqlite",
        tmp_path,
        """
        session = Session("ses_txn")
        connection = store.connection()
        connection.execute("PRAGMA cache_size=1")     # spill dirty pages into the database file
        connection.isolation_level = None
        connection.execute("BEGIN")
        for seq in range(9, 400):
            event = session.append(UserMessageEvent(message=UserMessage.of("u" * 2000)))
            event = event.model_copy(update={"seq": seq})
            connection.execute(
                "INSERT INTO events (session_id, seq, body) VALUES (?, ?, ?)",
                ("ses_txn", seq, dump_event(event)),
            )
        say("inserted")
        os.kill(os.getpid(), signal.SIGKILL)
        """,
    )
    try:
        assert await _read_line(child) == "inserted"
        with anyio.fail_after(30):
            assert await child.wait() == -signal.SIGKILL
    finally:
        if child.returncode is None:
            child.kill()
        await child.aclose()
    journal = tmp_path / "state/db/sessions.sqlite3-journal"
    assert journal.exists(), "the killed transaction should leave its rollback journal"

    store = build_store("sqlite", tmp_path)
    try:
        report = await store.load("ses_txn")
        assert list(report.events) == committed  # only what was committed
        assert report.damaged
        assert report.detail is not None
        assert "interrupted transaction" in report.detail
        assert not journal.exists() or journal.stat().st_size == 0  # rolled back

        # the store keeps working: a writer appends after the committed events
        writer = await store.open_writer("ses_txn")
        more = sample_events("ses_txn", turns=3)[8:]
        await writer.append(more)
        await writer.aclose()
        assert list((await store.load("ses_txn")).events) == committed + more
    finally:
        await store.aclose()
