"""agentrig-postgres against a real PostgreSQL server that these tests start themselves.

The store is reached the way a user gets it: the installed ``agentrig-postgres``
distribution's ``postgres`` entry point in ``agentrig.session_stores``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import sys
import textwrap
from collections.abc import AsyncIterator, Callable, Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import psycopg
import pytest
from _durable_support import durable_runtime
from _postgres_server import PostgresServer, postgres_server
from agentrig_dbos import DURABLE
from agentrig_postgres import PostgresSessionStore
from anyio.streams.buffered import BufferedByteReceiveStream

from agentrig.errors import ConfigError
from agentrig.ids import AgentId, CallId, EntryId, InvocationId, RunId, SessionId
from agentrig.journal import (
    ExecutionLimits,
    ExecutionRecord,
    JournalWriteError,
    ModelIntent,
    ModelSettlement,
    ToolIntent,
    ToolSettlement,
)
from agentrig.kernel import open_runtime
from agentrig.llm import AssistantMessage, TextBlock, ToolMessage, UserMessage
from agentrig.plugin import SESSION_STORES
from agentrig.session import (
    AssistantMessageEvent,
    BrokenWriterError,
    Session,
    SessionEvent,
    SessionStore,
    SessionStoreError,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
    WriterConflictError,
    dump_event,
    parse_event,
)
from agentrig.testing.conformance_session_store import SessionStoreConformance

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

_databases = itertools.count()


@pytest.fixture(scope="module")
def server() -> Iterator[PostgresServer]:
    with postgres_server() as running:
        yield running


@pytest.fixture
def dsn(server: PostgresServer) -> str:
    """A fresh database per test."""
    return server.create_database(f"t{os.getpid()}_{next(_databases)}")


def build(dsn: str, **options: Any) -> SessionStore:
    factory = entry_points(group="agentrig.session_stores")["postgres"].load()
    store: SessionStore = factory({"id": "shared", "options": {"dsn": dsn, **options}})
    assert isinstance(store, SessionStore)
    return store


@pytest.fixture
async def store(dsn: str) -> AsyncIterator[SessionStore]:
    built = build(dsn)
    try:
        yield built
    finally:
        await built.aclose()


def sample(session_id: str, turns: int = 2) -> list[SessionEvent]:
    session = Session(SessionId(session_id))
    for turn in range(1, turns + 1):
        session.append(TurnStart(turn=turn))
        session.append(UserMessageEvent(message=UserMessage.of(f"question {turn} — ünïcode")))
        session.append(
            AssistantMessageEvent(
                message=AssistantMessage(content=(TextBlock(text=f"answer {turn}"),))
            )
        )
        session.append(TurnEnd(turn=turn, reason="completed"))
    return list(session.events)


def dicts(events: Any) -> list[dict[str, Any]]:
    return [event.model_dump(mode="json") for event in events]


# ---- the store contract --------------------------------------------------------------------


async def test_append_then_load_round_trips_every_event(store: SessionStore) -> None:
    events = sample("ses_round")
    writer = await store.open_writer("ses_round")
    await writer.append(events[:3])
    await writer.append(events[3:])
    await writer.aclose()
    report = await store.load("ses_round")
    assert dicts(report.events) == dicts(events)
    assert not report.damaged
    assert await store.exists("ses_round")
    assert not await store.exists("ses_other")
    assert await store.list_sessions() == ("ses_round",)


async def test_unknown_variants_are_written_back_unchanged(store: SessionStore) -> None:
    raw = '{"seq":1,"time":17.5,"data":{"type":"acme/thing","zeta":0,"b":{"x":[1,null]}}}'
    unknown = parse_event(raw)
    writer = await store.open_writer("ses_unknown")
    await writer.append([unknown])
    await writer.aclose()
    (loaded,) = (await store.load("ses_unknown")).events
    assert loaded.data.type == "acme/thing"
    assert dump_event(loaded) == dump_event(unknown)
    # stored at the current version: the raw event behind ``"v"``
    assert json.loads(dump_event(loaded)) == {"v": 2, **json.loads(raw)}


async def test_a_second_writer_is_refused_until_the_first_closes(dsn: str) -> None:
    first, second = build(dsn), build(dsn)  # two runtimes (connections) on one database
    try:
        writer = await first.open_writer("ses_one")
        with pytest.raises(WriterConflictError, match="already has a writer"):
            await second.open_writer("ses_one")
        other = await second.open_writer("ses_two")  # another session is free
        await other.aclose()
        await writer.aclose()
        again = await second.open_writer("ses_one")
        await again.aclose()
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_failed_batch_stores_nothing_and_breaks_the_writer(store: SessionStore) -> None:
    events = sample("ses_fail")
    writer = await store.open_writer("ses_fail")
    await writer.append(events[:2])
    # the second batch repeats seq 2: the transaction fails, so event 3 is not stored either
    with pytest.raises(SessionStoreError, match="was not stored"):
        await writer.append([events[2], events[1]])
    with pytest.raises(BrokenWriterError, match="open the session again"):
        await writer.append(events[3:])
    await writer.aclose()
    report = await store.load("ses_fail")
    assert [e.seq for e in report.events] == [1, 2]
    reopened = await store.open_writer("ses_fail")
    await reopened.append(events[2:])
    await reopened.aclose()
    assert [e.seq for e in (await store.load("ses_fail")).events] == [1, 2, 3, 4, 5, 6, 7, 8]


def terminate_writers(dsn: str) -> None:
    """An operator ends every connection that holds a session lock (57P01)."""
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks "
            "WHERE locktype = 'advisory' AND pid <> pg_backend_pid()"
        )


async def test_a_writer_whose_connection_is_lost_reconnects_and_keeps_its_session(
    store: SessionStore, dsn: str
) -> None:
    events = sample("ses_back")
    writer = await store.open_writer("ses_back")
    await writer.append(events[:4])
    terminate_writers(dsn)
    await writer.append(events[4:])  # a new connection, the session's lock taken again
    with pytest.raises(WriterConflictError):
        await store.open_writer("ses_back")
    await writer.aclose()
    assert dicts((await store.load("ses_back")).events) == dicts(events)


async def test_without_retries_a_lost_connection_stops_the_writer_and_frees_the_session(
    dsn: str,
) -> None:
    store = build(dsn, retry_for=0)
    events = sample("ses_cut")
    writer = await store.open_writer("ses_cut")
    await writer.append(events[:4])
    terminate_writers(dsn)
    with pytest.raises(SessionStoreError, match="may or may not be stored"):
        await writer.append(events[4:])
    with pytest.raises(BrokenWriterError):
        await writer.append(events[4:])
    await writer.aclose()
    # its lock went with its connection: the session is free, and nothing was confirmed
    # on top of what the first append stored
    again = await store.open_writer("ses_cut")
    await again.append(events[4:])
    await again.aclose()
    assert dicts((await store.load("ses_cut")).events) == dicts(events)
    await store.aclose()


async def test_a_lost_connection_that_took_the_writers_lock_is_a_conflict(dsn: str) -> None:
    """While the writer reconnects, another writer takes the session: refused, not merged."""
    store, other = build(dsn), build(dsn)
    events = sample("ses_taken")
    writer = await store.open_writer("ses_taken")
    await writer.append(events[:4])
    terminate_writers(dsn)
    thief = await other.open_writer("ses_taken")
    with pytest.raises(SessionStoreError, match="already has a writer"):
        await writer.append(events[4:])
    await writer.aclose()
    await thief.aclose()
    assert [e.seq for e in (await store.load("ses_taken")).events] == [1, 2, 3, 4]
    await store.aclose()
    await other.aclose()


async def test_gaps_and_unreadable_rows_are_reported_as_damage(
    store: SessionStore, dsn: str
) -> None:
    writer = await store.open_writer("ses_gap")
    await writer.append(sample("ses_gap"))
    await writer.aclose()
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(
            "DELETE FROM agentrig_session_events WHERE session_id = 'ses_gap' AND seq = 3"
        )
        connection.execute(
            "UPDATE agentrig_session_events SET body = 'not json' "
            "WHERE session_id = 'ses_gap' AND seq = 5"
        )
    report = await store.load("ses_gap")
    assert report.damaged
    assert report.detail is not None
    assert "event 5 unreadable" in report.detail
    assert "missing" in report.detail
    assert [e.seq for e in report.events] == [1, 2, 4, 6, 7, 8]


async def test_a_session_that_was_never_written_is_unknown(store: SessionStore) -> None:
    writer = await store.open_writer("ses_empty")
    await writer.aclose()
    assert not await store.exists("ses_empty")
    assert await store.list_sessions() == ()
    with pytest.raises(SessionStoreError, match="no stored session"):
        await store.load("ses_empty")


async def test_a_schema_option_keeps_the_tables_apart(dsn: str) -> None:
    a, b = build(dsn, schema="team_a"), build(dsn, schema="team_b")
    try:
        writer = await a.open_writer("ses_x")
        await writer.append(sample("ses_x", turns=1))
        await writer.aclose()
        assert await a.list_sessions() == ("ses_x",)
        assert await b.list_sessions() == ()
    finally:
        await a.aclose()
        await b.aclose()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_an_unreachable_server_is_a_clear_store_error() -> None:
    port = closed_port()
    unreachable = build(f"postgresql://agentrig@127.0.0.1:{port}/none", connect_timeout=2)
    with pytest.raises(SessionStoreError, match=f"127.0.0.1:{port}"):
        await unreachable.list_sessions()
    await unreachable.aclose()


async def test_a_missing_database_is_created_when_the_role_may(server: PostgresServer) -> None:
    from agentrig_postgres import PostgresJournal

    name = f"made{os.getpid()}_{next(_databases)}"
    store = build(server.dsn(name))
    assert await store.list_sessions() == ()  # created, then its tables
    await store.aclose()
    journal = PostgresJournal(server.dsn(f"{name}_j"))
    assert await journal.executions() == ()
    await journal.aclose()
    with psycopg.connect(server.dsn(), autocommit=True) as admin:
        rows = admin.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s ORDER BY 1", (f"{name}%",)
        ).fetchall()
    assert rows == [(name,), (f"{name}_j",)]


async def test_a_missing_database_the_role_may_not_create_is_one_line_saying_how(
    server: PostgresServer,
) -> None:
    role = f"plain{os.getpid()}_{next(_databases)}"
    with psycopg.connect(server.dsn(), autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{role}" LOGIN NOCREATEDB')
    name = f"nothere{os.getpid()}"
    dsn = server.dsn(name).replace("agentrig@", f"{role}@")
    store = build(dsn)
    with pytest.raises(SessionStoreError) as refused:
        await store.list_sessions()
    await store.aclose()
    message = str(refused.value)
    assert "\n" not in message
    assert f"database {name} on" in message
    assert "permission denied to create database" in message
    assert f"createdb -O {role} {name}" in message


# ---- composed from agentrig.toml -----------------------------------------------------------


async def test_a_runtime_composes_the_store_from_config(dsn: str, tmp_path: Path) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [session_stores.shared]
            kind = "postgres"
            options = {{ dsn = "{dsn}", schema = "agentrig" }}
            """
        ),
        encoding="utf-8",
    )
    async with open_runtime(config, environ={}) as rt:
        store = rt.catalog(SESSION_STORES).require(EntryId("shared"))
        writer = await store.open_writer("ses_cfg")
        await writer.append(sample("ses_cfg", turns=1))
        await writer.aclose()
    with psycopg.connect(dsn) as connection:
        (count,) = connection.execute(
            "SELECT count(*) FROM agentrig.agentrig_session_events"
        ).fetchone() or (0,)
    assert count == 4


