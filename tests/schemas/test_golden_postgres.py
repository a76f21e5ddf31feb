"""Golden PostgreSQL rows of version 1 load through today's postgres session store and
journal; a newer row is refused by name."""

from __future__ import annotations

import json

import psycopg
import pytest
from _golden import GOLDEN
from agentrig_postgres import PostgresJournal, PostgresSessionStore
from make_golden import RUN, SESSION, journal_records, session_events

from agentrig.ids import RunId
from agentrig.schemas import SchemaTooNewError

pytestmark = [pytest.mark.anyio, pytest.mark.integration, pytest.mark.slow]


async def restore(dsn: str) -> None:
    """The golden rows, inserted into the tables today's plugin creates."""
    store = PostgresSessionStore(dsn)
    await store.exists("x")  # creates the tables
    await store.aclose()
    rows = json.loads((GOLDEN / "v1" / "postgres_rows.json").read_text())
    with psycopg.connect(dsn) as connection:
        for session_id, seq, body in rows["agentrig_session_events"]:
            connection.execute(
                "INSERT INTO agentrig_session_events (session_id, seq, body) VALUES (%s,%s,%s)",
                (session_id, seq, body),
            )
        for run_id, kind, key, body in rows["agentrig_journal"]:
            connection.execute(
                "INSERT INTO agentrig_journal (run_id, kind, key, body) VALUES (%s,%s,%s,%s)",
                (run_id, kind, key, body),
            )


async def test_golden_rows_load_migrated(pg_dsn: str) -> None:
    await restore(pg_dsn)
    store = PostgresSessionStore(pg_dsn)
    try:
        report = await store.load(SESSION)
    finally:
        await store.aclose()
    assert not report.damaged, report.detail
    assert [e.model_dump(mode="json") for e in report.events] == [
        e.model_dump(mode="json") for e in session_events()
    ]
    journal = PostgresJournal(pg_dsn)
    try:
        state = await journal.load(RunId(RUN))
    finally:
        await journal.aclose()
    assert state is not None
    assert state.record == journal_records()[0]
    assert list(state.effects) == ["m1/c-a"]


async def test_a_newer_row_is_refused_by_name(pg_dsn: str) -> None:
    await restore(pg_dsn)
    with psycopg.connect(pg_dsn) as connection:
        connection.execute(
            """UPDATE agentrig_session_events SET body = '{"v":9,' || substr(body, 2)
               WHERE seq = 4"""
        )
    store = PostgresSessionStore(pg_dsn)
    try:
        with pytest.raises(SchemaTooNewError, match=r"version 9, newer"):
            await store.load(SESSION)
    finally:
        await store.aclose()
