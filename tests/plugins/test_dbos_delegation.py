"""agentrig-dbos: a durable run whose agent delegates, killed with SIGKILL and resumed.

``assistant`` delegates to ``reviewer`` (call ``call_rev``); the reviewer's model calls the
``effect`` tool with ``c1`` and then ``c2`` (a line each in the marker file) and answers.  A
child process runs the durable run and kills itself at a point in the *child's* run; a
second process launches again and awaits the run.  The child is never run twice: a finished
child is answered from the journal, an unfinished one goes on from its last settled step,
each effect happens once and no model call of the child is made twice.  Real processes,
DBOS's real SQLite system database.
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import entry_points
from pathlib import Path

import anyio
import pytest
from _durable_support import (
    delegation_extra,
    durable_runtime,
    marker_lines,
    output_of,
    session_problems,
    wait_for_host,
)
from _postgres_server import PostgresServer
from agentrig_dbos import DURABLE, UnknownRunError
from test_dbos_durable import CHILD, child, child_process

from agentrig.ids import EntryId
from agentrig.plugin import SESSION_STORES

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

CHILD_AGENT = "reviewer.r1.call_rev"
EFFECTS = [f"{CHILD_AGENT}:c1", f"{CHILD_AGENT}:c2"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # durable runs are asyncio-only (DBOS)


def share(tmp: Path) -> None:
    settings = {"delegation": True, "extra": delegation_extra()}
    (tmp / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def child_requests(tmp: Path) -> list[str]:
    """The pid of the process that made each of the reviewer's model calls."""
    log = tmp / "child_requests.txt"
    return log.read_text(encoding="utf-8").split() if log.exists() else []


async def stored(tmp: Path) -> tuple[dict[str, list[str]], list[str]]:
    """Each session's problems, and the parent's tool results."""
    factory = entry_points(group="agentrig.session_stores")["jsonl"].load()
    store = factory({"id": "store", "options": {"directory": str(tmp / "sessions")}})
    try:
        problems = {
            sid: await session_problems(store, sid) for sid in ("ses-r1", "ses-r1.call_rev")
        }
        parent = await store.load("ses-r1")
        child_log = await store.load("ses-r1.call_rev")
    finally:
        await store.aclose()
    lineage = [e.data for e in child_log.events if e.type == "session/lineage"]
    assert [(x.origin, x.parent_agent, x.parent_session, x.depth) for x in lineage] == [
        ("delegated", "assistant.r1", "ses-r1", 1)
    ]
    return problems, [e.data.message.text for e in parent.events if e.type == "tool/result"]


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(
    "point",
    [
        "before-call:delegate_reviewer",  # the parent's call is dispatched after the restart
        "before-model:2",  # the child's session and turn exist; nothing of it is journaled
        "after-tool:c1",  # the child's first effect settled; its second never started
        "child-stopping",  # the child answered (journaled); the parent's call is unsettled
    ],
)
async def test_a_child_killed_mid_run_is_continued_not_repeated(tmp_path: Path, point: str) -> None:
    share(tmp_path)
    crashed = child(tmp_path, "run", "r1", point)
    assert crashed.returncode == -9, f"did not die at {point}: {crashed.stdout}{crashed.stderr}"
    first = set(child_requests(tmp_path))
    resumed = child(tmp_path, "resume", "r1")
    assert resumed.returncode == 0, resumed.stderr
    assert "finished: done: done" in resumed.stdout
    assert marker_lines(tmp_path) == EFFECTS  # each of the child's effects exactly once
    calls = child_requests(tmp_path)
    assert len(calls) == 3  # c1, c2, the answer: no model call of the child made twice
    if point == "child-stopping":
        assert set(calls) == first  # the finished child ran nothing in the new process
    problems, results = await stored(tmp_path)
    assert problems == {"ses-r1": [], "ses-r1.call_rev": []}
    assert results == ["done"]  # the child's answer is the delegation call's result


@pytest.mark.slow
@pytest.mark.subprocess
async def test_a_childs_effect_cut_off_makes_the_run_wait_for_the_host(tmp_path: Path) -> None:
    share(tmp_path)
    crashed = child(tmp_path, "run", "r1", "in-effect:c2")
    assert crashed.returncode == -9
    async with (
        child_process(str(tmp_path), "resume", "r1") as resumed,
        durable_runtime(tmp_path) as rt,
    ):
        durable = rt.services.require(DURABLE)
        # the child's effect, by its own model call and call
        assert await wait_for_host(durable, "r1") == ("m2/call_c2",)
        assert marker_lines(tmp_path) == EFFECTS  # the host checks the world
        await durable.reconcile("r1", "m2/call_c2", "wrote c2 (checked by the host)")
        out = await output_of(resumed)
    assert "finished: done: done" in out
    assert marker_lines(tmp_path) == EFFECTS  # never twice
    problems, results = await stored(tmp_path)
    assert problems == {"ses-r1": [], "ses-r1.call_rev": []}
    assert results == ["done"]


async def test_an_undisturbed_delegating_run_names_its_child_after_the_call(
    tmp_path: Path,
) -> None:
    share(tmp_path)
    async with durable_runtime(tmp_path) as rt:
        result = await rt.services.require(DURABLE).run("assistant", "go", run_id="r1")
    assert result.text == "done: done"
    assert marker_lines(tmp_path) == EFFECTS
    problems, results = await stored(tmp_path)
    assert problems == {"ses-r1": [], "ses-r1.call_rev": []}
    assert results == ["done"]