async def test_bad_options_are_config_errors_with_their_path(tmp_path: Path) -> None:
    config = {
        "session_stores": {"shared": {"kind": "postgres", "options": {"dns": "postgresql://x"}}}
    }
    with pytest.raises(ConfigError) as caught:
        async with open_runtime(config, environ={}):
            pass
    rendered = str(caught.value)
    assert "session_stores.shared.options" in rendered
    assert "dns" in rendered


# ---- across processes ----------------------------------------------------------------------

_CHILD = textwrap.dedent(
    """
    import itertools, sys, anyio
    from importlib.metadata import entry_points
    from agentrig.session import Session, TurnStart, TurnEnd

    async def main(dsn, session_id, mode):
        factory = entry_points(group="agentrig.session_stores")["postgres"].load()
        store = factory({"id": "s", "options": {"dsn": dsn}})
        writer = await store.open_writer(session_id)
        session = Session(session_id)
        print("locked", flush=True)
        for turn in itertools.count(1):
            # "loop": append until killed; "step": one turn per line read from stdin
            if mode == "step" and not sys.stdin.readline():
                break
            batch = [session.append(TurnStart(turn=turn)), session.append(TurnEnd(turn=turn,
                     reason="completed"))]
            await writer.append(batch)
            print(turn, flush=True)
        await writer.aclose()
        await store.aclose()

    anyio.run(main, *sys.argv[1:])
    """
)


