"""Session stores given files they did not write, and sessions that never ran.

* gaps in the ``seq`` numbering are reported on load (as repeats and steps back are);
* a file that is not a session log -- random bytes, another program's JSONL, a file that is
  not a SQLite database, another program's database -- is refused with an error naming it,
  and left exactly as it was: never resumed with zero events and appended to;
* a writer that closes removes its lock file, so sessions that never ran leave nothing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path

import anyio
import pytest
from _store_support import StoreFactory, build_store, sample_events
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentrig
from agentrig.ids import AgentId
from agentrig.session import NotASessionLogError, SessionStore, sequence_problems

pytestmark = pytest.mark.anyio


def _session_path(kind: str, base: Path) -> Path:
    return base / ("state/sessions/ses_x.jsonl" if kind == "jsonl" else "state/db/sessions.sqlite3")


# ---- gaps ---------------------------------------------------------------------------------


async def test_a_gap_in_the_sequence_is_reported_on_load(store: SessionStore) -> None:
    events = sample_events("ses_gap", turns=2)  # seq 1..8
    writer = await store.open_writer("ses_gap")
    await writer.append([*events[:3], *events[5:]])  # 4 and 5 lost
    await writer.aclose()
    report = await store.load("ses_gap")
    assert [e.seq for e in report.events] == [1, 2, 3, 6, 7, 8]
    assert report.damaged
    assert report.detail == "events 4-5 are missing (seq jumps from 3 to 6)"


async def test_a_jsonl_line_removed_by_hand_is_reported_as_a_gap(tmp_path: Path) -> None:
    store = build_store("jsonl", tmp_path)
    writer = await store.open_writer("ses_x")
    await writer.append(sample_events("ses_x", turns=1))
    await writer.aclose()
    path = _session_path("jsonl", tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:1] + lines[2:]))
    report = await store.load("ses_x")
    assert report.detail == "event 2 is missing (seq jumps from 1 to 3)"


@given(st.lists(st.integers(min_value=1, max_value=40), max_size=30))
def test_sequence_problems_is_empty_exactly_for_1_to_n(seqs: list[int]) -> None:
    events = [e.model_copy(update={"seq": s}) for s, e in zip(seqs, _many(len(seqs)), strict=True)]
    problems = sequence_problems(events)
    assert (problems == []) == (seqs == list(range(1, len(seqs) + 1)))


def _many(n: int) -> list[agentrig.session.SessionEvent]:
    base = sample_events("ses_many", turns=8)
    return [base[i % len(base)] for i in range(n)]


# ---- files that are not session logs --------------------------------------------------------


async def _refused_everywhere(store: SessionStore, path: Path) -> None:
    """Load and open_writer both refuse, naming the file; the file is left as it was."""
    before = await anyio.Path(path).read_bytes()
    with pytest.raises(NotASessionLogError) as loading:
        await store.load("ses_x")
    assert str(path) in str(loading.value)
    assert loading.value.code == "session.not_a_log"
    with pytest.raises(NotASessionLogError) as opening:
        await store.open_writer("ses_x")
    assert str(path) in str(opening.value)
    assert await anyio.Path(path).read_bytes() == before
    assert not await anyio.Path(path.with_name(path.name + ".torn")).exists()


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(min_size=1, max_size=400).filter(lambda b: b"seq" not in b and b"{" not in b))
def test_random_bytes_are_not_resumed_as_a_jsonl_session(tmp_path: Path, garbage: bytes) -> None:
    store = build_store("jsonl", tmp_path)
    path = _session_path("jsonl", tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_bytes(garbage)
    path.chmod(0o600)
    anyio.run(_refused_everywhere, store, path)


_CLAUDE_TRANSCRIPT = [
    {"type": "user", "message": {"role": "user", "content": "hi"}, "uuid": "1"},
    {"type": "assistant", "message": {"role": "assistant", "content": "hello"}, "uuid": "2"},
]


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(
            "".join(json.dumps(r) + "\n" for r in _CLAUDE_TRANSCRIPT).encode(), id="other-jsonl"
        ),
        pytest.param(b'[{"seq": 1}]\n', id="json-array"),
        pytest.param(b"seq,time,data\n1,2,3\n", id="csv"),
        pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", id="png"),
    ],
)
async def test_another_format_is_not_resumed_as_a_jsonl_session(
    tmp_path: Path, content: bytes
) -> None:
    store = build_store("jsonl", tmp_path)
    path = _session_path("jsonl", tmp_path)
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_bytes(content)
    path.chmod(0o600)
    await _refused_everywhere(store, path)


async def test_a_damaged_log_is_still_a_log(tmp_path: Path) -> None:
    # damage here and there is reported, not refused: the readable events still load
    store = build_store("jsonl", tmp_path)
    writer = await store.open_writer("ses_x")
    await writer.append(sample_events("ses_x", turns=1))
    await writer.aclose()
    path = _session_path("jsonl", tmp_path)
    path.write_bytes(b"\x00garbage\n" + path.read_bytes())
    report = await store.load("ses_x")
    assert len(report.events) == 4
    assert report.damaged


async def test_a_file_that_is_not_a_sqlite_database_is_refused_naming_it(tmp_path: Path) -> None:
    path = _session_path("sqlite", tmp_path)
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_bytes(b"this is a text file, not a database\n" * 200)
    path.chmod(0o600)
    store = build_store("sqlite", tmp_path)
    try:
        for attempt in (store.load("ses_x"), store.open_writer("ses_x"), store.exists("ses_x")):
            with pytest.raises(NotASessionLogError) as caught:
                await attempt
            assert str(path) in str(caught.value)
            assert "not a SQLite database" in str(caught.value)
            assert "options.path" in str(caught.value)  # the fix
    finally:
        await store.aclose()
    assert path.read_bytes() == b"this is a text file, not a database\n" * 200


async def test_another_programs_sqlite_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = _session_path("sqlite", tmp_path)
    path.parent.mkdir(parents=True, mode=0o700)
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    other.commit()
    other.close()
    path.chmod(0o600)
    store = build_store("sqlite", tmp_path)
    try:
        with pytest.raises(NotASessionLogError, match="database of something else"):
            await store.open_writer("ses_x")
    finally:
        await store.aclose()
    check = sqlite3.connect(path)
    tables = {r[0] for r in check.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    check.close()
    assert tables == {"notes"}  # no events table was added to it


async def test_a_session_database_is_marked_as_ours(tmp_path: Path) -> None:
    store = build_store("sqlite", tmp_path)
    writer = await store.open_writer("ses_x")
    await writer.aclose()
    await store.aclose()
    check = sqlite3.connect(_session_path("sqlite", tmp_path))
    (application,) = check.execute("PRAGMA application_id").fetchone()
    check.close()
    assert application == 0x41475247


# ---- nothing left behind --------------------------------------------------------------------


def _leftovers(kind: str, base: Path) -> list[str]:
    root = base / "state"
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and p.name != "sessions.sqlite3"
    )


async def test_a_closed_writer_leaves_no_lock_file(
    store_kind: str, make_store: StoreFactory, tmp_path: Path
) -> None:
    store = make_store()
    try:
        for round_ in range(5):
            writer = await store.open_writer(f"ses_idle{round_}")
            await writer.aclose()
        writer = await store.open_writer("ses_used")
        await writer.append(sample_events("ses_used", turns=1))
        await writer.aclose()
        # a lock file removed by its holder is created afresh by the next writer
        again = await store.open_writer("ses_used")
        await again.aclose()
    finally:
        await store.aclose()
    expected = ["sessions/ses_used.jsonl"] if store_kind == "jsonl" else []
    assert _leftovers(store_kind, tmp_path) == expected


async def test_a_writer_still_excludes_a_second_one_after_locks_are_removed(
    make_store: StoreFactory,
) -> None:
    from agentrig.session import WriterConflictError

    store = make_store()
    try:
        first = await store.open_writer("ses_x")
        await first.aclose()  # removes the lock file
        second = await store.open_writer("ses_x")
        with pytest.raises(WriterConflictError):
            await store.open_writer("ses_x")
        await second.aclose()
        third = await store.open_writer("ses_x")
        await third.aclose()
    finally:
        await store.aclose()


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
async def test_an_agent_that_never_ran_leaves_no_file_in_the_sessions_folder(
    tmp_path: Path, kind: str
) -> None:
    options = (
        {"directory": str(tmp_path / "state/sessions")}
        if kind == "jsonl"
        else {"path": str(tmp_path / "state/db/sessions.sqlite3")}
    )
    config = {
        "providers": {"local": {"kind": "scripted", "options": {"script": []}}},
        "session_stores": {"main": {"kind": kind, "options": options}},
        "agents": {
            "assistant": {"provider": "local", "model": "scripted-1", "session_store": "main"}
        },
    }
    for _ in range(3):
        async with agentrig.open_runtime(config) as rt:
            rt.agent(AgentId("assistant"))  # created with a fresh session, never run
    assert _leftovers(kind, tmp_path) == []


async def test_a_narrowing_umask_still_gives_exactly_owner_only_files(
    store_kind: str, make_store: StoreFactory, tmp_path: Path
) -> None:
    previous = os.umask(0o277)  # takes the owner's own write bit from every create
    try:
        store = make_store()
        writer = await store.open_writer("ses_x")
        await writer.append(sample_events("ses_x", turns=1))
        modes = {
            str(p.relative_to(tmp_path)): stat.S_IMODE(p.stat().st_mode)
            for p in (tmp_path / "state").rglob("*")
        }
        await writer.aclose()
        await store.aclose()
    finally:
        os.umask(previous)
    lock = (
        "state/sessions/ses_x.lock"
        if store_kind == "jsonl"
        else ("state/db/sessions.sqlite3.locks/ses_x.lock")
    )
    assert modes[lock] == 0o600
    for name, mode in modes.items():
        assert mode in (0o600, 0o700), (name, oct(mode))
