"""Sealed, owner-only session stores: the built-in ``jsonl`` and ``sqlite`` stores.

Stores and the ``sodium`` sealer are built through their entry points, the way a runtime
composes them (``spec["sealers"]`` is what ``compose_stores`` passes).
"""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from agentrig.errors import ConfigError
from agentrig.ids import SessionId
from agentrig.llm import AssistantMessage, TextBlock, UserMessage
from agentrig.sealing import LockedError, Sealer, framing
from agentrig.session import (
    AssistantMessageEvent,
    NotASessionLogError,
    Session,
    SessionEvent,
    SessionStore,
    SessionStoreError,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
    parse_event,
)

pytestmark = pytest.mark.anyio

KINDS = ("jsonl", "sqlite")
OPTIONS: dict[str, dict[str, Any]] = {
    "jsonl": {"directory": "state/sessions"},
    "sqlite": {"path": "state/db/sessions.sqlite3"},
}
QUESTION = "what is the launch code — ünïcode"
ANSWER = "the answer nobody may read"
UNKNOWN_RAW: dict[str, Any] = {
    "seq": 2,
    "time": 1722.25,
    "data": {
        "type": "acme/bookmark",  # no installed plugin registers this variant
        "label": "private bookmark label",
        "nested": {"items": [1, 2.5, None, True, "x"], "empty": {}},
        "zeta": 0,
        "alpha": [],
    },
}


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _sealer(directory: Path, **options: Any) -> Sealer:
    factory = entry_points(group="agentrig.sealers")["sodium"].load()
    sealer: Sealer = factory({"options": {"directory": str(directory), **options}})
    return sealer


@pytest.fixture
def sealer(tmp_path: Path) -> Sealer:
    return _sealer(tmp_path / "keys")


def _store(kind: str, base: Path, sealer: Sealer | None, **options: Any) -> SessionStore:
    factory = entry_points(group="agentrig.session_stores")[kind].load()
    store: SessionStore = factory(
        {
            "id": "main",
            "options": {**OPTIONS[kind], **({"sealer": "main"} if sealer else {}), **options},
            "base_dir": base,
            "sealers": {"main": sealer} if sealer else {},
        }
    )
    return store


def _events(session_id: str) -> list[SessionEvent]:
    session = Session(SessionId(session_id))
    session.append(TurnStart(turn=1))
    session.append(UserMessageEvent(message=UserMessage.of(QUESTION)))
    session.append(
        AssistantMessageEvent(message=AssistantMessage(content=(TextBlock(text=ANSWER),)))
    )
    session.append(TurnEnd(turn=1, reason="completed"))
    return list(session.events)


def _with_unknown(session_id: str) -> list[dict[str, Any]]:
    known = [e.model_dump(mode="json") for e in _events(session_id)]
    return [
        known[0],
        known[1],
        {**UNKNOWN_RAW, "seq": 3},
        *({**e, "seq": e["seq"] + 1} for e in known[2:]),
    ]


async def _write(store: SessionStore, session_id: str, raw: list[dict[str, Any]]) -> None:
    writer = await store.open_writer(session_id)
    try:
        await writer.append([parse_event(r) for r in raw[:2]])
        await writer.append([parse_event(r) for r in raw[2:]])
    finally:
        await writer.aclose()


def _files(base: Path) -> list[Path]:
    return [p for p in (base / "state").rglob("*") if p.is_file()]


def _dicts(events: Any) -> list[dict[str, Any]]:
    return [e.model_dump(mode="json") for e in events]


# ---- round trip ---------------------------------------------------------------------------


async def test_sealed_events_round_trip_unknown_variants_included(
    kind: str, tmp_path: Path, sealer: Sealer
) -> None:
    store = _store(kind, tmp_path, sealer)
    raw = _with_unknown("ses_sealed")
    try:
        await _write(store, "ses_sealed", raw)
        loaded = await store.load("ses_sealed")
        # a second writer (a resumed session) appends under its own data key
        writer = await store.open_writer("ses_sealed")
        extra = {**UNKNOWN_RAW, "seq": len(raw) + 1}
        await writer.append([parse_event(extra)])
        await writer.aclose()
        reloaded = await store.load("ses_sealed")
    finally:
        await store.aclose()
    assert not loaded.damaged, loaded.detail
    assert _dicts(loaded.events) == raw
    assert loaded.events[2].type == "acme/bookmark"
    assert not reloaded.damaged, reloaded.detail
    assert _dicts(reloaded.events) == [*raw, extra]

    # and a fresh store over the same files (another process, say) reads them too
    again = _store(kind, tmp_path, _sealer(tmp_path / "keys"))
    try:
        assert _dicts((await again.load("ses_sealed")).events) == [*raw, extra]
    finally:
        await again.aclose()