@pytest.mark.subprocess
@pytest.mark.slow
async def test_a_killed_writer_leaves_whole_batches_and_frees_its_session(
    store: SessionStore, dsn: str
) -> None:
    async with await anyio.open_process(
        [sys.executable, "-c", _CHILD, dsn, "ses_killed", "loop"]
    ) as child:
        assert child.stdout is not None
        lines = BufferedByteReceiveStream(child.stdout)
        assert await lines.receive_until(b"\n", 100) == b"locked"
        with pytest.raises(WriterConflictError):
            await store.open_writer("ses_killed")  # held by the child, across processes
        confirmed = 0
        for _ in range(25):  # let it commit some batches, then kill it mid-stream
            confirmed = int(await lines.receive_until(b"\n", 100))
        child.send_signal(signal.SIGKILL)
        await child.wait()
    report = await store.load("ses_killed")
    seqs = [e.seq for e in report.events]
    assert not report.damaged
    assert len(seqs) % 2 == 0  # every batch whole, never torn
    assert len(seqs) >= 2 * confirmed  # every confirmed batch is there
    assert seqs == list(range(1, len(seqs) + 1))
    # the child's lock dies with its connection: the server notices the closed socket a
    # moment after the kill, and the session can be written again
    with anyio.fail_after(30):
        while True:
            try:
                writer = await store.open_writer("ses_killed")
            except WriterConflictError:
                await anyio.sleep(0.05)
                continue
            break
    await writer.aclose()


