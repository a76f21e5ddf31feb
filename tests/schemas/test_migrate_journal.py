"""``agentrig migrate`` and the SQLite journal: dry run, apply with a copy, crash, newer data.

The journal's schema is at version 1, so the command reports today's journals (golden v1
data included) as current and changes nothing; the rewrite itself runs against a registry
with a version 2 (``_journal_v2``), in process and in a child killed inside the rewrite
transaction by the libc shim of tests/session/faultinject.c.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from _golden import copy_golden, counted_writes, fault_env
from _journal_v2 import codec_v2
from make_golden import RUN, journal_records

from agentrig.ids import RunId
from agentrig.journal import JOURNAL_RECORD_CODEC, SqliteJournal
from agentrig.schemas import SchemaTooNewError

sys.path.insert(0, str(Path(__file__).parents[1] / "session"))
from _faults import build_shim  # type: ignore[import-not-found]

pytestmark = [pytest.mark.anyio]

AGENTRIG = str(Path(sys.executable).with_name("agentrig"))
CHILD = Path(__file__).with_name("_journal_v2.py")
#: the golden run and copies: enough pages that the rewrite is several writes to the database
RUNS = (RUN, *(f"run-{n:02d}" for n in range(1, 20)))


def _journal(tmp_path: Path) -> Path:
    """The golden v1 journal with its suspended run copied under more run ids."""
    data = copy_golden("v1", tmp_path / "g")
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    path = state / "journal.sqlite3"
    with sqlite3.connect(data / "journal.sqlite3") as source, sqlite3.connect(path) as target:
        source.backup(target)
        rows = target.execute("SELECT run_id, kind, key, body FROM journal ORDER BY seq").fetchall()
        for run in RUNS[1:]:
            target.executemany(
                "INSERT INTO journal (run_id, kind, key, body) VALUES (?, ?, ?, ?)",
                [(run, kind, key, body.replace(RUN, run)) for _r, kind, key, body in rows],
            )
    path.chmod(0o600)
    return path


def _versions(path: Path, codec: object = JOURNAL_RECORD_CODEC) -> set[int | None]:
    with sqlite3.connect(path) as connection:
        bodies = [b for (b,) in connection.execute("SELECT body FROM journal")]
    return {codec.version_of(b) for b in bodies}  # type: ignore[attr-defined]


async def _assert_loads(path: Path) -> None:
    """Every run rebuilds as the golden suspended one (through today's code)."""
    journal = SqliteJournal(path)
    try:
        for run in RUNS:
            state = await journal.load(RunId(run))
            assert state is not None
            assert [c.call_id for c in state.model_calls] == ["m1"]
            assert list(state.effects) == ["m1/c-a"]
    finally:
        await journal.aclose()


async def test_dry_run_then_apply_across_a_version_change(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    codec = codec_v2()
    journal = SqliteJournal(path)
    try:
        dry = await journal.migration_report(codec=codec)
        assert (dry.unit, dry.current, dry.applied) == ("run", 2, False)
        assert [(s.session_id, s.records, s.outdated) for s in dry.sessions] == [
            (run, 5, 5) for run in sorted(RUNS)
        ]
        assert "100 record(s) in 20 run(s) to rewrite" in dry.summary()
        assert _versions(path) == {1}  # a dry run changes nothing
        applied = await journal.migrate(codec=codec)
        assert applied.applied
        assert applied.backup == str(path.with_name("journal.sqlite3.pre-migrate"))
        again = await journal.migrate(codec=codec)  # nothing left: no second copy
        assert (len(again.outdated), again.backup) == (0, None)
    finally:
        await journal.aclose()
    with sqlite3.connect(path) as connection:
        bodies = [
            b for (b,) in connection.execute("SELECT body FROM journal WHERE run_id = ?", (RUN,))
        ]
    assert all(body.startswith('{"v":2,"kind":') for body in bodies)
    assert [codec.parse(body) for body in bodies] == journal_records()
    kept = path.with_name("journal.sqlite3.pre-migrate")
    assert kept.stat().st_mode & 0o777 == 0o600
    assert _versions(kept) == {1}
    await _assert_loads(kept)


async def test_a_newer_record_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    with sqlite3.connect(path) as connection:
        (seq, body) = connection.execute("SELECT seq, body FROM journal LIMIT 1").fetchone()
        newer = json.dumps({"v": 3, **json.loads(body)})
        connection.execute("UPDATE journal SET body = ? WHERE seq = ?", (newer, seq))
    journal = SqliteJournal(path)
    try:
        with pytest.raises(SchemaTooNewError, match=r"version 3.*up to version 2") as caught:
            await journal.migrate(codec=codec_v2())
    finally:
        await journal.aclose()
    assert RUN in caught.value.upgrade  # which run holds it
    assert not path.with_name("journal.sqlite3.pre-migrate").exists()
    assert _versions(path) == {1, 3}


def _child(path: Path, backup: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHILD), str(path), str(backup)],
        capture_output=True,
        text=True,
        cwd=CHILD.parent,
        env={**os.environ, **env},
        timeout=120,
    )


