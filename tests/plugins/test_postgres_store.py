"""agentrig-postgres against a real PostgreSQL server that these tests start themselves.

The store is reached the way a user gets it: the installed ``agentrig-postgres``
distribution's ``postgres`` entry point in ``agentrig.session_stores``.
"""

from __future__ import annotations

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
import psycopg
import pytest
from _postgres_server import PostgresServer, postgres_server
from anyio.streams.buffered import BufferedByteReceiveStream

from agentrig.errors import ConfigError
from agentrig.ids import EntryId, SessionId
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
    assert json.loads(dump_event(loaded)) == json.loads(raw)


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
    import sys, anyio
    from importlib.metadata import entry_points
    from agentrig.session import Session, TurnStart, TurnEnd

    async def main(dsn, session_id):
        factory = entry_points(group="agentrig.session_stores")["postgres"].load()
        store = factory({"id": "s", "options": {"dsn": dsn}})
        writer = await store.open_writer(session_id)
        session = Session(session_id)
        print("locked", flush=True)
        for turn in range(1, 100000):
            batch = [session.append(TurnStart(turn=turn)), session.append(TurnEnd(turn=turn,
                     reason="completed"))]
            await writer.append(batch)
            print(turn, flush=True)

    anyio.run(main, sys.argv[1], sys.argv[2])
    """
)


@pytest.mark.subprocess
@pytest.mark.slow
async def test_a_killed_writer_leaves_whole_batches_and_frees_its_session(
    store: SessionStore, dsn: str
) -> None:
    async with await anyio.open_process([sys.executable, "-c", _CHILD, dsn, "ses_killed"]) as child:
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
        run_id=run_id,
        agent_id="assistant",
        session_id="ses_1",
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
    await journal.model_intent(ModelIntent(run_id=RUN, call_id="m1", digest="d", model="m1"))
    message = AssistantMessage(content=(TextBlock(text="hi"),))
    await journal.model_result(
        ModelSettlement(run_id=RUN, call_id="m1", outcome="completed", message=message)
    )
    intent = ToolIntent(
        run_id=RUN,
        invocation_id="m1/c",
        model_call_id="m1",
        call_id="c",
        tool="effect",
        arguments={"label": "x"},
    )
    await journal.tool_intent(intent)
    with pytest.raises(JournalWriteError, match="already journaled"):
        await journal.tool_intent(intent)
    await journal.aclose()

    again = PostgresJournal(dsn, schema="journal")  # a new process would do the same
    try:
        state = await again.load(RUN)
        assert state is not None
        assert [e.invocation_id for e in state.unsettled_effects()] == ["m1/c"]
        await again.tool_result(
            ToolSettlement(
                run_id=RUN, invocation_id="m1/c", message=ToolMessage.of("c", "effect", "ok")
            )
        )
        state = await again.load(RUN)
        assert state is not None
        assert state.unsettled_effects() == []
        assert state.next_call_id() == "m2"
        assert [r.run_id for r in await again.executions(agent_id="assistant")] == [RUN]
    finally:
        await again.aclose()


# ---- the session-store conformance suite ---------------------------------------------------


class TestPostgresStoreConformance(SessionStoreConformance):
    """The store-neutral conformance suite, on a fresh database per test."""

    @pytest.fixture
    def make_session_store(self, dsn: str) -> Callable[[], SessionStore]:
        return lambda: build(dsn)
