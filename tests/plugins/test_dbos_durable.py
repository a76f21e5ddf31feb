"""agentrig-dbos: durable runs on DBOS's SQLite default, killed with SIGKILL and resumed.

Each crash test runs a durable run in a child process that kills itself at a named point,
then a second child launches again (as a restarted process would) and awaits the run by its
id: the run completes, every tool effect happened exactly once, and the session log is
consistent.  Nothing is mocked: real processes, DBOS's real SQLite system database.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from importlib.metadata import entry_points
from pathlib import Path

import anyio
import pytest
from _durable_support import (
    config,
    durable_runtime,
    marker_lines,
    output_of,
    session_problems,
    wait_for_host,
)
from agentrig_dbos import (
    DURABLE,
    Durable,
    DurableBackendError,
    DurableSetupError,
    NotWaitingError,
    UnknownRunError,
)
from dbos import DBOSClient

from agentrig.errors import ConfigError, UnknownIdError
from agentrig.ids import AgentId, EntryId
from agentrig.journal import SqliteJournal
from agentrig.kernel import open_runtime
from agentrig.plugin import RUN_QUEUE, SESSION_STORES

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

CHILD = Path(__file__).with_name("durable_child.py")
AGENT = "assistant.r1"
AGENTRIG = shutil.which("agentrig", path=str(Path(sys.executable).parent)) or "agentrig"


def child(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHILD), str(tmp), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=CHILD.parent,
    )


def crash_then_resume(tmp: Path, point: str) -> str:
    crashed = child(tmp, "run", "r1", point)
    assert crashed.returncode == -9, f"did not die at {point}: {crashed.stdout}{crashed.stderr}"
    resumed = child(tmp, "resume", "r1")
    assert resumed.returncode == 0, resumed.stderr
    return resumed.stdout


async def stored_results(tmp: Path) -> list[str]:
    factory = entry_points(group="agentrig.session_stores")["jsonl"].load()
    store = factory({"id": "store", "options": {"directory": str(tmp / "sessions")}})
    try:
        report = await store.load("ses-r1")
    finally:
        await store.aclose()
    return [e.data.message.text for e in report.events if e.type == "tool/result"]


async def stored_problems(tmp: Path) -> list[str]:
    factory = entry_points(group="agentrig.session_stores")["jsonl"].load()
    store = factory({"id": "store", "options": {"directory": str(tmp / "sessions")}})
    try:
        return await session_problems(store, "ses-r1")
    finally:
        await store.aclose()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # durable runs are asyncio-only (DBOS)


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(
    "point",
    [
        "before-step:1",  # the turn started in the session; its prompt is not there yet
        "before-model:1",  # the turn started in the session; nothing journaled yet
        "in-model:2",  # the second model call was journaled as made, never answered
        "after-tool:one",  # the first effect's result was journaled
        "before-model:3",  # both effects settled; the last round never started
    ],
)
async def test_a_killed_run_resumes_without_repeating_an_effect(tmp_path: Path, point: str) -> None:
    out = crash_then_resume(tmp_path, point)
    assert "finished: done" in out
    assert marker_lines(tmp_path) == [f"{AGENT}:one", f"{AGENT}:two"]
    assert await stored_problems(tmp_path) == []


@pytest.mark.slow
@pytest.mark.subprocess
async def test_an_effect_cut_off_by_the_crash_waits_for_the_host_and_never_reruns(
    tmp_path: Path,
) -> None:
    crashed = child(tmp_path, "run", "r1", "in-effect:two")
    assert crashed.returncode == -9
    async with (
        child_process(str(tmp_path), "resume", "r1") as resumed,
        durable_runtime(tmp_path) as rt,
    ):
        durable = rt.services.require(DURABLE)
        assert await wait_for_host(durable, "r1") == ("m2/call_two",)
        assert await durable.status("r1") == "WAITING"  # and it holds no worker slot
        with pytest.raises(NotWaitingError, match="does not wait for the host to settle"):
            await durable.reconcile("r1", "m1/call_one", "wrote one")
        # the host checks the world (the marker holds the effect) and answers
        assert marker_lines(tmp_path) == [f"{AGENT}:one", f"{AGENT}:two"]
        await durable.reconcile("r1", "m2/call_two", "wrote two (checked by the host)")
        out = await output_of(resumed)
        assert await durable.waiting_for("r1") == ()
        with pytest.raises(NotWaitingError):  # settled once
            await durable.reconcile("r1", "m2/call_two", "again")
    assert "finished: done" in out
    assert marker_lines(tmp_path) == [f"{AGENT}:one", f"{AGENT}:two"]  # never twice
    assert await stored_problems(tmp_path) == []
    assert "wrote two (checked by the host)" in await stored_results(tmp_path)


@pytest.mark.slow
@pytest.mark.subprocess
async def test_a_finished_run_is_answered_from_the_record(tmp_path: Path) -> None:
    first = child(tmp_path, "run", "r1", "none")
    assert "finished: done" in first.stdout, first.stderr
    again = child(tmp_path, "run", "r1", "none")  # same id: awaited, not started again
    assert "finished: done" in again.stdout, again.stderr
    assert marker_lines(tmp_path) == [f"{AGENT}:one", f"{AGENT}:two"]


@pytest.mark.slow
@pytest.mark.subprocess
async def test_the_events_of_a_finished_run_are_its_whole_log_and_an_unknown_run_is_refused(
    tmp_path: Path,
) -> None:
    first = child(tmp_path, "run", "r1", "none")  # executed by another process
    assert "finished: done" in first.stdout, first.stderr
    async with durable_runtime(tmp_path) as rt:
        durable = rt.services.require(DURABLE)
        followed = [event async for event in durable.events("r1")]  # ends: the run finished
        store = rt.catalog(SESSION_STORES).require(EntryId("store"))
        assert followed == list((await store.load("ses-r1")).events)
        assert [e.seq for e in followed] == list(range(1, len(followed) + 1))
        with pytest.raises(UnknownRunError):
            await anext(aiter(durable.events("r-missing")))


async def test_the_default_state_is_owner_only_sqlite(tmp_path: Path) -> None:
    async with durable_runtime(tmp_path) as rt:
        durable = rt.services.require(DURABLE)
        result = await durable.run("assistant", "go", run_id="r1")
        assert durable.system_database_url == f"sqlite:///{tmp_path / 'state' / 'dbos.sqlite3'}"
        assert isinstance(durable.journal, SqliteJournal)
    assert result.text == "done"
    assert result.session_id == "ses-r1"
    state = tmp_path / "state"
    assert state.stat().st_mode & 0o777 == 0o700
    for name in ("dbos.sqlite3", "journal.sqlite3"):
        assert (state / name).stat().st_mode & 0o777 == 0o600, name


async def test_without_a_dbos_table_nothing_is_durable(tmp_path: Path) -> None:
    settings = config(tmp_path)
    del settings["dbos"], settings["tools"], settings["agents"]
    async with open_runtime(settings, environ={}) as rt:
        assert rt.services.get(DURABLE) is None


async def test_an_agent_without_a_session_store_is_refused(tmp_path: Path) -> None:
    bare = {"agents": {"bare": {"provider": "local", "model": "m1"}}}
    async with durable_runtime(tmp_path, extra=bare) as rt:
        durable = rt.services.require(DURABLE)
        with pytest.raises(DurableSetupError, match="session_store"):
            await durable.run("bare", "go")
        with pytest.raises(UnknownIdError, match="did you mean 'assistant'"):
            await durable.submit("asistant", "go")


async def test_a_bad_dbos_key_is_a_config_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        async with durable_runtime(tmp_path, dbos={"queue_size": 3}):
            pass
    assert "dbos.queue_size" in str(caught.value)
    with pytest.raises(ConfigError, match="system_database_url"):
        async with durable_runtime(tmp_path, dbos={"system_database_url": "mysql://x"}):
            pass


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_trio_is_refused_clearly(tmp_path: Path, anyio_backend: str) -> None:
    with pytest.raises(DurableBackendError, match="asyncio only"):
        async with durable_runtime(tmp_path):
            pass


async def wait_for_question(durable: Durable, call_id: str, run_id: str) -> dict[str, object]:
    with anyio.fail_after(60):
        while True:
            with contextlib.suppress(UnknownRunError):  # not started yet
                question = await durable.question(run_id)
                if question is not None and question["call_id"] == call_id:
                    return question
            await anyio.sleep(0.1)


@contextlib.asynccontextmanager
async def child_process(*args: str) -> AsyncIterator[anyio.abc.Process]:
    """A child of this test; killed if the test leaves early (never waited on forever)."""
    command = [sys.executable, str(CHILD), *args]
    process = await anyio.open_process(command, cwd=CHILD.parent)
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()


@pytest.mark.slow
@pytest.mark.subprocess
async def test_a_run_waiting_for_approval_holds_no_worker_slot_and_survives_a_restart(
    tmp_path: Path,
) -> None:
    settings = {
        "dbos": {"queues": {"agentrig": {"worker_concurrency": 1}}},  # one run at a time
        "extra": {"permissions": {"mode": "default", "ask": ["effect"]}},
    }
    (tmp_path / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    async with durable_runtime(tmp_path) as rt:
        durable = rt.services.require(DURABLE)
        assistant = rt.agent(AgentId("assistant"))
        async with child_process(str(tmp_path), "worker", "w1") as worker:
            await assistant.submit("do the thing", run_id="a1")
            await assistant.submit("do the other thing", run_id="b1")
            question = await wait_for_question(durable, "call_one", "a1")
            assert question["tool"] == "effect"
            assert question["arguments"] == {"label": "one"}
            assert await durable.status("a1") == "WAITING"
            # a1 waits, yet the worker (concurrency 1) takes b1: a1 holds no slot
            for call in ("call_one", "call_two"):
                await wait_for_question(durable, call, "b1")
                await durable.approve("b1", call, allow=True)
            with anyio.fail_after(60):
                assert (await durable.result("b1")).text == "done"
            assert await durable.question("a1") == question  # still waiting, same call
            assert await durable.statuses(["a1", "b1", "nope"]) == {
                "a1": "WAITING",
                "b1": "SUCCESS",
            }
            assert marker_lines(tmp_path) == ["assistant.b1:one", "assistant.b1:two"]
            worker.kill()
            await worker.wait()
        async with child_process(str(tmp_path), "worker", "w1"):  # restarted
            assert await durable.question("a1") == question
            await durable.approve("a1", "call_one", allow=True)
            with pytest.raises(NotWaitingError):  # the first answer counts, once
                await durable.approve("a1", "call_one", allow=False)
            await wait_for_question(durable, "call_two", "a1")
            with pytest.raises(NotWaitingError, match="waits on call 'call_two', not 'call_x'"):
                await durable.approve("a1", "call_x", allow=True)
            await durable.approve("a1", "call_two", allow=False)  # denied: asked again
            await wait_for_question(durable, "call_two_1", "a1")
            await durable.approve("a1", "call_two_1", allow=True)
            with anyio.fail_after(60):
                result = await durable.result("a1")
        assert await durable.question("a1") is None
        assert await durable.status("a1") == "SUCCESS"
        assert await durable.statuses(["a1"]) == {"a1": "SUCCESS"}  # through its links
        with pytest.raises(UnknownRunError):
            await durable.status("nope")
        with pytest.raises(NotWaitingError, match="waits on no question"):
            await durable.approve("a1", "call_two_1", allow=True)
        store = rt.catalog(SESSION_STORES).require(EntryId("store"))
        assert await session_problems(store, "ses-a1") == []
        assert await session_problems(store, "ses-b1") == []
    assert (result.run_id, result.text) == ("a1", "done")
    assert sorted(marker_lines(tmp_path)) == [  # each effect exactly once
        "assistant.a1:one",
        "assistant.a1:two",
        "assistant.b1:one",
        "assistant.b1:two",
    ]


@pytest.mark.slow
@pytest.mark.subprocess
async def test_agent_submit_queues_a_durable_run_that_a_worker_process_finishes(
    tmp_path: Path,
) -> None:
    async with (
        durable_runtime(tmp_path) as rt,
        child_process(str(tmp_path), "worker", "w1") as worker,
    ):
        durable = rt.services.require(DURABLE)
        assert rt.services.require(RUN_QUEUE) is durable
        run_id = await rt.agent(AgentId("assistant")).submit("do the thing", run_id="s1")
        assert run_id == "s1"
        assert await rt.agent(AgentId("assistant")).submit("again", run_id="s1") == "s1"
        with anyio.fail_after(120):
            result = await durable.result(run_id)
        assert worker.returncode is None  # executed by the worker, which still runs
    assert (result.text, result.agent, result.session_id) == ("done", "assistant", "ses-s1")
    assert marker_lines(tmp_path) == ["assistant.s1:one", "assistant.s1:two"]  # once
    with pytest.raises(DurableSetupError, match="no queue 'nope'"):
        async with durable_runtime(tmp_path) as rt:
            await rt.agent(AgentId("assistant")).submit("x", queue="nope")


@pytest.mark.slow
@pytest.mark.subprocess
async def test_links_of_one_run_alternate_between_processes_without_stale_journal_state(
    tmp_path: Path,
) -> None:
    """Link 0 runs here (this process's journal caches the run), link 1 in a worker process
    (which writes more of the run), link 2 here again: it must read the worker's writes."""
    ask = {"permissions": {"mode": "default", "ask": ["effect"]}}
    (tmp_path / "settings.json").write_text(json.dumps({"extra": ask}), encoding="utf-8")
    here = {"default_queue": "here"}  # this process serves only the queue "here"
    async with (
        durable_runtime(tmp_path, dbos=here) as rt,
        durable_runtime(tmp_path) as other,  # answers onto the worker's queue (not launched)
        child_process(str(tmp_path), "worker", "w1"),
        anyio.create_task_group() as tg,
    ):
        durable = rt.services.require(DURABLE)
        elsewhere = other.services.require(DURABLE)
        finished: list[str] = []
        done = anyio.Event()

        async def run_here() -> None:
            finished.append((await durable.run("assistant", "do the thing", run_id="r1")).text)
            done.set()

        tg.start_soon(run_here)
        await wait_for_question(durable, "call_one", "r1")  # link 0 ran here
        await elsewhere.approve("r1", "call_one", allow=True)  # link 1: the worker's queue
        await wait_for_question(durable, "call_two", "r1")
        await durable.approve("r1", "call_two", allow=True)  # link 2: back here
        with anyio.fail_after(60):
            await done.wait()
        executors = {
            link: (await (await durable._handle(link)).get_status()).executor_id
            for link in ("r1", "r1.a1", "r1.a2")
        }
    assert finished == ["done"]
    assert executors == {"r1": "local", "r1.a1": "w1", "r1.a2": "local"}
    assert marker_lines(tmp_path) == [f"{AGENT}:one", f"{AGENT}:two"]
    assert await stored_problems(tmp_path) == []


def host_config(tmp: Path) -> Path:
    """The composition a person at the host's terminal uses: the same state directory and
    session store as the test's processes (it executes nothing, so it needs no tools)."""
    config = tmp / "agentrig.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [providers.local]
            kind = "scripted"
            options.rounds = [{{ text = "unused" }}]

            [session_stores.store]
            kind = "jsonl"
            options.directory = "{tmp / "sessions"}"

            [agents.assistant]
            provider = "local"
            model = "m1"
            session_store = "store"

            [dbos]
            state_dir = "{tmp / "state"}"
            """
        ),
        encoding="utf-8",
    )
    return config


def started_worker(config: Path, executor: str) -> subprocess.Popen[str]:
    """``agentrig worker`` left running, once it said it executes runs."""
    worker = subprocess.Popen(
        [AGENTRIG, "worker", "--executor-id", executor, "-c", str(config)],
        stderr=subprocess.PIPE,
        text=True,
        cwd=config.parent,
    )
    assert worker.stderr is not None
    assert f"executing durable runs ({executor})" in worker.stderr.readline()
    return worker


def agentrig_cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AGENTRIG, *args, "-c", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=config.parent,
    )


@pytest.mark.slow
@pytest.mark.subprocess
async def test_the_host_settles_a_cut_off_effect_from_the_command_line(tmp_path: Path) -> None:
    crashed = child(tmp_path, "run", "r1", "in-effect:two")
    assert crashed.returncode == -9
    config = host_config(tmp_path)
    async with child_process(str(tmp_path), "resume", "r1") as resumed:
        with anyio.fail_after(120):
            while True:
                waiting = await anyio.to_thread.run_sync(agentrig_cli, config, "waiting", "r1")
                assert waiting.returncode == 0, waiting.stderr
                if waiting.stdout.split() == ["m2/call_two"]:
                    break
                await anyio.sleep(0.2)
        wrong = agentrig_cli(config, "reconcile", "r1", "m1/call_one", "wrote one")
        assert wrong.returncode == 1
        assert wrong.stderr.count("\n") == 1, wrong.stderr
        assert "error [dbos.not_waiting]" in wrong.stderr
        settled = agentrig_cli(config, "reconcile", "r1", "m2/call_two", "wrote two (checked)")
        assert settled.returncode == 0, settled.stderr
        out = await output_of(resumed)
    assert "finished: done" in out
    assert agentrig_cli(config, "waiting", "r1").stdout.strip() == "nothing to settle"
    assert marker_lines(tmp_path) == [f"{AGENT}:one", f"{AGENT}:two"]  # never twice
    assert "wrote two (checked)" in await stored_results(tmp_path)
    assert await stored_problems(tmp_path) == []


@pytest.mark.slow
@pytest.mark.subprocess
async def test_a_failed_run_is_retried_from_its_journal_by_id(tmp_path: Path) -> None:
    failed = child(tmp_path, "run", "r1", "fail-after-tool:one")
    assert failed.returncode == 1
    assert "ExecutionControlError: the run fails after effect one" in failed.stderr
    config = host_config(tmp_path)
    shown = agentrig_cli(config, "result", "r1")
    assert shown.returncode == 1
    assert shown.stderr.strip().splitlines() == [
        "agentrig result: error [execution.control]: the run fails after effect one (a test)"
    ]
    retried = agentrig_cli(config, "retry", "r1")
    assert retried.returncode == 0, retried.stderr
    assert retried.stdout.strip() == "retrying r1 (r1.r)"
    again = agentrig_cli(config, "retry", "r1")  # queued, not failed: nothing to retry
    assert again.returncode == 1
    assert "error [dbos.not_failed]" in again.stderr
    resumed = child(tmp_path, "resume", "r1")  # a worker takes the retry up
    assert "finished: done" in resumed.stdout, resumed.stderr
    assert marker_lines(tmp_path) == [f"{AGENT}:one", f"{AGENT}:two"]  # "one" not rerun
    assert await stored_problems(tmp_path) == []
    done = agentrig_cli(config, "retry", "r1")
    assert "error [dbos.not_failed]" in done.stderr
    assert "SUCCESS" in done.stderr


@pytest.mark.slow
@pytest.mark.subprocess
async def test_a_replacement_worker_recovers_the_runs_of_an_executor_that_is_gone(
    tmp_path: Path,
) -> None:
    """A process with executor id ``local`` dies mid-run and never comes back; a worker
    with another id puts the run back on its queue after ``recover_after`` and finishes
    it from the journal."""
    (tmp_path / "settings.json").write_text(json.dumps({"dbos": {"recover_after": 1}}))
    crashed = child(tmp_path, "run", "r1", "before-model:2")
    assert crashed.returncode == -9
    async with (
        child_process(str(tmp_path), "worker", "w2"),
        durable_runtime(tmp_path) as rt,
    ):
        durable = rt.services.require(DURABLE)
        with anyio.fail_after(120):
            result = await durable.result("r1")
    assert result.text == "done"
    assert marker_lines(tmp_path) == [f"{AGENT}:one", f"{AGENT}:two"]
    assert await stored_problems(tmp_path) == []


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_second_live_worker_with_the_same_executor_id_is_refused(tmp_path: Path) -> None:
    config = host_config(tmp_path)
    first = started_worker(config, "w1")
    try:
        second = agentrig_cli(config, "worker", "--executor-id", "w1")
        assert second.returncode == 1
        assert second.stderr.strip().splitlines() == [
            "agentrig worker: error [dbos.setup]: executor id 'w1' is in use by a live worker "
            "on this system database; give each worker its own --executor-id (or [dbos] "
            "executor_id)"
        ]
    finally:
        first.kill()
        first.wait()
    # the lease went with the process: the id is free again
    again = started_worker(config, "w1")
    try:
        assert again.poll() is None
    finally:
        again.kill()
        again.wait()


@pytest.mark.slow
@pytest.mark.subprocess
async def test_a_worker_composed_differently_leaves_the_runs_to_one_that_can_serve_them(
    tmp_path: Path,
) -> None:
    """Two workers on one queue: ``other`` lacks the agent the runs need.  The runs carry
    the fingerprint of the composition that submitted them, so ``other`` takes none of
    them (it would fail each), and ``w1`` runs them all."""
    other_config = host_config(tmp_path).with_name("other.toml")
    other_config.write_text(
        (tmp_path / "agentrig.toml").read_text().replace("[agents.assistant]", "[agents.helper]")
    )
    other = started_worker(other_config, "other")
    try:
        async with durable_runtime(tmp_path) as rt:
            durable = rt.services.require(DURABLE)
            ids = [await durable.submit("assistant", "do it", run_id=f"f{n}") for n in range(4)]
            await anyio.sleep(2)  # the other worker polls the queue meanwhile
            assert set((await durable.statuses(ids)).values()) == {"ENQUEUED"}
            async with child_process(str(tmp_path), "worker", "w1"):
                with anyio.fail_after(120):
                    results = [await durable.result(run_id) for run_id in ids]
            client = await anyio.to_thread.run_sync(
                lambda: DBOSClient(system_database_url=durable.system_database_url)
            )
            try:
                rows = await client.list_workflows_async(workflow_ids=ids, load_input=False)
            finally:
                await anyio.to_thread.run_sync(client.destroy)
    finally:
        other.kill()
        other.wait()
    assert [r.text for r in results] == ["done"] * 4
    assert {row.executor_id for row in rows} == {"w1"}
    assert {row.app_version for row in rows} == {durable.fingerprint}