# ---- the journal ---------------------------------------------------------------------------

RUN = "run_pg_1"


def execution(run_id: str = RUN) -> ExecutionRecord:
    return ExecutionRecord(
        run_id=RunId(run_id),
        agent_id=AgentId("assistant"),
        session_id=SessionId("ses_1"),
        provider="local",
        model="m1",
        limits=ExecutionLimits(max_rounds=5, identical_input_limit=3),
        tools=("effect",),
        resident=("effect",),
    )


async def test_the_journal_rebuilds_an_execution_across_connections(dsn: str) -> None:
    from agentrig_postgres import PostgresJournal

    journal = PostgresJournal(dsn, schema="journal")
    await journal.begin_execution(execution())
    await journal.model_intent(
        ModelIntent(run_id=RunId(RUN), call_id=InvocationId("m1"), digest="d", model="m1")
    )
    message = AssistantMessage(content=(TextBlock(text="hi"),))
    await journal.model_result(
        ModelSettlement(
            run_id=RunId(RUN), call_id=InvocationId("m1"), outcome="completed", message=message
        )
    )
    intent = ToolIntent(
        run_id=RunId(RUN),
        invocation_id=InvocationId("m1/c"),
        model_call_id=InvocationId("m1"),
        call_id=CallId("c"),
        tool="effect",
        arguments={"label": "x"},
    )
    await journal.tool_intent(intent)
    with pytest.raises(JournalWriteError, match="already journaled"):
        await journal.tool_intent(intent)
    await journal.aclose()

    again = PostgresJournal(dsn, schema="journal")  # a new process would do the same
    try:
        state = await again.load(RunId(RUN))
        assert state is not None
        assert [e.invocation_id for e in state.unsettled_effects()] == ["m1/c"]
        await again.tool_result(
            ToolSettlement(
                run_id=RunId(RUN),
                invocation_id=InvocationId("m1/c"),
                message=ToolMessage.of("c", "effect", "ok"),
            )
        )
        state = await again.load(RunId(RUN))
        assert state is not None
        assert state.unsettled_effects() == []
        assert state.next_call_id() == "m2"
        assert [r.run_id for r in await again.executions(agent_id=AgentId("assistant"))] == [RUN]
    finally:
        await again.aclose()


