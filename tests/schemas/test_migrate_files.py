"""``agentrig migrate`` on the file stores (jsonl, sealed jsonl, sqlite): a dry run changes
nothing; ``--apply`` keeps a copy and rewrites at the current version; a crash in the middle
of ``--apply`` loses nothing and a second run completes it.

The crash is real: the command runs under the libc shim of tests/session/faultinject.c,
which kills it inside a rename (jsonl) or inside a database write (sqlite).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from _golden import copy_golden, counted_writes, fault_env
from make_golden import SESSION, session_events

from agentrig.builtins._jsonl_store import JsonlSessionStore
from agentrig.builtins._sqlite_store import SqliteSessionStore
from agentrig.session import SessionStore, stored_version

sys.path.insert(0, str(Path(__file__).parents[1] / "session"))
from _faults import build_shim  # type: ignore[import-not-found]

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]

AGENTRIG = str(Path(sys.executable).with_name("agentrig"))
SESSIONS = ("golden-a", "golden-b", "golden-c")


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_shim(tmp_path_factory.mktemp("shim"))


def _config(base: Path, kind: str, options: str) -> Path:
    path = base / "agentrig.toml"
    path.write_text(f'[session_stores.main]\nkind = "{kind}"\noptions = {{ {options} }}\n')
    return path


def migrate(
    config: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AGENTRIG, "migrate", "-c", str(config), *extra],
        capture_output=True,
        text=True,
        cwd=config.parent,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def _jsonl_store(tmp_path: Path) -> Path:
    """Three copies of the golden v1 session in a jsonl directory."""
    data = copy_golden("v1", tmp_path / "g")
    directory = tmp_path / "sessions"
    directory.mkdir(mode=0o700)
    for name in SESSIONS:
        target = directory / f"{name}.jsonl"
        shutil.copyfile(data / "jsonl" / f"{SESSION}.jsonl", target)
        target.chmod(0o600)
    return directory


def _versions_jsonl(directory: Path, name: str) -> set[int | None]:
    lines = (directory / f"{name}.jsonl").read_bytes().splitlines()
    return {stored_version(line) for line in lines}


async def _assert_loads(
    store: SessionStore, names: tuple[str, ...], note: str | None = None
) -> None:
    """Every session loads as the golden one; ``note``: the only damage reported."""
    expected = [e.model_dump(mode="json") for e in session_events()]
    for name in names:
        report = await store.load(name)
        assert report.detail == note
        assert [e.model_dump(mode="json") for e in report.events] == expected


async def test_jsonl_dry_run_then_apply(tmp_path: Path) -> None:
    directory = _jsonl_store(tmp_path)
    config = _config(tmp_path, "jsonl", 'directory = "sessions"')
    before = {n: (directory / f"{n}.jsonl").read_bytes() for n in SESSIONS}
    dry = migrate(config)
    assert dry.returncode == 0, dry.stderr
    assert "45 event(s) in 3 session(s) to rewrite" in dry.stdout
    assert "dry run: nothing was changed; run again with --apply" in dry.stdout
    assert {n: (directory / f"{n}.jsonl").read_bytes() for n in SESSIONS} == before
    applied = migrate(config, "--apply")
    assert applied.returncode == 0, applied.stderr
    assert "45 event(s) in 3 session(s) rewritten" in applied.stdout
    for name in SESSIONS:
        assert _versions_jsonl(directory, name) == {2}
        kept = tmp_path / "sessions.pre-migrate" / f"{name}.jsonl"
        assert kept.read_bytes() == before[name]
        assert kept.stat().st_mode & 0o777 == 0o600
    await _assert_loads(JsonlSessionStore(directory), SESSIONS)
    again = migrate(config)
    assert "0 event(s) in 0 session(s) to rewrite" in again.stdout


async def test_sealed_jsonl_apply_reseals(tmp_path: Path) -> None:
    from agentrig_sodium import SodiumSealer

    copy_golden("v1", tmp_path / "g")
    (tmp_path / "agentrig.toml").write_text(
        '[sealers.vault]\nkind = "sodium"\noptions = { directory = "g/sealed/keys" }\n'
        '[session_stores.main]\nkind = "jsonl"\n'
        'options = { directory = "g/sealed/sessions", sealer = "vault" }\n'
    )
    applied = migrate(tmp_path / "agentrig.toml", "--apply")
    assert applied.returncode == 0, applied.stderr
    assert "15 event(s) in 1 session(s) rewritten" in applied.stdout
    raw = (tmp_path / "g" / "sealed" / "sessions" / f"{SESSION}.jsonl").read_bytes()
    assert b"size_bytes" not in raw  # still sealed
    sealer = SodiumSealer(str(tmp_path / "g" / "sealed" / "keys"), create=False)
    store = JsonlSessionStore(tmp_path / "g" / "sealed" / "sessions", sealer=sealer)
    await _assert_loads(store, (SESSION,))
    lines = raw.splitlines()
    texts = [store.plaintext(line, SESSION) for line in lines]
    assert {stored_version(t) for t in texts} == {2}


async def test_jsonl_crash_inside_apply_loses_nothing_and_a_rerun_completes(
    tmp_path: Path, shim: Path
) -> None:
    directory = _jsonl_store(tmp_path)
    config = _config(tmp_path, "jsonl", 'directory = "sessions"')
    fault = {
        "LD_PRELOAD": str(shim),
        "FAULT_ARMED": "1",
        "FAULT_MATCH": f"{directory}/",
        "FAULT_OP": "rename",
        "FAULT_MODE": "kill",
        "FAULT_AFTER": "1",  # the second session's replace dies
    }
    crashed = migrate(config, "--apply", env=fault)
    assert crashed.returncode == -9, (crashed.stdout, crashed.stderr)
    versions = [_versions_jsonl(directory, n) for n in SESSIONS]
    assert versions.count({2}) == 1
    assert versions.count({1}) == 2
    await _assert_loads(JsonlSessionStore(directory), SESSIONS)  # nothing lost
    rerun = migrate(config, "--apply")
    assert rerun.returncode == 0, rerun.stderr
    assert "30 event(s) in 2 session(s) rewritten" in rerun.stdout
    assert all(_versions_jsonl(directory, n) == {2} for n in SESSIONS)
    await _assert_loads(JsonlSessionStore(directory), SESSIONS)
    kept = tmp_path / "sessions.pre-migrate"
    assert all(
        {stored_version(x) for x in (kept / f"{n}.jsonl").read_bytes().splitlines()} == {1}
        for n in SESSIONS
    )


def _sqlite_store(tmp_path: Path) -> Path:
    data = copy_golden("v1", tmp_path / "g")
    db = tmp_path / "db"
    db.mkdir(mode=0o700)
    path = db / "sessions.sqlite3"
    with sqlite3.connect(data / "sessions.sqlite3") as source, sqlite3.connect(path) as target:
        source.backup(target)
        rows = target.execute("SELECT seq, body FROM events").fetchall()
        for name in SESSIONS[1:]:
            target.executemany(
                "INSERT INTO events (session_id, seq, body) VALUES (?, ?, ?)",
                [(name, seq, body) for seq, body in rows],
            )
        target.execute(
            "UPDATE events SET session_id = ? WHERE session_id = ?", (SESSIONS[0], SESSION)
        )
    path.chmod(0o600)
    return path


def _versions_sqlite(path: Path) -> set[int | None]:
    with sqlite3.connect(path) as connection:
        return {stored_version(b) for (b,) in connection.execute("SELECT body FROM events")}


async def test_sqlite_dry_run_then_apply(tmp_path: Path) -> None:
    path = _sqlite_store(tmp_path)
    config = _config(tmp_path, "sqlite", 'path = "db/sessions.sqlite3"')
    dry = migrate(config)
    assert dry.returncode == 0, dry.stderr
    assert "45 event(s) in 3 session(s) to rewrite" in dry.stdout
    assert _versions_sqlite(path) == {1}
    applied = migrate(config, "--apply")
    assert applied.returncode == 0, applied.stderr
    assert _versions_sqlite(path) == {2}
    kept = path.with_name("sessions.sqlite3.pre-migrate")
    assert _versions_sqlite(kept) == {1}
    assert kept.stat().st_mode & 0o777 == 0o600
    store = SqliteSessionStore(path)
    try:
        await _assert_loads(store, SESSIONS)
    finally:
        await store.aclose()


async def test_sqlite_crash_inside_apply_rolls_back_and_a_rerun_completes(
    tmp_path: Path, shim: Path
) -> None:
    path = _sqlite_store(tmp_path)
    config = _config(tmp_path, "sqlite", 'path = "db/sessions.sqlite3"')
    (tmp_path / "bak").mkdir(mode=0o700)
    probe_path = _sqlite_store(tmp_path / "probe")
    probe = _config(tmp_path / "probe", "sqlite", 'path = "db/sessions.sqlite3"')
    counted = migrate(  # a clean run, counting the database and journal writes it makes
        probe,
        "--apply",
        "--backup",
        str(tmp_path / "bak" / "probe.sqlite3"),
        env=fault_env(shim, probe_path),
    )
    assert counted.returncode == 0, counted.stderr
    writes = counted_writes(counted.stderr)
    assert writes > 4
    fault = fault_env(shim, path, kill_after=writes // 2)
    crashed = migrate(
        config, "--apply", "--backup", str(tmp_path / "bak" / "kept.sqlite3"), env=fault
    )
    assert crashed.returncode == -9, (crashed.stdout, crashed.stderr)
    store = SqliteSessionStore(path)
    try:
        # the interrupted transaction was rolled back, and said so
        rolled_back = (
            "an interrupted transaction was found and rolled back (its events were never committed)"
        )
        await _assert_loads(store, SESSIONS, rolled_back)
    finally:
        await store.aclose()
    assert _versions_sqlite(path) == {1}
    rerun = migrate(config, "--apply", "--backup", str(tmp_path / "bak" / "kept.sqlite3"))
    assert rerun.returncode == 0, rerun.stderr
    assert _versions_sqlite(path) == {2}
    assert _versions_sqlite(tmp_path / "bak" / "kept.sqlite3") == {1}


def test_apply_refuses_a_store_holding_newer_events_and_changes_nothing(tmp_path: Path) -> None:
    directory = _jsonl_store(tmp_path)
    path = directory / f"{SESSIONS[1]}.jsonl"
    lines = path.read_bytes().splitlines()
    newer = json.dumps({"v": 3, **json.loads(lines[2])}).encode()
    path.write_bytes(b"\n".join([*lines[:2], newer, *lines[3:]]) + b"\n")
    before = {n: (directory / f"{n}.jsonl").read_bytes() for n in SESSIONS}
    config = _config(tmp_path, "jsonl", 'directory = "sessions"')
    dry = migrate(config)
    assert f"{SESSIONS[1]}: 14 of 15 event(s) older, 1 newer than this code" in dry.stdout
    applied = migrate(config, "--apply")
    assert applied.returncode == 1
    (line,) = applied.stderr.splitlines()
    assert line.startswith(
        "agentrig migrate: error [persisted.too_new]: stored "
        "agentrig.session.event data is version 3"
    )
    assert SESSIONS[1] in line
    assert {n: (directory / f"{n}.jsonl").read_bytes() for n in SESSIONS} == before


def test_backup_needs_one_store(tmp_path: Path) -> None:
    (tmp_path / "agentrig.toml").write_text(
        '[session_stores.a]\nkind = "jsonl"\n[session_stores.b]\nkind = "sqlite"\n'
    )
    result = migrate(tmp_path / "agentrig.toml", "--backup", "x")
    assert result.returncode == 2
    assert "error [cli.backup_needs_one_store]" in result.stderr


def test_doctor_reports_stores_to_migrate_and_newer_ones(tmp_path: Path) -> None:
    directory = _jsonl_store(tmp_path)
    config = _config(tmp_path, "jsonl", 'directory = "sessions"')
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    doctor = [AGENTRIG, "doctor", "--config", str(config)]
    done = subprocess.run(doctor, capture_output=True, text=True, timeout=120, env=env)
    assert (
        "  MIGRATE store main: 45 event(s) in 3 session(s) are older than "
        "agentrig.session.event version 2 (read as they are); 'agentrig migrate -c "
        f"{config} --apply' rewrites them"
    ) in done.stdout
    assert done.returncode == 0, done.stdout
    path = directory / f"{SESSIONS[0]}.jsonl"
    lines = path.read_bytes().splitlines()
    path.write_bytes(
        b"\n".join([json.dumps({"v": 7, **json.loads(lines[0])}).encode(), *lines[1:]])
    )
    done = subprocess.run(doctor, capture_output=True, text=True, timeout=120, env=env)
    assert (
        f"  NEWER store main: session(s) {SESSIONS[0]} hold agentrig.session.event" in done.stdout
    )
    assert done.returncode == 1
