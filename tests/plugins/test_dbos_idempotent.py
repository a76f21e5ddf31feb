"""Durable runs re-run an idempotent tool's effect a crash cut off, instead of waiting for
the host (issue 35 point 6): the worker process is SIGKILLed in the middle of the effect
(after it wrote its marker line, before its result was journaled), on DBOS's SQLite
default and on a real PostgreSQL server; the run finishes by itself, the effect shows
twice in the marker (the tool says that is harmless), once in the session, and the log
notes the re-run with its attempt number.  The same kill with the tool declared not
idempotent makes the run wait for the host (``test_dbos_durable.py``)."""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import entry_points
from pathlib import Path

import anyio
import pytest
from _durable_support import durable_runtime, marker_lines, session_problems
from _postgres_server import PostgresServer
from agentrig_dbos import DURABLE

from agentrig.ids import EntryId
from agentrig.plugin import SESSION_STORES
from agentrig.session import SessionStore

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.subprocess]

CHILD = Path(__file__).with_name("durable_child.py")
AGENT = "assistant.r1"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # durable runs are asyncio-only (DBOS)


def share(tmp: Path, **settings: object) -> None:
    (tmp / "settings.json").write_text(
        json.dumps({"idempotent": True, **settings}), encoding="utf-8"
    )


async def check_rerun(store: SessionStore) -> None:
    assert await session_problems(store, "ses-r1") == []  # one call event, one result each
    events = (await store.load("ses-r1")).events
    notices = [e.data.text for e in events if e.type == "notice"]
    assert len(notices) == 1
    assert notices[0].startswith("re-running effect (m2/call_two), attempt 2:")
    results = [e.data.message.text for e in events if e.type == "tool/result"]
    assert results == ["wrote one", "wrote two"]


async def test_on_sqlite_a_killed_runs_idempotent_effect_runs_again(tmp_path: Path) -> None:
    share(tmp_path)
    with anyio.fail_after(120):
        crashed = await anyio.run_process(
            [sys.executable, str(CHILD), str(tmp_path), "run", "r1", "in-effect:two"],
            cwd=CHILD.parent,
            check=False,
        )
        assert crashed.returncode == -9, crashed.stderr.decode()
        assert marker_lines(tmp_path) == [f"{AGENT}:one", f"{AGENT}:two"]
        resumed = await anyio.run_process(
            [sys.executable, str(CHILD), str(tmp_path), "resume", "r1"], cwd=CHILD.parent
        )
    assert "finished: done" in resumed.stdout.decode()  # no wait for the host
    assert marker_lines(tmp_path) == [f"{AGENT}:one", f"{AGENT}:two", f"{AGENT}:two"]
    factory = entry_points(group="agentrig.session_stores")["jsonl"].load()
    store = factory({"id": "store", "options": {"directory": str(tmp_path / "sessions")}})
    try:
        await check_rerun(store)
    finally:
        await store.aclose()


@pytest.fixture
def pg(pg_cluster: PostgresServer) -> PostgresServer:
    return pg_cluster  # the session's server (conftest.py)


async def test_on_postgresql_a_killed_workers_idempotent_effect_runs_again(
    tmp_path: Path, pg: PostgresServer
) -> None:
    dsn = pg.create_database(f"idem{os.getpid()}")
    share(
        tmp_path,
        dbos={"system_database_url": dsn},
        extra={"session_stores": {"store": {"kind": "postgres", "options": {"dsn": dsn}}}},
    )
    async with durable_runtime(tmp_path) as rt:
        durable = rt.services.require(DURABLE)
        await durable.submit("assistant", "do the thing", run_id="r1")
        with anyio.fail_after(120):  # the queued run, taken by a worker that dies mid-effect
            killed = await anyio.run_process(
                [sys.executable, str(CHILD), str(tmp_path), "worker", "w1", "in-effect:two"],
                cwd=CHILD.parent,
                check=False,
            )
        assert killed.returncode == -9, killed.stderr.decode()
        worker = await anyio.open_process(
            [sys.executable, str(CHILD), str(tmp_path), "worker", "w1"], cwd=CHILD.parent
        )
        try:
            with anyio.fail_after(120):
                result = await durable.result("r1")
            assert await durable.waiting_for("r1") == ()
        finally:
            worker.kill()
            with anyio.CancelScope(shield=True):
                await worker.aclose()
        assert result.text == "done"
        assert marker_lines(tmp_path) == [f"{AGENT}:one", f"{AGENT}:two", f"{AGENT}:two"]
        await check_rerun(rt.catalog(SESSION_STORES).require(EntryId("store")))