async def test_two_journal_objects_cannot_write_one_record_twice(dsn: str) -> None:
    from agentrig_postgres import PostgresJournal

    here, there = PostgresJournal(dsn), PostgresJournal(dsn)  # as two processes would
    try:
        await here.begin_execution(execution())
        assert (await here.load(RunId(RUN))) is not None  # cached here: it has not seen m1
        intent = ModelIntent(run_id=RunId(RUN), call_id=InvocationId("m1"), digest="d", model="m1")
        await there.model_intent(intent)
        # here's cache lets the write through; the stored record under the same key differs
        other = intent.model_copy(update={"digest": "e"})
        with pytest.raises(JournalWriteError, match="different model/intent"):
            await here.model_intent(other)
        # the same record again (a write retried after its reply was lost) is one row
        await here.model_intent(intent)
        with psycopg.connect(dsn) as connection:
            rows = connection.execute(
                "SELECT count(*) FROM agentrig_journal WHERE kind = 'model/intent'"
            ).fetchone()
        assert rows == (1,)
        there.forget(RunId(RUN))
        fresh = await there.load(RunId(RUN))
        assert fresh is not None
        assert [c.call_id for c in fresh.model_calls] == ["m1"]
    finally:
        await here.aclose()
        await there.aclose()


async def test_a_server_restart_is_waited_out_by_a_writer_a_reader_and_the_journal(
    server: PostgresServer, dsn: str
) -> None:
    """``pg_ctl restart -m immediate`` while an append and a journal write wait for it."""
    from agentrig_postgres import PostgresJournal

    store, journal = build(dsn), PostgresJournal(dsn)
    events = sample("ses_restart")
    writer = await store.open_writer("ses_restart")
    await writer.append(events[:4])
    await journal.begin_execution(execution())
    await anyio.to_thread.run_sync(lambda: server.stop(immediate=True))
    intent = ModelIntent(run_id=RunId(RUN), call_id=InvocationId("m1"), digest="d", model="m1")
    async with anyio.create_task_group() as tg:
        tg.start_soon(writer.append, events[4:])
        tg.start_soon(journal.model_intent, intent)
        await anyio.sleep(1.0)  # both meet a server that is down, and wait
        await anyio.to_thread.run_sync(server.start)
    with pytest.raises(WriterConflictError):  # the writer took its lock again
        await store.open_writer("ses_restart")
    await writer.aclose()
    assert dicts((await store.load("ses_restart")).events) == dicts(events)
    journal.forget(RunId(RUN))
    state = await journal.load(RunId(RUN))
    assert state is not None
    assert [c.call_id for c in state.model_calls] == ["m1"]
    await store.aclose()
    await journal.aclose()