async def test_no_plaintext_reaches_the_disk(kind: str, tmp_path: Path, sealer: Sealer) -> None:
    store = _store(kind, tmp_path, sealer)
    try:
        await _write(store, "ses_secret", _with_unknown("ses_secret"))
    finally:
        await store.aclose()
    data = b"".join(p.read_bytes() for p in _files(tmp_path))
    assert data
    for text in (QUESTION, ANSWER, "launch code", "private bookmark label", "acme/bookmark"):
        assert text.encode("utf-8") not in data, text
        assert json.dumps(text).encode("ascii") not in data, text  # not even \\u-escaped
    if kind == "jsonl":
        lines = (tmp_path / "state/sessions/ses_secret.jsonl").read_bytes().splitlines()
        assert len(lines) == 5
        for line in lines:
            record = base64.b64decode(json.loads(line)["sealed"], validate=True)
            assert framing.classify(record) == "sealed"
    else:
        with sqlite3.connect(tmp_path / OPTIONS["sqlite"]["path"]) as db:
            bodies = [row[0] for row in db.execute("SELECT body FROM events")]
        db.close()
        assert len(bodies) == 5
        assert all(isinstance(b, bytes) and framing.classify(b) == "sealed" for b in bodies)


async def test_a_plain_store_still_writes_plain_events(kind: str, tmp_path: Path) -> None:
    store = _store(kind, tmp_path, None)
    try:
        await _write(store, "ses_plain", _with_unknown("ses_plain"))
        assert not (await store.load("ses_plain")).damaged
    finally:
        await store.aclose()
    assert ANSWER.encode("utf-8") in b"".join(p.read_bytes() for p in _files(tmp_path))


# ---- records that do not open ---------------------------------------------------------------


def _move_session(kind: str, base: Path, source: str, target: str) -> None:
    if kind == "jsonl":
        directory = base / "state/sessions"
        (directory / f"{source}.jsonl").rename(directory / f"{target}.jsonl")
    else:
        with sqlite3.connect(base / OPTIONS["sqlite"]["path"]) as db:
            db.execute("UPDATE events SET session_id = ? WHERE session_id = ?", (target, source))
        db.close()


async def test_a_sealed_log_moved_to_another_session_does_not_open(
    kind: str, tmp_path: Path, sealer: Sealer
) -> None:
    store = _store(kind, tmp_path, sealer)
    try:
        await _write(store, "ses_victim", _with_unknown("ses_victim"))
    finally:
        await store.aclose()
    _move_session(kind, tmp_path, "ses_victim", "ses_thief")

    store = _store(kind, tmp_path, sealer)
    try:
        # nothing opens, so nothing is accepted: not a log of zero events to resume and
        # append to, but a refusal naming the session
        with pytest.raises(NotASessionLogError) as caught:
            await store.load("ses_thief")
    finally:
        await store.aclose()
    message = str(caught.value)
    assert "holds no readable" in message
    assert "does not open" in message
    assert ANSWER not in message


def _tamper(kind: str, base: Path, session_id: str, seq: int) -> None:
    if kind == "jsonl":
        path = base / "state/sessions" / f"{session_id}.jsonl"
        lines = path.read_bytes().splitlines(keepends=True)
        record = bytearray(base64.b64decode(json.loads(lines[seq - 1])["sealed"]))
        record[-1] ^= 0x01
        lines[seq - 1] = (
            json.dumps({"sealed": base64.b64encode(bytes(record)).decode()}) + "\n"
        ).encode()
        path.write_bytes(b"".join(lines))
    else:
        with sqlite3.connect(base / OPTIONS["sqlite"]["path"]) as db:
            (body,) = db.execute(
                "SELECT body FROM events WHERE session_id = ? AND seq = ?", (session_id, seq)
            ).fetchone()
            changed = bytes(body[:-1]) + bytes([body[-1] ^ 0x01])
            db.execute(
                "UPDATE events SET body = ? WHERE session_id = ? AND seq = ?",
                (changed, session_id, seq),
            )
        db.close()


