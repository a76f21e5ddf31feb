"""agentrig-dbos: a durable run that compacts its history, killed with SIGKILL after the
summary call and resumed in a new process: the summary model is asked once, never again,
and the session log is consistent.  On DBOS's SQLite default and on a real PostgreSQL server
(the journal, the runs and the session store in one database)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from _durable_support import marker_lines, session_problems
from _postgres_server import PostgresServer

from agentrig.ids import SessionId
from agentrig.session import ContextCompacted, Session

pytestmark = [pytest.mark.anyio, pytest.mark.integration, pytest.mark.slow, pytest.mark.subprocess]

CHILD = Path(__file__).with_name("dbos_compaction_child.py")
AGENT = "assistant.r1"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # durable runs are asyncio-only (DBOS)


@pytest.fixture
def server(pg_cluster: PostgresServer) -> PostgresServer:
    return pg_cluster  # the session's server (conftest.py)


def child(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHILD), str(tmp), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=CHILD.parent,
    )


def summary_requests(tmp: Path) -> list[str]:
    path = tmp / "summaries.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


async def stored_session(tmp: Path, store_kind: str, options: dict[str, Any]) -> Any:
    factory = entry_points(group="agentrig.session_stores")[store_kind].load()
    store = factory({"id": "store", "options": options})
    try:
        report = await store.load("ses-r1")
        problems = await session_problems(store, "ses-r1")
    finally:
        await store.aclose()
    return report.events, problems


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@pytest.mark.parametrize("point", ["after-summary", "in-model-after-summary"])
async def test_a_killed_durable_run_is_not_summarised_twice(
    tmp_path: Path, point: str, backend: str, request: pytest.FixtureRequest
) -> None:
    store: tuple[str, dict[str, Any]] = ("jsonl", {"directory": str(tmp_path / "sessions")})
    if backend == "postgres":
        server: PostgresServer = request.getfixturevalue("server")
        dsn = server.create_database(f"compaction{os.getpid()}{abs(hash(point)) % 10_000}")
        store = ("postgres", {"dsn": dsn})
        settings = {
            "dbos": {"system_database_url": dsn},
            "extra": {"session_stores": {"store": {"kind": "postgres", "options": {"dsn": dsn}}}},
        }
        (tmp_path / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    crashed = child(tmp_path, "run", "r1", point)
    assert crashed.returncode == -9, f"did not die at {point}: {crashed.stdout}{crashed.stderr}"
    assert len(summary_requests(tmp_path)) == 1
    resumed = child(tmp_path, "resume", "r1")
    assert resumed.returncode == 0, resumed.stderr
    assert "finished: done" in resumed.stdout
    assert len(summary_requests(tmp_path)) == 1  # the resumed run reused the journaled summary
    assert marker_lines(tmp_path) == [f"{AGENT}:one", f"{AGENT}:two"]
    events, problems = await stored_session(tmp_path, *store)
    # the compaction replaced the prompt: the model's view holds the summary, not the prompt
    assert [p for p in problems if "user messages in the model's view" not in p] == []
    compactions = [e.data for e in events if isinstance(e.data, ContextCompacted)]
    assert [(c.strategy, c.replaced) for c in compactions] == [("summary", 1)]
    session = Session(SessionId("ses-r1"))
    session.load(events)
    view = session.derive_messages()
    assert [m.role for m in view] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert getattr(view[0], "source", None) == "compaction-summary"
    assert view[-1].text == "done"
