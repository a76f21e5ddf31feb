"""``agentrig migrate`` on the postgres session store: dry run, apply in one transaction
with a copy of the changed rows, and a client killed in the middle of that transaction
(nothing changed; a rerun completes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import psycopg
import pytest
from make_golden import SESSION
from test_golden_postgres import restore

from agentrig.session import stored_version

pytestmark = [pytest.mark.integration, pytest.mark.subprocess, pytest.mark.slow]

AGENTRIG = str(Path(sys.executable).with_name("agentrig"))


def _config(tmp_path: Path, dsn: str) -> Path:
    path = tmp_path / "agentrig.toml"
    path.write_text(f'[session_stores.main]\nkind = "postgres"\noptions = {{ dsn = "{dsn}" }}\n')
    return path


def _command(config: Path, *extra: str) -> list[str]:
    return [AGENTRIG, "migrate", "-c", str(config), *extra]


def _versions(dsn: str, table: str = "agentrig_session_events") -> list[int | None]:
    with psycopg.connect(dsn) as connection:
        rows = connection.execute(f"SELECT body FROM {table} ORDER BY seq").fetchall()
    return [stored_version(body) for (body,) in rows]


def test_dry_run_then_apply(pg_dsn: str, tmp_path: Path) -> None:
    anyio.run(restore, pg_dsn)
    config = _config(tmp_path, pg_dsn)
    dry = subprocess.run(_command(config), capture_output=True, text=True, timeout=120)
    assert dry.returncode == 0, dry.stderr
    assert "15 event(s) in 1 session(s) to rewrite" in dry.stdout
    assert set(_versions(pg_dsn)) == {1}
    done = subprocess.run(_command(config, "--apply"), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "backup: table public.agentrig_session_events_pre_migrate" in done.stdout
    assert set(_versions(pg_dsn)) == {2}
    assert _versions(pg_dsn, "agentrig_session_events_pre_migrate") == [1] * 15
    refused = subprocess.run(
        _command(config, "--apply", "--backup", str(tmp_path / "x")),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 1
    assert "error [session.store]: the postgres session store keeps its copy" in refused.stderr


def test_a_client_killed_inside_the_transaction_changes_nothing(
    pg_dsn: str, tmp_path: Path
) -> None:
    anyio.run(restore, pg_dsn)
    config = _config(tmp_path, pg_dsn)
    with psycopg.connect(pg_dsn) as blocker:
        # hold the last row: the migration updates the rows before it, then waits here
        blocker.execute(
            "SELECT 1 FROM agentrig_session_events WHERE seq = 15 FOR UPDATE"
        ).fetchall()
        child = subprocess.Popen(
            _command(config, "--apply"), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            with psycopg.connect(pg_dsn, autocommit=True) as watcher:
                for _ in range(600):
                    waiting = watcher.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                        "AND query LIKE 'UPDATE%%'"
                    ).fetchone()
                    if waiting and waiting[0]:
                        break
                    time.sleep(0.1)
                else:
                    pytest.fail("the migration never reached the held row")
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        blocker.rollback()
    assert child.returncode == -signal.SIGKILL
    with psycopg.connect(pg_dsn, autocommit=True) as watcher:  # the server ends the backend
        for _ in range(100):
            (left,) = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'UPDATE%%' "
                "AND pid <> pg_backend_pid()"
            ).fetchone() or (0,)
            if not left:
                break
            time.sleep(0.1)
    assert set(_versions(pg_dsn)) == {1}
    with psycopg.connect(pg_dsn) as connection:
        (copies,) = connection.execute(
            "SELECT count(*) FROM pg_tables WHERE tablename = 'agentrig_session_events_pre_migrate'"
        ).fetchone() or (0,)
    assert copies == 0  # created inside the rolled-back transaction
    rerun = subprocess.run(_command(config, "--apply"), capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert set(_versions(pg_dsn)) == {2}


@pytest.mark.anyio
async def test_a_session_with_a_writer_is_refused(pg_dsn: str, tmp_path: Path) -> None:
    from agentrig_postgres import PostgresSessionStore

    await restore(pg_dsn)
    store = PostgresSessionStore(pg_dsn)
    writer = await store.open_writer(SESSION)
    try:
        done = await anyio.run_process(_command(_config(tmp_path, pg_dsn), "--apply"), check=False)
    finally:
        await writer.aclose()
        await store.aclose()
    assert done.returncode == 1
    assert "error [session.writer_conflict]" in done.stderr.decode()
    assert set(_versions(pg_dsn)) == {1}