@pytest.mark.slow
@pytest.mark.subprocess
async def test_a_crash_inside_apply_loses_nothing_and_a_rerun_completes(tmp_path: Path) -> None:
    shim = build_shim(tmp_path)
    (tmp_path / "bak").mkdir(mode=0o700)
    probe = _journal(tmp_path / "probe")
    counted = _child(  # a clean run, counting the writes it makes to the database
        probe,
        tmp_path / "bak" / "probe.sqlite3",
        fault_env(shim, probe),
    )
    assert counted.returncode == 0, counted.stderr
    writes = counted_writes(counted.stderr)
    assert writes > 6
    path = _journal(tmp_path / "real")
    backup = tmp_path / "bak" / "kept.sqlite3"
    crashed = _child(path, backup, fault_env(shim, path, kill_after=writes // 2))
    assert crashed.returncode == -9, (crashed.stdout, crashed.stderr)
    assert _versions(path) == {1}  # the transaction never committed: as it was
    await _assert_loads(path)
    rerun = _child(path, backup, {})
    assert rerun.returncode == 0, rerun.stderr
    assert "100 record(s) in 20 run(s) rewritten" in rerun.stdout
    assert _versions(path, codec_v2()) == {2}
    assert _versions(backup) == {1}  # the copy is of the data as it was
    await _assert_loads(backup)


def _config(tmp_path: Path, body: str) -> Path:
    tmp_path.mkdir(exist_ok=True)
    config = tmp_path / "agentrig.toml"
    config.write_text(body)
    return config


def _migrate(config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AGENTRIG, "migrate", "-c", str(config), *extra],
        capture_output=True,
        text=True,
        cwd=config.parent,
        timeout=120,
    )


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_command_reports_and_applies_the_dbos_journal(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    config = _config(tmp_path, '[dbos]\nstate_dir = "state"\n')
    dry = _migrate(config)
    assert dry.returncode == 0, dry.stderr
    assert (
        "journal (SqliteJournal): agentrig.journal.record (current version 1): 20 run(s), "
        "100 record(s); 0 record(s) in 0 run(s) to rewrite"
    ) in dry.stdout
    assert "dry run: nothing was changed" in dry.stdout
    applied = _migrate(config, "--journal", "--apply")
    assert applied.returncode == 0, applied.stderr
    assert "0 record(s) in 0 run(s) rewritten" in applied.stdout
    assert not path.with_name("journal.sqlite3.pre-migrate").exists()  # nothing to copy
    with sqlite3.connect(path) as connection:
        (seq, body) = connection.execute("SELECT seq, body FROM journal LIMIT 1").fetchone()
        connection.execute(
            "UPDATE journal SET body = ? WHERE seq = ?",
            (json.dumps({"v": 2, **json.loads(body)}), seq),
        )
    newer = _migrate(config, "--journal", "--apply")
    assert newer.returncode != 0
    assert "error [persisted.too_new]" in newer.stderr
    assert "agentrig.journal.record data is version 2" in newer.stderr
    plain = _config(
        tmp_path / "plain", '[session_stores.main]\nkind = "jsonl"\noptions = { directory = "s" }\n'
    )
    missing = _migrate(plain, "--journal")
    assert missing.returncode != 0
    assert "error [cli.no_journal]" in missing.stderr
    empty = _config(tmp_path / "empty", "")
    nothing = _migrate(empty)
    assert nothing.returncode != 0
    assert "error [cli.no_session_store]" in nothing.stderr


@pytest.mark.slow
@pytest.mark.subprocess
def test_doctor_reports_a_journal_holding_newer_records(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    config = _config(tmp_path, '[dbos]\nstate_dir = "state"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    doctor = [AGENTRIG, "doctor", "--config", str(config)]
    clean = subprocess.run(doctor, capture_output=True, text=True, timeout=120, env=env)
    assert "journal" not in clean.stdout, clean.stdout  # current: nothing to say
    with sqlite3.connect(path) as connection:
        (seq, body) = connection.execute("SELECT seq, body FROM journal LIMIT 1").fetchone()
        newer = json.dumps({**json.loads(body), "v": 4})
        connection.execute("UPDATE journal SET body = ? WHERE seq = ?", (newer, seq))
    found = subprocess.run(doctor, capture_output=True, text=True, timeout=120, env=env)
    assert (
        f"  NEWER journal: run(s) {RUN} hold agentrig.journal.record records newer than "
        "version 1; upgrade agentrig to read them"
    ) in found.stdout, found.stdout
    assert found.returncode == 1