async def test_a_server_down_longer_than_retry_for_fails_naming_the_database(
    server: PostgresServer, dsn: str
) -> None:
    from agentrig_postgres import PostgresJournal

    store, journal = build(dsn, retry_for=0.5), PostgresJournal(dsn, retry_for=0.5)
    writer = await store.open_writer("ses_down")
    await journal.begin_execution(execution())
    await anyio.to_thread.run_sync(lambda: server.stop(immediate=True))
    try:
        with pytest.raises(SessionStoreError, match=r"still failing after 0.5 s") as failed:
            await writer.append(sample("ses_down")[:2])
        assert "\n" not in str(failed.value)
        intent = ModelIntent(run_id=RunId(RUN), call_id=InvocationId("m1"), digest="d", model="m1")
        with pytest.raises(JournalWriteError, match=r"still failing after 0.5 s") as lost:
            await journal.model_intent(intent)
        assert "\n" not in str(lost.value)
        assert dsn.split("?")[0].rsplit("/", 1)[1] in str(lost.value)  # the database's name
    finally:
        await anyio.to_thread.run_sync(server.start)
    await writer.aclose()
    await store.aclose()
    await journal.aclose()


# ---- the session-store conformance suite ---------------------------------------------------


class TestPostgresStoreConformance(SessionStoreConformance):
    """The store-neutral conformance suite, on a fresh database per test."""

    @pytest.fixture
    def make_session_store(self, dsn: str) -> Callable[[], SessionStore]:
        return lambda: build(dsn)


# ---- async on both backends: order, cancellation, name resolution --------------------------


async def test_tasks_sharing_a_writer_commit_in_the_order_they_appended(
    store: SessionStore, dsn: str
) -> None:
    # a concurrent tool group's hooks log from several tasks at once: each takes its seq and
    # calls append without an await in between, so commits must follow seq, batch by batch
    session = Session(SessionId("ses_tasks"))
    writer = await store.open_writer("ses_tasks")

    async def log(turn: int) -> None:
        await anyio.lowlevel.checkpoint()
        batch = [
            session.append(TurnStart(turn=turn)),
            session.append(UserMessageEvent(message=UserMessage.of(f"q{turn}"))),
            session.append(TurnEnd(turn=turn, reason="completed")),
        ]
        await writer.append(batch)

    async with anyio.create_task_group() as group:
        for turn in range(1, 41):
            group.start_soon(log, turn)
    await writer.aclose()
    report = await store.load("ses_tasks")
    assert not report.damaged
    assert [e.seq for e in report.events] == list(range(1, 121))
    # xmin is the writing transaction: one per batch, growing in commit order
    with psycopg.connect(dsn) as connection:
        rows = connection.execute(
            "SELECT seq, xmin::text::bigint FROM agentrig_session_events "
            "WHERE session_id = 'ses_tasks' ORDER BY seq"
        ).fetchall()
    transactions = [xid for _, xid in rows]
    assert transactions == sorted(transactions)
    for first in range(0, 120, 3):  # a batch is whole: its three rows in one transaction
        assert len(set(transactions[first : first + 3])) == 1
    assert len(set(transactions)) == 40


async def test_a_cancelled_append_is_carried_out_and_the_writer_goes_on(
    store: SessionStore,
) -> None:
    events = sample("ses_cancel")
    writer = await store.open_writer("ses_cancel")
    with anyio.CancelScope() as scope:
        scope.cancel()
        await writer.append(events[:4])  # in flight when cancelled: finished, never half-sent
    await writer.append(events[4:])
    await writer.aclose()
    report = await store.load("ses_cancel")
    assert [e.seq for e in report.events] == list(range(1, 9))
    assert not report.damaged


async def test_a_batch_larger_than_the_socket_buffers_goes_through_whole(
    store: SessionStore,
) -> None:
    # several megabytes: libpq cannot flush them at once and waits for the socket to be
    # writable (or readable) -- the waits psycopg's generators ask for, through anyio
    session = Session(SessionId("ses_big"))
    big = [
        session.append(UserMessageEvent(message=UserMessage.of(f"{n} " + "ü" * 1_000_000)))
        for n in range(4)
    ]
    writer = await store.open_writer("ses_big")
    await writer.append(big)
    await writer.aclose()
    assert dicts((await store.load("ses_big")).events) == dicts(big)