@pytest.fixture
def pg(pg_cluster: PostgresServer) -> PostgresServer:
    return pg_cluster  # the session's server (conftest.py)


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("point", ["after-tool:c1", "child-stopping"])
async def test_on_postgresql_a_killed_worker_continues_the_child_not_repeats_it(
    tmp_path: Path, pg: PostgresServer, point: str
) -> None:
    dsn = pg.create_database(f"deleg{point.replace('-', '').replace(':', '')}{os.getpid()}")
    extra = delegation_extra()
    extra["session_stores"] = {"store": {"kind": "postgres", "options": {"dsn": dsn}}}
    settings = {"delegation": True, "dbos": {"system_database_url": dsn}, "extra": extra}
    (tmp_path / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    async with durable_runtime(tmp_path) as rt:
        durable = rt.services.require(DURABLE)
        await durable.submit("assistant", "do the thing", run_id="r1")
        with anyio.fail_after(120):  # a queued run, taken by a worker that dies in the child
            killed = await anyio.run_process(
                [sys.executable, str(CHILD), str(tmp_path), "worker", "w1", point],
                cwd=CHILD.parent,
                check=False,
            )
        assert killed.returncode == -9, killed.stderr.decode()
        first = set(child_requests(tmp_path))
        async with child_process(str(tmp_path), "worker", "w1"):  # restarted, same executor
            with anyio.fail_after(120):
                result = await durable.result("r1")
        assert result.text == "done: done"
        assert marker_lines(tmp_path) == EFFECTS
        calls = child_requests(tmp_path)
        assert len(calls) == 3
        if point == "child-stopping":
            assert set(calls) == first
        store = rt.catalog(SESSION_STORES).require(EntryId("store"))
        for sid in ("ses-r1", "ses-r1.call_rev"):
            assert await session_problems(store, sid) == [], sid
        child_log = await store.load("ses-r1.call_rev")
        lineage = [e.data for e in child_log.events if e.type == "session/lineage"]
        assert [(x.origin, x.parent_session, x.depth) for x in lineage] == [
            ("delegated", "ses-r1", 1)
        ]


async def test_a_childs_question_suspends_the_run_and_the_answer_continues_the_child(
    tmp_path: Path,
) -> None:
    extra = delegation_extra()
    extra["permissions"] = {"mode": "default", "ask": ["effect"]}
    (tmp_path / "settings.json").write_text(
        json.dumps({"delegation": True, "extra": extra}), encoding="utf-8"
    )
    async with durable_runtime(tmp_path) as rt, anyio.create_task_group() as tg:
        durable = rt.services.require(DURABLE)
        results: list[str] = []

        async def run() -> None:
            results.append((await durable.run("assistant", "go", run_id="r1")).text)

        tg.start_soon(run)
        asked: list[tuple[str, str]] = []
        with anyio.fail_after(60):
            while len(asked) < 2:  # the child's two effects, each asked about in its turn
                try:
                    question = await durable.question("r1")
                except UnknownRunError:  # not started yet
                    question = None
                if question is None or (question["call_id"], question["tool"]) in asked:
                    await anyio.sleep(0.1)
                    continue
                asked.append((question["call_id"], question["tool"]))
                assert await durable.status("r1") == "WAITING"
                await durable.approve("r1", question["call_id"], allow=True)
        # leaving the task group awaits the run
    assert asked == [("call_c1", "effect"), ("call_c2", "effect")]
    assert results == ["done: done"]
    assert marker_lines(tmp_path) == EFFECTS
    problems, tool_results = await stored(tmp_path)
    assert problems == {"ses-r1": [], "ses-r1.call_rev": []}
    assert tool_results == ["done"]


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(
    "point",
    [
        "after-tool:c1",  # in the agent that took over, between its effects
        "before-model:2",  # the handoff settled; the target asked nothing yet
    ],
)
async def test_a_handoff_cut_off_by_a_crash_is_continued_by_the_agent_handed_to(
    tmp_path: Path, point: str
) -> None:
    """The handoff's target is named after the transfer call (``reviewer.r1.call_t`` on
    ``ses-r1.call_t``): a restarted process finds it and lets it answer -- from its journal,
    or from its session when the crash came before its first model call -- never the first
    agent, and no effect of the target twice."""
    extra = delegation_extra()
    extra["agents"]["assistant"] = {
        **extra["agents"]["assistant"],
        "subagents": [],
        "handoffs": ["reviewer"],
    }
    settings = {"delegation": "handoff", "extra": extra}
    (tmp_path / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    crashed = child(tmp_path, "run", "r1", point)
    assert crashed.returncode == -9, crashed.stderr
    resumed = child(tmp_path, "resume", "r1")
    assert resumed.returncode == 0, resumed.stderr
    assert "finished: done" in resumed.stdout  # the reviewer's answer
    target = "reviewer.r1.call_t"
    assert marker_lines(tmp_path) == [f"{target}:c1", f"{target}:c2"]
    factory = entry_points(group="agentrig.session_stores")["jsonl"].load()
    store = factory({"id": "store", "options": {"directory": str(tmp_path / "sessions")}})
    try:
        handed = await store.load("ses-r1.call_t")
        lineage = [e.data for e in handed.events if e.type == "session/lineage"]
        assert [(x.origin, x.parent_session, x.configured_as) for x in lineage] == [
            ("handoff", "ses-r1", "reviewer")
        ]
        results = [e.data.message.text for e in handed.events if e.type == "tool/result"]
        assert results.count("wrote c1") == 1
        assert results.count("wrote c2") == 1
    finally:
        await store.aclose()