async def test_a_tampered_record_is_reported_and_the_rest_still_loads(
    kind: str, tmp_path: Path, sealer: Sealer
) -> None:
    store = _store(kind, tmp_path, sealer)
    raw = [e.model_dump(mode="json") for e in _events("ses_tamper")]
    try:
        await _write(store, "ses_tamper", raw)
        _tamper(kind, tmp_path, "ses_tamper", seq=2)
        report = await store.load("ses_tamper")
    finally:
        await store.aclose()
    assert report.damaged
    assert report.detail is not None
    assert "does not open" in report.detail
    assert "2" in report.detail
    assert _dicts(report.events) == [raw[0], *raw[2:]]


async def test_a_store_without_its_sealer_reports_sealed_records_instead_of_misreading_them(
    kind: str, tmp_path: Path, sealer: Sealer
) -> None:
    sealed = _store(kind, tmp_path, sealer)
    try:
        await _write(sealed, "ses_mixed", [e.model_dump(mode="json") for e in _events("ses_mixed")])
    finally:
        await sealed.aclose()
    plain = _store(kind, tmp_path, None)
    try:
        with pytest.raises(NotASessionLogError, match="no sealer configured"):
            await plain.load("ses_mixed")
    finally:
        await plain.aclose()


async def test_a_sealing_store_does_not_accept_plaintext_events(
    kind: str, tmp_path: Path, sealer: Sealer
) -> None:
    # a plaintext record planted in a sealed log is damage, not an event
    plain = _store(kind, tmp_path, None)
    try:
        await _write(plain, "ses_planted", [e.model_dump(mode="json") for e in _events("ses_p")])
    finally:
        await plain.aclose()
    sealed = _store(kind, tmp_path, sealer)
    try:
        with pytest.raises(NotASessionLogError, match="not sealed"):
            await sealed.load("ses_planted")
    finally:
        await sealed.aclose()


async def test_jsonl_torn_sealed_tail_is_reported_and_set_aside(
    tmp_path: Path, sealer: Sealer
) -> None:
    store = _store("jsonl", tmp_path, sealer)
    raw = [e.model_dump(mode="json") for e in _events("ses_torn")]
    path = tmp_path / "state/sessions/ses_torn.jsonl"
    try:
        await _write(store, "ses_torn", raw)
        with path.open("ab") as file:
            file.write(b'{"sealed":"iUFSU0wNChoAAQ')  # the writer died mid-line
        report = await store.load("ses_torn")
        assert report.damaged
        assert report.detail is not None
        assert "torn final line" in report.detail
        assert _dicts(report.events) == raw
        await (await store.open_writer("ses_torn")).aclose()  # sets the torn bytes aside
        assert not (await store.load("ses_torn")).damaged
    finally:
        await store.aclose()
    assert (path.parent / "ses_torn.jsonl.torn").read_bytes().startswith(b'{"sealed"')


async def test_a_locked_sealer_still_writes_but_loading_raises_locked(
    kind: str, tmp_path: Path, sealer: Sealer
) -> None:
    locked = _sealer(tmp_path / "keys", locked=True)
    assert not locked.unlocked
    store = _store(kind, tmp_path, locked)
    raw = [e.model_dump(mode="json") for e in _events("ses_locked")]
    try:
        await _write(store, "ses_locked", raw)  # sealing needs only the public key
        with pytest.raises(LockedError, match="'ses_locked' is sealed and cannot be read now"):
            await store.load("ses_locked")
    finally:
        await store.aclose()
    # the unlocked sealer (same keys) reads what the locked one wrote
    reader = _store(kind, tmp_path, sealer)
    try:
        assert _dicts((await reader.load("ses_locked")).events) == raw
    finally:
        await reader.aclose()


def test_an_unknown_sealer_id_is_a_config_error(kind: str, tmp_path: Path) -> None:
    factory = entry_points(group="agentrig.session_stores")[kind].load()
    with pytest.raises(ConfigError) as caught:
        factory({"id": "local", "options": {"sealer": "nope"}, "base_dir": tmp_path})
    (issue,) = caught.value.issues
    assert issue.path == ("session_stores", "local", "options", "sealer")
    assert "'nope'" in issue.message


# ---- owner-only ----------------------------------------------------------------------------