async def test_a_host_name_is_resolved_without_blocking_and_named_in_errors() -> None:
    port = closed_port()
    unreachable = build(f"postgresql://agentrig@localhost:{port}/none", connect_timeout=2)
    with pytest.raises(SessionStoreError, match=f"localhost:{port}"):
        await unreachable.exists("ses_x")
    await unreachable.aclose()


# ---- following a session: pushed by NOTIFY, across processes -------------------------------


class Appender:
    """Another process holding the session's writer: appends one turn per ``step()``."""

    def __init__(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self.lines = BufferedByteReceiveStream(process.stdout)

    async def step(self) -> int:
        assert self.process.stdin is not None
        await self.process.stdin.send(b"go\n")
        return int(await self.lines.receive_until(b"\n", 100))


@contextlib.asynccontextmanager
async def appender(dsn: str, session_id: str) -> AsyncIterator[Appender]:
    async with await anyio.open_process(
        [sys.executable, "-c", _CHILD, dsn, session_id, "step"]
    ) as process:
        child = Appender(process)
        assert await child.lines.receive_until(b"\n", 100) == b"locked"
        try:
            yield child
        finally:
            assert process.stdin is not None
            await process.stdin.aclose()
            await process.wait()


def follow_of(store: SessionStore) -> PostgresSessionStore:
    assert isinstance(store, PostgresSessionStore)
    return store


@pytest.mark.subprocess
async def test_commits_of_another_process_are_announced_one_by_one(
    store: SessionStore, dsn: str
) -> None:
    pg = follow_of(store)
    async with appender(dsn, "ses_push") as child, pg.changes("ses_push") as changes:
        assert changes.announced == 0
        for turn in range(1, 4):
            assert await child.step() == turn
            with anyio.fail_after(60):  # a hang guard only: nothing here polls
                assert await changes.next() == 2 * turn
            assert changes.announced == turn
        # another session's commits do not wake a follower of this one, and the reverse
        async with pg.changes("ses_other") as other:
            assert await child.step() == 4  # ses_push: announced to changes only
            writer = await store.open_writer("ses_other")
            await writer.append(sample("ses_other", turns=1))
            await writer.aclose()
            with anyio.fail_after(60):
                assert await other.next() == 4
                assert await changes.next() == 8
        assert (other.announced, changes.announced) == (1, 4)


@pytest.mark.subprocess
async def test_follow_yields_the_log_then_each_commit_of_another_process(
    store: SessionStore, dsn: str
) -> None:
    pg = follow_of(store)
    async with appender(dsn, "ses_follow") as child:
        await child.step()  # turn 1 is in the log before following starts
        events = pg.follow("ses_follow")
        try:
            with anyio.fail_after(60):  # a hang guard only: follow never polls
                assert [(await anext(events)).seq for _ in range(2)] == [1, 2]
                for turn in (2, 3):
                    await child.step()
                    first, second = await anext(events), await anext(events)
                    assert (first.seq, second.seq) == (2 * turn - 1, 2 * turn)
                    assert isinstance(first.data, TurnStart)
                    assert first.data.turn == turn
        finally:
            await events.aclose()
    # following from a seq skips what the caller has
    resumed = pg.follow("ses_follow", after_seq=4)
    try:
        with anyio.fail_after(60):
            assert (await anext(resumed)).seq == 5
    finally:
        await resumed.aclose()


async def test_a_session_nobody_wrote_yet_is_followed_from_its_first_commit(
    store: SessionStore,
) -> None:
    pg = follow_of(store)
    first: list[SessionEvent] = []

    async def follower() -> None:
        async with contextlib.aclosing(pg.follow("ses_later")) as events:
            async for event in events:
                first.append(event)
                return

    with anyio.fail_after(60):  # a hang guard only
        async with anyio.create_task_group() as group:
            group.start_soon(follower)
            writer = await store.open_writer("ses_later")
            await writer.append(sample("ses_later", turns=1))
            await writer.aclose()
    assert [e.seq for e in first] == [1]


async def test_a_follower_meeting_an_unreadable_row_says_which(
    store: SessionStore, dsn: str
) -> None:
    pg = follow_of(store)
    await store.list_sessions()  # creates the tables
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(
            "INSERT INTO agentrig_session_events (session_id, seq, body) "
            "VALUES ('ses_bad', 1, 'not json')"
        )
    with anyio.fail_after(60), pytest.raises(SessionStoreError, match="event 1 is unreadable"):
        async with contextlib.aclosing(pg.follow("ses_bad")) as events:
            await anext(events)


async def test_a_follower_whose_connection_is_lost_fails_with_a_store_error(
    store: SessionStore, dsn: str
) -> None:
    pg = follow_of(store)
    async with pg.changes("ses_lost") as changes:
        with psycopg.connect(dsn, autocommit=True) as admin:  # an operator ends the session
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE query LIKE 'LISTEN%%' AND pid <> pg_backend_pid()"
            )
        with anyio.fail_after(60), pytest.raises(SessionStoreError, match="ses_lost"):
            await changes.next()


