"""The session-store behaviour suite, run against every built-in store (jsonl and sqlite)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _store_support import StoreFactory, build_store, sample_events

from agentrig.session import (
    SessionEvent,
    SessionStore,
    SessionStoreError,
    WriterConflictError,
    dump_event,
    parse_event,
)

pytestmark = pytest.mark.anyio


def _dicts(events: Any) -> list[dict[str, Any]]:
    return [e.model_dump(mode="json") for e in events]


# ---- round trip ---------------------------------------------------------------------------


async def test_append_then_load_round_trips_every_event(store: SessionStore) -> None:
    events = sample_events("ses_roundtrip")
    writer = await store.open_writer("ses_roundtrip")
    await writer.append(events[:3])  # in two batches, as an agent writes them
    await writer.append(events[3:])
    await writer.aclose()

    report = await store.load("ses_roundtrip")

    assert report.session_id == "ses_roundtrip"
    assert not report.damaged
    assert report.detail is None
    assert list(report.events) == events
    assert [e.seq for e in report.events] == list(range(1, len(events) + 1))


async def test_a_new_store_instance_reads_what_another_wrote(make_store: StoreFactory) -> None:
    events = sample_events("ses_reopen")
    first = make_store()
    writer = await first.open_writer("ses_reopen")
    await writer.append(events)
    await writer.aclose()
    await first.aclose()

    second = make_store()
    try:
        assert (await second.load("ses_reopen")).events == tuple(events)
        assert await second.exists("ses_reopen")
        assert await second.list_sessions() == ("ses_reopen",)
    finally:
        await second.aclose()


async def test_exists_and_list_sessions_see_only_sessions_with_events(
    store: SessionStore,
) -> None:
    assert await store.list_sessions() == ()
    assert not await store.exists("ses_a")
    writer = await store.open_writer("ses_a")
    assert not await store.exists("ses_a")  # nothing written yet: no session
    await writer.append(sample_events("ses_a", turns=1))
    await writer.aclose()
    idle = await store.open_writer("ses_never_written")
    await idle.aclose()

    assert await store.exists("ses_a")
    assert not await store.exists("ses_never_written")
    assert await store.list_sessions() == ("ses_a",)


async def test_loading_a_missing_session_is_a_clear_error(store: SessionStore) -> None:
    with pytest.raises(SessionStoreError, match="no stored session 'ses_missing'"):
        await store.load("ses_missing")


async def test_an_invalid_session_id_is_refused_before_touching_files(store: SessionStore) -> None:
    from agentrig.errors import InvalidIdError

    with pytest.raises(InvalidIdError):
        await store.open_writer("../escape")


async def test_a_closed_writer_refuses_to_append(store: SessionStore) -> None:
    writer = await store.open_writer("ses_closed")
    await writer.aclose()
    await writer.aclose()  # idempotent
    with pytest.raises(SessionStoreError, match="closed"):
        await writer.append(sample_events("ses_closed", turns=1))


# ---- unknown plugin variants --------------------------------------------------------------

UNKNOWN_RAW: dict[str, Any] = {
    "seq": 2,
    "time": 1722.25,
    "data": {
        "type": "acme/bookmark",  # no installed plugin registers this variant
        "label": "héllo — wörld",
        "nested": {"items": [1, 2.5, None, True, "x"], "empty": {}},
        "zeta": 0,
        "alpha": [],
    },
}


async def test_unknown_plugin_variants_survive_load_and_rewrite_unchanged(
    store: SessionStore,
) -> None:
    known = sample_events("ses_plugin", turns=1)
    raw_events = [
        known[0].model_dump(mode="json"),
        UNKNOWN_RAW,
        *({**e.model_dump(mode="json"), "seq": e.seq + 1} for e in known[1:]),
    ]
    writer = await store.open_writer("ses_plugin")
    await writer.append([parse_event(r) for r in raw_events])
    await writer.aclose()

    loaded = await store.load("ses_plugin")
    assert not loaded.damaged
    assert _dicts(loaded.events) == raw_events
    assert loaded.events[1].type == "acme/bookmark"

    # re-append the loaded events to a new session, load again: byte-for-byte the same data
    copy = await store.open_writer("ses_plugin_copy")
    await copy.append(loaded.events)
    await copy.aclose()
    reloaded = await store.load("ses_plugin_copy")
    assert _dicts(reloaded.events) == raw_events
    assert reloaded.events[1].model_dump(mode="json") == UNKNOWN_RAW
    assert [dump_event(e) for e in reloaded.events] == [dump_event(e) for e in loaded.events]
    # the stored form is the raw event behind the current version (``{"v":2,...``)
    assert (
        dump_event(reloaded.events[1])
        == '{"v":2,' + json.dumps(UNKNOWN_RAW, ensure_ascii=False, separators=(",", ":"))[1:]
    )


# ---- one writer per session ---------------------------------------------------------------


async def test_a_second_writer_in_the_same_process_is_refused_until_the_first_closes(
    store: SessionStore, make_store: StoreFactory
) -> None:
    first = await store.open_writer("ses_busy")
    await first.append(sample_events("ses_busy", turns=1))

    with pytest.raises(WriterConflictError, match="ses_busy") as caught:
        await store.open_writer("ses_busy")
    assert caught.value.code == "session.writer_conflict"
    other_instance = make_store()  # a second store over the same files conflicts as well
    try:
        with pytest.raises(WriterConflictError):
            await other_instance.open_writer("ses_busy")
        # another session is independent
        unrelated = await other_instance.open_writer("ses_other")
        await unrelated.aclose()

        await first.aclose()
        second = await other_instance.open_writer("ses_busy")
        await second.append(sample_events("ses_busy", turns=2)[4:])
        await second.aclose()
    finally:
        await other_instance.aclose()
    assert len((await store.load("ses_busy")).events) == 8


# ---- crash damage: JSONL torn line --------------------------------------------------------


@pytest.fixture
def jsonl_store(tmp_path: Path) -> SessionStore:
    return build_store("jsonl", tmp_path)


async def test_jsonl_torn_last_line_loads_every_complete_event_and_reports_it(
    jsonl_store: SessionStore, tmp_path: Path
) -> None:
    events = sample_events("ses_torn")
    writer = await jsonl_store.open_writer("ses_torn")
    await writer.append(events[:5])
    await writer.aclose()
    path = tmp_path / "state/sessions/ses_torn.jsonl"
    torn = dump_event(events[5]).encode()[:17]  # half a line: what a crash mid-write leaves
    with path.open("ab") as file:
        file.write(torn)

    report = await jsonl_store.load("ses_torn")
    assert list(report.events) == events[:5]
    assert report.damaged
    assert report.detail is not None
    assert "torn final line" in report.detail
    assert f"{len(torn)} bytes" in report.detail

    # the next writer moves the torn bytes aside and appends cleanly after the last whole line
    writer = await jsonl_store.open_writer("ses_torn")
    assert (tmp_path / "state/sessions/ses_torn.jsonl.torn").read_bytes() == torn
    await writer.append(events[5:])
    await writer.aclose()
    after = await jsonl_store.load("ses_torn")
    assert not after.damaged
    assert list(after.events) == events
    assert path.read_bytes().endswith(b"\n")
    assert await jsonl_store.list_sessions() == ("ses_torn",)


async def test_jsonl_unreadable_complete_line_is_reported_and_skipped(
    jsonl_store: SessionStore, tmp_path: Path
) -> None:
    events = sample_events("ses_garbled", turns=1)
    writer = await jsonl_store.open_writer("ses_garbled")
    await writer.append(events[:2])
    await writer.aclose()
    path = tmp_path / "state/sessions/ses_garbled.jsonl"
    with path.open("ab") as file:
        file.write(b"{not json}\n" + "".join(dump_event(e) + "\n" for e in events[2:]).encode())

    report = await jsonl_store.load("ses_garbled")
    assert list(report.events) == events
    assert report.damaged
    assert report.detail is not None
    assert "line 3 unreadable" in report.detail


# ---- owner-only files ---------------------------------------------------------------------


@pytest.fixture
def umask_zero() -> Iterator[None]:
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
@pytest.mark.usefixtures("umask_zero")
async def test_files_and_directories_are_created_owner_only_under_umask_zero(
    store_kind: str, tmp_path: Path
) -> None:
    store = build_store(store_kind, tmp_path)
    try:
        writer = await store.open_writer("ses_private")
        await writer.append(sample_events("ses_private", turns=1))
        await writer.aclose()
        if store_kind == "jsonl":
            # also leave a torn tail, so the next writer creates the .torn file
            with (tmp_path / "state/sessions/ses_private.jsonl").open("ab") as file:
                file.write(b'{"seq":')
            await (await store.open_writer("ses_private")).aclose()
        await store.load("ses_private")
        held = await store.open_writer("ses_private")  # its lock file exists while it is open
        created = [p for p in (tmp_path / "state").rglob("*")] + [tmp_path / "state"]
        modes = {path: (path.is_dir(), _mode(path)) for path in created}
        await held.aclose()
    finally:
        await store.aclose()

    assert len(created) >= 4
    for path, (is_dir, mode) in modes.items():
        want = 0o700 if is_dir else 0o600
        assert mode == want, f"{path.relative_to(tmp_path)} is {oct(mode)}"
    names = {p.name for p in created}
    if store_kind == "jsonl":
        assert {"sessions", "ses_private.jsonl", "ses_private.lock"} <= names
        assert "ses_private.jsonl.torn" in names
    else:
        assert {"db", "sessions.sqlite3", "sessions.sqlite3.locks", "ses_private.lock"} <= names


def test_parse_event_keeps_raw_dict_input_unchanged() -> None:
    event: SessionEvent = parse_event(dict(UNKNOWN_RAW))
    assert event.model_dump(mode="json") == UNKNOWN_RAW
