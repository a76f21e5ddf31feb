"""Golden session data of version 1 loads through every file-backed store of today.

The files under golden/v1 are what a user's disk held before events were versioned; each
store migrates them on read (``tool/result/stored``'s ``size``/``shown`` became
``size_bytes``/``shown_bytes``) without rewriting them, and a file of a version newer than
the code is refused by name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _golden import copy_golden
from make_golden import SESSION, session_events

from agentrig.builtins._jsonl_store import JsonlSessionStore
from agentrig.builtins._sqlite_store import SqliteSessionStore
from agentrig.schemas import SchemaTooNewError
from agentrig.session import SESSION_EVENT_VERSION, SessionEvent, dump_event, parse_event

pytestmark = pytest.mark.anyio


def _assert_today(events: tuple[SessionEvent, ...]) -> None:
    expected = session_events()
    assert [e.model_dump(mode="json") for e in events] == [
        e.model_dump(mode="json") for e in expected
    ]
    stored = next(e for e in events if e.type == "tool/result/stored")
    assert (stored.data.size_bytes, stored.data.shown_bytes) == (4096, 64)


async def test_golden_jsonl_loads_migrated_and_is_not_rewritten(tmp_path: Path) -> None:
    data = copy_golden("v1", tmp_path / "g")
    path = data / "jsonl" / f"{SESSION}.jsonl"
    before = path.read_bytes()
    report = await JsonlSessionStore(data / "jsonl").load(SESSION)
    assert not report.damaged, report.detail
    _assert_today(report.events)
    assert path.read_bytes() == before


async def test_golden_sqlite_loads_migrated(tmp_path: Path) -> None:
    data = copy_golden("v1", tmp_path / "g")
    store = SqliteSessionStore(data / "sessions.sqlite3")
    try:
        report = await store.load(SESSION)
    finally:
        await store.aclose()
    assert not report.damaged, report.detail
    _assert_today(report.events)


async def test_golden_sealed_jsonl_loads_migrated(tmp_path: Path) -> None:
    from agentrig_sodium import SodiumSealer

    data = copy_golden("v1", tmp_path / "g")
    sealer = SodiumSealer(str(data / "sealed" / "keys"), create=False)
    report = await JsonlSessionStore(data / "sealed" / "sessions", sealer=sealer).load(SESSION)
    assert not report.damaged, report.detail
    _assert_today(report.events)


async def test_appending_to_an_old_log_writes_the_current_version(tmp_path: Path) -> None:
    data = copy_golden("v1", tmp_path / "g")
    store = JsonlSessionStore(data / "jsonl")
    old = (await store.load(SESSION)).events
    writer = await store.open_writer(SESSION)
    await writer.append([SessionEvent(seq=len(old) + 1, time=1.0, data=old[-1].data)])
    await writer.aclose()
    lines = (data / "jsonl" / f"{SESSION}.jsonl").read_bytes().splitlines()
    assert json.loads(lines[-1])["v"] == SESSION_EVENT_VERSION
    assert "v" not in json.loads(lines[0])
    report = await store.load(SESSION)
    assert not report.damaged
    assert len(report.events) == len(old) + 1


def test_every_written_event_names_its_version() -> None:
    for event in session_events():
        line = dump_event(event)
        assert line.startswith('{"v":2,"seq":')
        assert parse_event(line) == event
        assert parse_event(line.encode()) == event
        assert parse_event(json.loads(line)) == event


def _newer(line: bytes) -> bytes:
    document = json.loads(line)
    document.pop("v", None)
    return json.dumps({"v": SESSION_EVENT_VERSION + 1, **document}).encode()


async def test_a_newer_jsonl_event_is_refused_by_name(tmp_path: Path) -> None:
    data = copy_golden("v1", tmp_path / "g")
    path = data / "jsonl" / f"{SESSION}.jsonl"
    lines = path.read_bytes().splitlines()
    path.write_bytes(b"\n".join([lines[0], _newer(lines[1]), *lines[2:]]) + b"\n")
    with pytest.raises(SchemaTooNewError) as caught:
        await JsonlSessionStore(data / "jsonl").load(SESSION)
    error = caught.value
    assert (error.schema, error.found, error.current) == (
        "agentrig.session.event",
        SESSION_EVENT_VERSION + 1,
        SESSION_EVENT_VERSION,
    )
    assert "pip install --upgrade agentrig" in str(error)


async def test_a_newer_sqlite_event_is_refused_by_name(tmp_path: Path) -> None:
    import sqlite3

    data = copy_golden("v1", tmp_path / "g")
    with sqlite3.connect(data / "sessions.sqlite3") as connection:
        (body,) = connection.execute("SELECT body FROM events WHERE seq = 3").fetchone()
        connection.execute(
            "UPDATE events SET body = ? WHERE seq = 3", (_newer(body.encode()).decode(),)
        )
    store = SqliteSessionStore(data / "sessions.sqlite3")
    try:
        with pytest.raises(SchemaTooNewError, match=r"agentrig\.session\.event"):
            await store.load(SESSION)
    finally:
        await store.aclose()


async def test_a_newer_sealed_framing_is_refused_by_name(tmp_path: Path) -> None:
    import base64

    from agentrig_sodium import SodiumSealer

    data = copy_golden("v1", tmp_path / "g")
    path = data / "sealed" / "sessions" / f"{SESSION}.jsonl"
    lines = path.read_bytes().splitlines()
    record = bytearray(base64.b64decode(json.loads(lines[1])["sealed"]))
    record[8:10] = (2).to_bytes(2, "big")  # the framing version of the prefix
    lines[1] = json.dumps({"sealed": base64.b64encode(bytes(record)).decode()}).encode()
    path.write_bytes(b"\n".join(lines) + b"\n")
    sealer = SodiumSealer(str(data / "sealed" / "keys"), create=False)
    report = await JsonlSessionStore(data / "sealed" / "sessions", sealer=sealer).load(SESSION)
    assert report.damaged
    assert report.detail is not None
    assert "line 2: sealed with agentrig.sealed.framing version 2" in report.detail
    assert "pip install --upgrade agentrig" in report.detail
    assert len(report.events) == 14  # the other events still load


def test_a_newer_sealer_key_file_is_refused_by_name(tmp_path: Path) -> None:
    from agentrig_sodium import SodiumSealer

    data = copy_golden("v1", tmp_path / "g")
    public = data / "sealed" / "keys" / "sealer.pub"
    document = json.loads(public.read_text())
    assert document["format"] == "agentrig-sodium-public/1"
    public.write_text(json.dumps({**document, "format": "agentrig-sodium-public/2"}))
    with pytest.raises(SchemaTooNewError, match="pip install --upgrade agentrig-sodium") as caught:
        SodiumSealer(str(data / "sealed" / "keys"), create=False)
    assert (caught.value.schema, caught.value.found) == ("agentrig-sodium-public", 2)
    assert document["box"] not in str(caught.value)