async def test_a_follower_can_be_cancelled_and_the_store_goes_on(store: SessionStore) -> None:
    pg = follow_of(store)
    writer = await store.open_writer("ses_quiet")
    await writer.append(sample("ses_quiet", turns=1))
    seen: list[int] = []
    with anyio.CancelScope() as scope:
        async for event in pg.follow("ses_quiet"):
            seen.append(event.seq)
            if event.seq == 4:
                scope.cancel()  # the follower is cancelled while it waits for a commit
    assert scope.cancelled_caught
    assert seen == [1, 2, 3, 4]
    await writer.append(sample("ses_quiet", turns=2)[4:])
    await writer.aclose()
    assert len((await store.load("ses_quiet")).events) == 8


# ---- agentrig-dbos: durable.events follows a run through the store's announcements ---------

DURABLE_CHILD = Path(__file__).with_name("durable_child.py")
AN_HOUR = 3600.0


@contextlib.asynccontextmanager
async def durable_worker(tmp: Path) -> AsyncIterator[None]:
    command = [sys.executable, str(DURABLE_CHILD), str(tmp), "worker", "w1"]
    async with await anyio.open_process(command, cwd=DURABLE_CHILD.parent, stderr=None) as process:
        assert process.stdout is not None
        lines = BufferedByteReceiveStream(process.stdout)
        assert await lines.receive_until(b"\n", 100) == b"ready"
        try:
            yield
        finally:
            process.kill()
            await process.wait()


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # durable runs are asyncio-only (DBOS)
async def test_a_durable_run_followed_on_postgresql_gets_each_event_as_it_commits(
    tmp_path: Path, dsn: str
) -> None:
    # a worker process executes the queued run (runs, queue, journal and session log in one
    # database); this process follows it with a poll interval of an hour
    settings = {
        "delay": 1.0,  # each model reply takes a second: the run commits events over time
        "dbos": {"system_database_url": dsn},
        "extra": {"session_stores": {"store": {"kind": "postgres", "options": {"dsn": dsn}}}},
    }
    (tmp_path / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    async with durable_runtime(tmp_path) as rt, durable_worker(tmp_path):
        durable = rt.services.require(DURABLE)
        run_id = await durable.submit("assistant", "do the thing", run_id="f1")
        followed: list[SessionEvent] = []
        events = durable.events(run_id, poll=AN_HOUR)
        # a hang guard only: a poll would come after an hour, so each event that arrives
        # was pushed by the commit that wrote it
        with anyio.fail_after(120):
            async for event in events:
                followed.append(event)
                if isinstance(event.data, TurnEnd):
                    break
        await events.aclose()
        assert (await durable.result(run_id)).text == "done"
        store = rt.catalog(SESSION_STORES).require(EntryId("store"))
        stored = list((await store.load(f"ses-{run_id}")).events)
        assert followed == stored
        assert [e.seq for e in followed] == list(range(1, len(stored) + 1))
        # a finished run is followed to its end at once, whatever the poll
        with anyio.fail_after(120):
            assert [e async for e in durable.events(run_id, poll=AN_HOUR)] == stored
