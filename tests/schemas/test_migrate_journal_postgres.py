"""The PostgreSQL journal under ``agentrig migrate``: one transaction and a copy table.

Against a real PostgreSQL server: a dry run changes nothing; ``migrate`` across a version
change (``_journal_v2``) rewrites every record and copies each old row; a newer record is
refused before anything changes; a migrating process killed with SIGKILL in the middle of
its transaction leaves the journal as it was, and a rerun completes.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from _golden import GOLDEN
from _journal_v2 import codec_v2
from agentrig_postgres import PostgresJournal
from make_golden import RUN

from agentrig.ids import RunId
from agentrig.journal import JOURNAL_RECORD_CODEC
from agentrig.schemas import SchemaTooNewError, VersionedJson

pytestmark = [pytest.mark.anyio, pytest.mark.integration, pytest.mark.slow]

CHILD = Path(__file__).with_name("_journal_v2.py")
RUNS = (RUN, *(f"run-{n:02d}" for n in range(1, 20)))
BACKUP = "agentrig_journal_pre_migrate"


async def _restore(dsn: str) -> None:
    """The golden v1 journal rows, under each of ``RUNS``."""
    journal = PostgresJournal(dsn)
    await journal.database()  # creates the tables
    await journal.aclose()
    rows = json.loads((GOLDEN / "v1" / "postgres_rows.json").read_text())["agentrig_journal"]
    with psycopg.connect(dsn) as connection:
        for run in RUNS:
            for _run, kind, key, body in rows:
                connection.execute(
                    "INSERT INTO agentrig_journal (run_id, kind, key, body) VALUES (%s,%s,%s,%s)",
                    (run, kind, key, body.replace(RUN, run)),
                )


def _versions(
    dsn: str, codec: VersionedJson[Any], table: str = "agentrig_journal"
) -> set[int | None]:
    with psycopg.connect(dsn) as connection:
        bodies = [b for (b,) in connection.execute(f"SELECT body FROM {table}").fetchall()]
    return {codec.version_of(b) for b in bodies}


async def _assert_loads(dsn: str) -> None:
    journal = PostgresJournal(dsn)
    try:
        for run in RUNS:
            state = await journal.load(RunId(run))
            assert state is not None
            assert list(state.effects) == ["m1/c-a"]
    finally:
        await journal.aclose()


async def test_dry_run_apply_and_a_newer_record(pg_dsn: str) -> None:
    await _restore(pg_dsn)
    codec = codec_v2()
    journal = PostgresJournal(pg_dsn)
    try:
        dry = await journal.migration_report(codec=codec)
        assert "100 record(s) in 20 run(s) to rewrite" in dry.summary()
        assert _versions(pg_dsn, JOURNAL_RECORD_CODEC) == {1}
        with pytest.raises(Exception, match="does not apply"):
            await journal.migrate(backup=Path("/tmp/x"), codec=codec)
        applied = await journal.migrate(codec=codec)
        assert applied.backup == f"table public.{BACKUP}"
        assert (await journal.migrate(codec=codec)).outdated == ()
    finally:
        await journal.aclose()
    assert _versions(pg_dsn, codec) == {2}
    assert _versions(pg_dsn, JOURNAL_RECORD_CODEC, BACKUP) == {1}
    with psycopg.connect(pg_dsn) as connection:
        (copied,) = connection.execute(f"SELECT count(*) FROM {BACKUP}").fetchone() or (0,)
        assert copied == 100
        (seq, body) = connection.execute(
            "SELECT seq, body FROM agentrig_journal ORDER BY seq LIMIT 1"
        ).fetchone() or (0, "")
        newer = json.dumps({**json.loads(body), "v": 3})
        connection.execute("UPDATE agentrig_journal SET body = %s WHERE seq = %s", (newer, seq))
    journal = PostgresJournal(pg_dsn)
    try:
        with pytest.raises(SchemaTooNewError, match="version 3"):
            await journal.migrate(codec=codec)
    finally:
        await journal.aclose()


async def test_a_process_killed_inside_the_transaction_loses_nothing(pg_dsn: str) -> None:
    await _restore(pg_dsn)
    command = [sys.executable, str(CHILD), "--postgres", pg_dsn]
    async with await anyio.open_process(command, cwd=CHILD.parent, env=dict(os.environ)) as child:
        assert child.stdout is not None
        with anyio.fail_after(60):
            said = await child.stdout.receive()
        assert b"rewriting" in said
        await anyio.sleep(0.5)  # well inside the rewrite (100 records, 50 ms each)
        child.send_signal(signal.SIGKILL)
        await child.wait()
    assert child.returncode == -9
    with anyio.fail_after(30):  # the server notices the vanished client and rolls back
        while True:
            with psycopg.connect(pg_dsn) as connection:
                busy = connection.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%%'"
                    " OR (state = 'active' AND query LIKE 'UPDATE%%')"
                ).fetchone()
            if busy is None or busy[0] == 0:
                break
            await anyio.sleep(0.1)
    assert _versions(pg_dsn, JOURNAL_RECORD_CODEC) == {1}  # as it was
    await _assert_loads(pg_dsn)
    with anyio.fail_after(120):
        rerun = await anyio.run_process(
            [sys.executable, str(CHILD), "--postgres", pg_dsn], cwd=CHILD.parent, check=False
        )
    assert rerun.returncode == 0, rerun.stderr
    assert b"100 record(s) in 20 run(s) rewritten" in rerun.stdout
    assert _versions(pg_dsn, codec_v2()) == {2}
