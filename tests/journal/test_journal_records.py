"""The journal port and its backends: order discipline, durability settings, file modes."""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentrig.ids import AgentId, CallId, InvocationId, RunId, SessionId
from agentrig.journal import (
    ExecutionJournal,
    ExecutionLimits,
    ExecutionRecord,
    JournalError,
    JournalWriteError,
    MemoryJournal,
    ModelIntent,
    ModelSettlement,
    SqliteJournal,
    ToolIntent,
    ToolSettlement,
)
from agentrig.llm import AssistantMessage, TextBlock, ToolMessage

pytestmark = pytest.mark.anyio

RUN = "run_records_1"


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


@pytest.fixture(params=["memory", "sqlite"])
async def journal(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[ExecutionJournal]:
    built: ExecutionJournal = (
        MemoryJournal() if request.param == "memory" else SqliteJournal(tmp_path / "j" / "db")
    )
    try:
        yield built
    finally:
        await built.aclose()


async def test_records_rebuild_the_execution(journal: ExecutionJournal) -> None:
    await journal.begin_execution(execution())
    await journal.begin_execution(execution())  # an equal record again is a no-op
    await journal.model_intent(
        ModelIntent(run_id=RunId(RUN), call_id=InvocationId("m1"), digest="d", model="m1")
    )
    message = AssistantMessage(content=(TextBlock(text="hi"),))
    await journal.model_result(
        ModelSettlement(
            run_id=RunId(RUN), call_id=InvocationId("m1"), outcome="completed", message=message
        )
    )
    await journal.tool_intent(
        ToolIntent(
            run_id=RunId(RUN),
            invocation_id=InvocationId("m1/c"),
            model_call_id=InvocationId("m1"),
            call_id=CallId("c"),
            tool="effect",
            arguments={"label": "x"},
        )
    )
    state = await journal.load(RunId(RUN))
    assert state is not None
    assert [e.invocation_id for e in state.unsettled_effects()] == ["m1/c"]
    await journal.tool_result(
        ToolSettlement(
            run_id=RunId(RUN),
            invocation_id=InvocationId("m1/c"),
            message=ToolMessage.of("c", "effect", "ok"),
        )
    )
    state = await journal.load(RunId(RUN))
    assert state is not None
    assert state.unsettled_effects() == []
    assert state.latest_settled() is not None
    assert state.next_call_id() == "m2"
    assert [r.run_id for r in await journal.executions(agent_id=AgentId("assistant"))] == [RUN]
    assert await journal.executions(session_id=SessionId("other")) == ()


async def test_out_of_order_and_repeated_records_are_refused(journal: ExecutionJournal) -> None:
    intent = ModelIntent(run_id=RunId(RUN), call_id=InvocationId("m1"), digest="d", model="m1")
    with pytest.raises(JournalWriteError, match="no execution record"):
        await journal.model_intent(intent)
    await journal.begin_execution(execution())
    with pytest.raises(JournalWriteError, match="different execution record"):
        await journal.begin_execution(execution().model_copy(update={"model": "m9"}))
    with pytest.raises(JournalWriteError, match="no intent"):
        await journal.model_result(
            ModelSettlement(run_id=RunId(RUN), call_id=InvocationId("m1"), outcome="failed")
        )
    await journal.model_intent(intent)
    with pytest.raises(JournalWriteError, match="already journaled"):
        await journal.model_intent(intent)
    tool = ToolIntent(
        run_id=RunId(RUN),
        invocation_id=InvocationId("i"),
        model_call_id=None,
        call_id=CallId("c"),
        tool="t",
        arguments={},
    )
    await journal.tool_intent(tool)
    with pytest.raises(JournalWriteError, match="already journaled as started"):
        await journal.tool_intent(tool)
    settled = ToolSettlement(
        run_id=RunId(RUN), invocation_id=InvocationId("i"), message=ToolMessage.of("c", "t", "x")
    )
    await journal.tool_result(settled)
    with pytest.raises(JournalWriteError, match="already settled"):
        await journal.tool_result(settled)


async def test_forget_reads_what_another_journal_object_wrote_to_the_same_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j" / "db"
    here, there = SqliteJournal(path), SqliteJournal(path)  # as two processes would
    try:
        await here.begin_execution(execution())
        assert (await here.load(RunId(RUN))) is not None  # cached here
        intent = ModelIntent(run_id=RunId(RUN), call_id=InvocationId("m1"), digest="d", model="m1")
        await there.model_intent(intent)
        cached = await here.load(RunId(RUN))
        assert cached is not None
        assert cached.model_calls == []  # the cache does not see the other writer
        here.forget(RunId(RUN))
        fresh = await here.load(RunId(RUN))
        assert fresh is not None
        assert [c.call_id for c in fresh.model_calls] == ["m1"]
        with pytest.raises(JournalWriteError, match="already journaled"):
            await here.model_intent(intent)  # and the order holds against it again
    finally:
        await here.aclose()
        await there.aclose()


async def test_sqlite_is_wal_full_sync_owner_only_and_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "private" / "journal.sqlite3"
    journal = SqliteJournal(path)
    await journal.begin_execution(execution())
    assert journal.pragma("journal_mode") == "wal"
    assert journal.pragma("synchronous") == 2  # FULL
    for file in path.parent.iterdir():
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    await journal.aclose()
    again = SqliteJournal(path)
    try:
        state = await again.load(RunId(RUN))
        assert state is not None
        assert state.record == execution().model_copy(update={"at": state.record.at})
        # the uniqueness holds in the file, not only in one process's cache
        with pytest.raises(JournalWriteError):
            await again.begin_execution(execution().model_copy(update={"model": "m9"}))
    finally:
        await again.aclose()


async def test_sqlite_refuses_a_file_others_can_read(tmp_path: Path) -> None:
    directory = tmp_path / "private"
    directory.mkdir(mode=0o700)
    path = directory / "journal.sqlite3"
    path.touch()
    os.chmod(path, 0o644)
    with pytest.raises(JournalError, match="group or others"):
        SqliteJournal(path)


async def test_a_closed_journal_refuses_writes(tmp_path: Path) -> None:
    journal = SqliteJournal(tmp_path / "j" / "db")
    await journal.aclose()
    await journal.aclose()  # idempotent
    with pytest.raises(JournalWriteError, match="closed"):
        await journal.begin_execution(execution())


def intent(invocation_id: str) -> ToolIntent:
    return ToolIntent(
        run_id=RunId(RUN),
        invocation_id=InvocationId(invocation_id),
        model_call_id=InvocationId("m1"),
        call_id=CallId("c"),
        tool="effect",
        arguments={"label": "x"},
    )


async def test_a_rerun_is_the_next_attempt_of_an_unsettled_effect_only(
    journal: ExecutionJournal,
) -> None:
    await journal.begin_execution(execution())
    with pytest.raises(JournalWriteError, match="no effect m1/c was journaled to run again"):
        await journal.tool_intent(intent("m1/c#2"))
    await journal.tool_intent(intent("m1/c"))
    with pytest.raises(JournalWriteError, match="started 1 time"):
        await journal.tool_intent(intent("m1/c#3"))  # attempt 2 comes first
    await journal.tool_intent(intent("m1/c#2"))
    with pytest.raises(JournalWriteError, match="started 2 time"):
        await journal.tool_intent(intent("m1/c#2"))  # each attempt under its own key, once
    message = ToolMessage.of("c", "effect", "wrote x")
    await journal.tool_result(
        ToolSettlement(run_id=RunId(RUN), invocation_id=InvocationId("m1/c"), message=message)
    )
    with pytest.raises(JournalWriteError, match="already settled: it is never run again"):
        await journal.tool_intent(intent("m1/c#3"))
    state = await journal.load(RunId(RUN))
    assert state is not None
    effect = state.effects["m1/c"]
    assert (effect.attempt, effect.result is not None) == (2, True)
    assert intent("m1/c#2").effect_id == "m1/c"
    assert intent("m1/c#2").attempt == 2
    assert intent("m1/c").attempt == 1
    # a call id that itself ends like an attempt is its own effect, not a re-run
    odd = intent("m1/c").model_copy(update={"call_id": "c#2", "invocation_id": "m1/c#2"})
    assert (odd.attempt, odd.effect_id) == (1, "m1/c#2")