@pytest.fixture
def umask_zero() -> Iterator[None]:
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
@pytest.mark.usefixtures("umask_zero")
async def test_sealed_stores_are_owner_only_under_umask_zero(
    kind: str, tmp_path: Path, sealer: Sealer
) -> None:
    store = _store(kind, tmp_path, sealer)
    try:
        await _write(store, "ses_modes", [e.model_dump(mode="json") for e in _events("ses_m")])
        await store.load("ses_modes")
        held = await store.open_writer("ses_modes")  # its lock file exists while it is open
        created = [*(tmp_path / "state").rglob("*"), tmp_path / "state"]
        modes = {path: (path.is_dir(), _mode(path)) for path in created}
        await held.aclose()
    finally:
        await store.aclose()
    assert len(created) >= 4
    for path, (is_dir, mode) in modes.items():
        want = 0o700 if is_dir else 0o600
        assert mode == want, f"{path.relative_to(tmp_path)} is {oct(mode)}"


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
async def test_a_session_directory_open_to_others_is_refused_not_adopted(
    kind: str, tmp_path: Path
) -> None:
    directory = tmp_path / "state/sessions" if kind == "jsonl" else tmp_path / "state/db"
    directory.mkdir(parents=True)
    directory.chmod(0o755)
    store = _store(kind, tmp_path, None)
    try:
        with pytest.raises(SessionStoreError, match="0755") as caught:
            await store.open_writer("ses_wide")
    finally:
        await store.aclose()
    assert str(directory) in str(caught.value)
    assert _mode(directory) == 0o755  # reported, not repaired
    assert list(directory.iterdir()) == []


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
async def test_an_existing_file_open_to_others_is_refused(kind: str, tmp_path: Path) -> None:
    store = _store(kind, tmp_path, None)
    try:
        await _write(store, "ses_old", [e.model_dump(mode="json") for e in _events("ses_old")])
    finally:
        await store.aclose()
    target = (
        tmp_path / "state/sessions/ses_old.jsonl"
        if kind == "jsonl"
        else tmp_path / OPTIONS["sqlite"]["path"]
    )
    target.chmod(0o644)  # what an older version, or a careless copy, left behind
    store = _store(kind, tmp_path, None)
    try:
        with pytest.raises(SessionStoreError, match="0644"):
            await store.load("ses_old")
    finally:
        await store.aclose()


@pytest.mark.skipif(os.name == "nt", reason="symlinks")
async def test_a_symlink_planted_at_the_session_path_is_refused(
    kind: str, tmp_path: Path, sealer: Sealer
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not yours\n")
    outside.chmod(0o600)
    if kind == "jsonl":
        directory = tmp_path / "state/sessions"
        directory.mkdir(parents=True, mode=0o700)
        (tmp_path / "state").chmod(0o700)
        planted = directory / "ses_link.jsonl"
    else:
        directory = tmp_path / "state/db"
        directory.mkdir(parents=True, mode=0o700)
        planted = tmp_path / OPTIONS["sqlite"]["path"]
    planted.symlink_to(outside)

    store = _store(kind, tmp_path, sealer)
    try:
        with pytest.raises(SessionStoreError, match="symlink"):
            await store.open_writer("ses_link")
        with pytest.raises(SessionStoreError, match="symlink"):
            await store.load("ses_link")
    finally:
        await store.aclose()
    assert outside.read_bytes() == b"not yours\n"
    assert planted.is_symlink()


@pytest.mark.skipif(os.name == "nt", reason="symlinks")
async def test_a_symlink_planted_at_the_lock_path_is_refused(kind: str, tmp_path: Path) -> None:
    outside = tmp_path / "outside.lock"
    if kind == "jsonl":
        (tmp_path / "state/sessions").mkdir(parents=True, mode=0o700)
        planted = tmp_path / "state/sessions/ses_lock.lock"
    else:
        (tmp_path / "state/db/sessions.sqlite3.locks").mkdir(parents=True, mode=0o700)
        planted = tmp_path / "state/db/sessions.sqlite3.locks/ses_lock.lock"
    (tmp_path / "state").chmod(0o700)
    planted.symlink_to(outside)
    store = _store(kind, tmp_path, None)
    try:
        with pytest.raises(SessionStoreError, match="symlink"):
            await store.open_writer("ses_lock")
    finally:
        await store.aclose()
    assert not outside.exists()  # nothing was created through the link
