"""Properties of the JSONL store over files a crash or a bad disk could leave.

* cut anywhere: a log cut at any byte (what a crash can leave) loads every event whose
  line is whole, reports a torn tail when there is one, and the next writer continues it
  into a clean log;
* garbage anywhere: bytes overwritten anywhere in a log never make ``load`` fail with
  anything but a store error -- it returns what still reads and reports the rest (a gap
  included), or refuses a file in which nothing reads.  (Garbage that happens to leave a
  well-formed event is not detectable without sealing; see docs/security.md.)
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from _store_support import build_store, sample_events
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentrig.session import SessionStoreError, dump_event, sequence_problems

EVENTS = sample_events("ses_prop", turns=3)
LINES = [(dump_event(e) + "\n").encode("utf-8") for e in EVENTS]
LOG = b"".join(LINES)

_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _write_log(base: Path, data: bytes) -> Path:
    path = base / "state/sessions/ses_prop.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.parent.parent.chmod(0o700)
    path.write_bytes(data)
    path.chmod(0o600)
    return path


@_SETTINGS
@given(cut=st.integers(min_value=1, max_value=len(LOG)))
def test_a_log_cut_at_any_byte_loads_its_whole_lines_and_continues_cleanly(
    tmp_path_factory: pytest.TempPathFactory, cut: int
) -> None:
    base = tmp_path_factory.mktemp("cut")
    _write_log(base, LOG[:cut])
    whole = sum(1 for end in _line_ends() if end <= cut)

    async def check() -> None:
        store = build_store("jsonl", base)
        report = await store.load("ses_prop")
        assert list(report.events) == EVENTS[:whole]
        assert report.damaged == (cut not in _line_ends())
        writer = await store.open_writer("ses_prop")
        await writer.append(EVENTS[whole:])
        await writer.aclose()
        after = await store.load("ses_prop")
        assert list(after.events) == EVENTS
        assert not after.damaged

    anyio.run(check)


def _line_ends() -> list[int]:
    ends, total = [], 0
    for line in LINES:
        total += len(line)
        ends.append(total)
    return ends


@_SETTINGS
@given(
    patches=st.lists(
        st.tuples(st.integers(min_value=0, max_value=len(LOG) - 1), st.binary(min_size=1)),
        min_size=1,
        max_size=4,
    )
)
def test_garbage_written_over_a_log_is_reported_never_a_crash(
    tmp_path_factory: pytest.TempPathFactory, patches: list[tuple[int, bytes]]
) -> None:
    data = bytearray(LOG)
    for offset, garbage in patches:
        data[offset : offset + len(garbage)] = garbage
    base = tmp_path_factory.mktemp("garbage")
    _write_log(base, bytes(data))

    async def check() -> None:
        store = build_store("jsonl", base)
        try:
            report = await store.load("ses_prop")
        except SessionStoreError:
            return  # refused, naming the file (nothing in it reads)
        # what loads is whole events; anything out of order or missing is reported
        assert len(report.events) <= len(EVENTS)
        if not report.damaged:
            assert sequence_problems(report.events) == []
            assert [e.seq for e in report.events] == list(range(1, len(report.events) + 1))

    anyio.run(check)


def _sqlite_log(base: Path) -> Path:
    async def write() -> None:
        store = build_store("sqlite", base)
        writer = await store.open_writer("ses_prop")
        await writer.append(EVENTS)
        await writer.aclose()
        await store.aclose()

    anyio.run(write)
    return base / "state/db/sessions.sqlite3"


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_garbage_written_over_a_session_database_is_an_error_or_damage_never_a_crash(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    base = tmp_path_factory.mktemp("sqlite")
    path = _sqlite_log(base)
    raw = bytearray(path.read_bytes())
    for _ in range(data.draw(st.integers(min_value=1, max_value=4))):
        offset = data.draw(st.integers(min_value=0, max_value=len(raw) - 1))
        garbage = data.draw(st.binary(min_size=1, max_size=64))
        raw[offset : offset + len(garbage)] = garbage
    path.write_bytes(bytes(raw[: len(path.read_bytes())]))

    async def check() -> list[str]:
        errors: list[str] = []
        store = build_store("sqlite", base)
        try:
            for name in ("exists", "load", "list_sessions"):
                try:
                    if name == "exists":
                        await store.exists("ses_prop")
                    elif name == "load":
                        report = await store.load("ses_prop")
                        assert len(report.events) <= len(EVENTS)
                    else:
                        await store.list_sessions()
                except SessionStoreError as exc:
                    errors.append(str(exc))
        finally:
            await store.aclose()
        return errors

    for message in anyio.run(check):
        assert str(path) in message  # every error names the database


def test_rows_of_the_wrong_storage_class_or_bad_utf8_are_errors_not_crashes(
    tmp_path: Path,
) -> None:
    """What random garbage found: a blob session id, and text that is not UTF-8."""
    import sqlite3

    path = _sqlite_log(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO events (session_id, seq, body) VALUES (x'80', 1, 'x')")
    db.close()

    async def listed() -> tuple[str, ...]:
        store = build_store("sqlite", tmp_path)
        try:
            return await store.list_sessions()
        finally:
            await store.aclose()

    assert anyio.run(listed) == ("ses_prop",)

    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO events (session_id, seq, body) VALUES (CAST(x'80ff' AS TEXT), 1, 'x')"
        )
        db.execute("UPDATE events SET body = CAST(x'c3' AS TEXT) WHERE seq = 2")
    db.close()

    async def errors() -> list[str]:
        store = build_store("sqlite", tmp_path)
        found = []
        try:
            for call in (store.list_sessions(), store.load("ses_prop")):
                with pytest.raises(SessionStoreError) as info:
                    await call
                found.append(str(info.value))
        finally:
            await store.aclose()
        return found

    listing, loading = anyio.run(errors)
    assert "cannot read the session database" in listing
    assert "cannot read session 'ses_prop'" in loading
