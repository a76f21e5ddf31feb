"""Write the golden stored data of one persisted-format version (run by hand, never by tests).

The files under ``golden/v1/`` were written by this script from the code of the commit that
added it, *before* any format carried a schema version: they are what a user's disk held
then (``tool/result/stored`` still said ``size``/``shown``).  The builders below are kept
in today's shapes: tests compare what the stores load from old data to them.
Tests load them through today's stores (tests/schemas/test_golden*.py), so every later
version must keep reading them.  Rerunning the script on newer code writes the newer
version's data -- into a new directory, never over ``v1/``::

    .venv/bin/python tests/schemas/make_golden.py tests/schemas/golden/v2

Contents: one session holding every core event type (JSONL, SQLite, PostgreSQL rows, and a
sealed JSONL copy with its test keys), a journal with a suspended run (SQLite, PostgreSQL
rows) and a credential file.  Times and ids are fixed so the output is reproducible (except
sealed bytes, whose nonces are random).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from agentrig.builtins._credential_file import FileCredentialStore
from agentrig.builtins._jsonl_store import JsonlSessionStore
from agentrig.builtins._sqlite_store import SqliteSessionStore
from agentrig.ids import AgentId, CallId, InvocationId, RunId, SessionId
from agentrig.journal import SqliteJournal
from agentrig.journal._records import (
    ExecutionLimits,
    ExecutionRecord,
    ModelIntent,
    ModelSettlement,
    ToolIntent,
    ToolSettlement,
)
from agentrig.llm import AssistantMessage, TextBlock, ToolCallBlock, ToolMessage, UserMessage
from agentrig.session import (
    AssistantChunk,
    AssistantMessageEvent,
    InboxSpliced,
    Notice,
    RequestHeader,
    SessionEvent,
    SteeringMessage,
    StepEnd,
    StepStart,
    SystemPrompt,
    ToolCallEvent,
    ToolResultEvent,
    ToolResultStored,
    TraceIds,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
)

SESSION = "golden-session"
RUN = "run-golden"
T0 = 1_780_000_000.0


def _user(text: str, id: str) -> UserMessage:
    return UserMessage(id=id, content=(TextBlock(text=text),))


def session_events() -> list[SessionEvent]:
    """One session using every core event type once (and one event with trace ids)."""
    call = ToolCallBlock(id="call-1", name="read_file", arguments={"path": "notes.txt"})
    reply = AssistantMessage(
        content=(TextBlock(text="Reading it."), call), stop_reason="tool_calls", model="m-1"
    )
    datas: list[Any] = [
        SystemPrompt(text="You are a careful assistant."),
        TurnStart(turn=1, trigger="prompt", run_id=RUN),
        UserMessageEvent(message=_user("Summarise notes.txt", "msg-user-1")),
        StepStart(turn=1, step=1),
        RequestHeader(provider="scripted", model="m-1", max_tokens=512, tools=("read_file",)),
        AssistantChunk(turn=1, step=1, chunk={"type": "text_delta", "text": "Reading"}),
        AssistantMessageEvent(message=reply),
        ToolCallEvent(call=call, invocation_id="inv-1"),
        ToolResultEvent(
            message=ToolMessage.of("call-1", "read_file", "x" * 64),
            invocation_id="inv-1",
            duration_ms=12.5,
        ),
        ToolResultStored(
            call_id="call-1",
            invocation_id="inv-1",
            path="results/inv-1.txt",
            size_bytes=4096,
            shown_bytes=64,
        ),
        StepEnd(turn=1, step=1),
        SteeringMessage(message=_user("Keep it short.", "msg-steer-1")),
        InboxSpliced(target="next-turn", inserted=(_user("And list the dates.", "msg-inbox-1"),)),
        Notice(source="hook Stop[0] (command)", kind="message", text="checked"),
        TurnEnd(turn=1, reason="suspended", detail="waiting for approval"),
    ]
    events = []
    for seq, data in enumerate(datas, start=1):
        trace = TraceIds(trace_id="0" * 31 + "1", span_id="0" * 15 + "2") if seq == 7 else None
        events.append(SessionEvent(seq=seq, time=T0 + seq, data=data, trace=trace))
    return events


def journal_records() -> list[Any]:
    """A run suspended on its second tool call: A settled, B asked about, C not started."""
    calls = (
        ToolCallBlock(id="c-a", name="slow", arguments={"key": "a"}),
        ToolCallBlock(id="c-b", name="approve_me", arguments={"key": "b"}),
        ToolCallBlock(id="c-c", name="approve_me", arguments={"key": "c"}),
    )
    at = T0
    return [
        ExecutionRecord(
            run_id=RunId(RUN),
            agent_id=AgentId("assistant"),
            session_id=SessionId(SESSION),
            provider="scripted",
            model="m-1",
            limits=ExecutionLimits(max_rounds=8, identical_input_limit=3),
            tools=("slow", "approve_me"),
            at=at,
        ),
        ModelIntent(
            run_id=RunId(RUN),
            call_id=InvocationId("m1"),
            digest="d" * 64,
            model="m-1",
            tools=(),
            at=at + 1,
        ),
        ModelSettlement(
            run_id=RunId(RUN),
            call_id=InvocationId("m1"),
            outcome="completed",
            message=AssistantMessage(content=calls, stop_reason="tool_calls"),
            at=at + 2,
        ),
        ToolIntent(
            run_id=RunId(RUN),
            invocation_id=InvocationId("m1/c-a"),
            model_call_id=InvocationId("m1"),
            call_id=CallId("c-a"),
            tool="slow",
            arguments={"key": "a"},
            at=at + 3,
        ),
        ToolSettlement(
            run_id=RunId(RUN),
            invocation_id=InvocationId("m1/c-a"),
            message=ToolMessage.of("c-a", "slow", "slow a done"),
            at=at + 4,
        ),
    ]


async def write_sessions(out: Path) -> None:
    events = session_events()
    jsonl = JsonlSessionStore(out / "jsonl")
    writer = await jsonl.open_writer(SESSION)
    await writer.append(events)
    await writer.aclose()
    db = SqliteSessionStore(out / "sessions.sqlite3")
    db_writer = await db.open_writer(SESSION)
    await db_writer.append(events)
    await db_writer.aclose()
    await db.aclose()
    from agentrig_sodium import SodiumSealer

    sealer = SodiumSealer(str(out / "sealed" / "keys"), create=True)
    sealed = JsonlSessionStore(out / "sealed" / "sessions", sealer=sealer)
    writer = await sealed.open_writer(SESSION)
    await writer.append(events)
    await writer.aclose()


async def record_all(journal: Any) -> None:
    """Write :func:`journal_records` through the journal port, then close it."""
    by_kind = {
        "execution": journal.begin_execution,
        "model/intent": journal.model_intent,
        "model/result": journal.model_result,
        "tool/intent": journal.tool_intent,
        "tool/result": journal.tool_result,
    }
    for record in journal_records():
        await by_kind[record.kind](record)
    await journal.aclose()


async def write_journal(out: Path) -> None:
    journal = SqliteJournal(out / "journal.sqlite3")
    await record_all(journal)


async def write_postgres(out: Path) -> None:
    """The rows the postgres plugin stores, read back from a real server as JSON."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "plugins"))
    from _postgres_server import postgres_server  # type: ignore[import-not-found]
    from agentrig_postgres import PostgresJournal, PostgresSessionStore

    with postgres_server() as server:
        dsn = server.create_database("golden")
        store = PostgresSessionStore(dsn)
        writer = await store.open_writer(SESSION)
        await writer.append(session_events())
        await writer.aclose()
        await store.aclose()
        await record_all(PostgresJournal(dsn))
        import psycopg

        with psycopg.connect(dsn) as connection:
            events = connection.execute(
                "SELECT session_id, seq, body FROM agentrig_session_events ORDER BY seq"
            ).fetchall()
            journal_rows = connection.execute(
                "SELECT run_id, kind, key, body FROM agentrig_journal ORDER BY seq"
            ).fetchall()
    rows = {
        "agentrig_session_events": [list(r) for r in events],
        "agentrig_journal": [list(r) for r in journal_rows],
    }
    (out / "postgres_rows.json").write_text(json.dumps(rows, indent=1) + "\n")


async def write_credentials(out: Path) -> None:
    store = FileCredentialStore(out / "credentials.json")
    await store.set("openai", "default", "sk-golden-not-a-secret")


async def main(out: Path) -> None:
    await write_sessions(out)
    await write_journal(out)
    await write_postgres(out)
    await write_credentials(out)
    # SQLite files are compared by content in tests; vacuum keeps them small
    for name in ("sessions.sqlite3", "journal.sqlite3"):
        with sqlite3.connect(out / name) as connection:
            connection.execute("VACUUM")


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(mode=0o700, parents=True, exist_ok=False)
    asyncio.run(main(target))
