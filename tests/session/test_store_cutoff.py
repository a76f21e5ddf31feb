"""A process that stops between a tool call and its result: the turn is closed on resume.

The child runs a real runtime whose tool kills its own process (SIGKILL) while the model's
calls are being executed, so the stored log ends inside a turn with calls and no results.
Resuming it records "not executed: the process stopped" for every such call and closes the
turn *before anything new is sent*: the next request never carries a call without its
result, and ``chat --session`` says the turn was cut off.
"""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import agentrig
from agentrig.cli import main
from agentrig.ids import AgentId, ProviderId, SessionId
from agentrig.llm import AssistantMessage, TextBlock, ToolCallBlock, ToolMessage, UserMessage
from agentrig.plugin import PROVIDERS
from agentrig.session import (
    CUT_OFF_CODE,
    CUT_OFF_TEXT,
    AssistantMessageEvent,
    Session,
    ToolResultEvent,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
    find_cut_off_turn,
)

pytestmark = pytest.mark.anyio


def _config(base: Path, kind: str, script: Sequence[object]) -> dict[str, Any]:
    options = (
        {"directory": str(base / "sessions")}
        if kind == "jsonl"
        else {"path": str(base / "sessions.sqlite3")}
    )
    return {
        "providers": {"local": {"kind": "scripted", "options": {"script": script}}},
        "session_stores": {"main": {"kind": kind, "options": options}},
        "agents": {
            "assistant": {"provider": "local", "model": "scripted-1", "session_store": "main"}
        },
    }


_CALLS = [
    {"name": "stop_the_process", "arguments": {}, "id": "call_a"},
    {"name": "stop_the_process", "arguments": {}, "id": "call_b"},
]

_CHILD = """
import json, os, signal, sys
import anyio, agentrig

@agentrig.tool(risk="inspect")
def stop_the_process() -> str:
    \"\"\"Stops the process that runs it, like a crash in the middle of a tool call.\"\"\"
    os.kill(os.getpid(), signal.SIGKILL)
    return "never"

async def main():
    async with agentrig.open_runtime(json.loads(sys.argv[1])) as rt:
        await rt.agents.dispose("assistant")
        agent = await rt.agents.create(
            "assistant", session_id="ses_cut", tools=[stop_the_process]
        )
        await agent.run("hello")
        await agent.run("now stop")

anyio.run(main)
"""


def _crash(base: Path, kind: str) -> None:
    script = [{"text": "hi there"}, {"tool_calls": _CALLS}]
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(_config(base, kind, script))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr


def _assert_every_call_answered(messages: Any) -> None:
    pending: list[str] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            assert message.call_id in pending
            pending.remove(message.call_id)
            continue
        assert not pending, f"{message.role} message sent while {pending} had no result"
        if isinstance(message, AssistantMessage):
            pending = [call.id for call in message.tool_calls]
    assert not pending


@pytest.mark.subprocess
@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
async def test_resume_closes_a_turn_cut_off_between_call_and_result(
    tmp_path: Path, kind: str
) -> None:
    _crash(tmp_path, kind)

    async with agentrig.open_runtime(_config(tmp_path, kind, [{"text": "welcome back"}])) as rt:
        await rt.agents.dispose(AgentId("assistant"))
        agent = await rt.agents.resume(SessionId("ses_cut"), agent_id=AgentId("assistant"))
        assert agent.cut_off is not None
        assert agent.cut_off.turn == 2
        assert [c.id for c in agent.cut_off.unanswered] == ["call_a", "call_b"]
        # closed before anything was sent: results for both calls, then turn/end
        tail = [e.data for e in agent.session.events[-3:]]
        assert [type(d).__name__ for d in tail] == ["ToolResultEvent", "ToolResultEvent", "TurnEnd"]
        for data, call_id in zip(tail[:2], ["call_a", "call_b"], strict=True):
            assert isinstance(data, ToolResultEvent)
            assert data.message.call_id == call_id
            assert data.message.status == "not_executed"
            assert data.message.content == (TextBlock(text=CUT_OFF_TEXT),)
        assert isinstance(tail[2], TurnEnd)
        assert (tail[2].turn, tail[2].reason) == (2, "interrupted")
        assert tail[2].error is not None
        assert tail[2].error["code"] == CUT_OFF_CODE

        result = await agent.run("are you there?")
        assert result.value == "welcome back"
        provider: Any = rt.catalog(PROVIDERS).require(ProviderId("local"))
        (request,) = provider.requests
        _assert_every_call_answered(request.messages)
        last = request.messages[-1]
        assert isinstance(last, UserMessage)
        assert last.content == (TextBlock(text="are you there?"),)

    # the closing events were stored: a second resume finds nothing to close
    async with agentrig.open_runtime(_config(tmp_path, kind, [])) as rt:
        await rt.agents.dispose(AgentId("assistant"))
        again = await rt.agents.resume(SessionId("ses_cut"), agent_id=AgentId("assistant"))
        assert again.cut_off is None
        assert again.load_report is not None
        assert not again.load_report.damaged
        _assert_every_call_answered(again.session.derive_messages())


@pytest.mark.subprocess
def test_chat_session_says_that_a_turn_was_cut_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _crash(tmp_path, "jsonl")
    config = tmp_path / "agentrig.toml"
    config.write_text(
        f"""\
[providers.local]
kind = "scripted"
options.script = [{{ text = "welcome back" }}]

[agents.assistant]
provider = "local"
model = "scripted-1"
session_store = "main"

[session_stores.main]
kind = "jsonl"
options.directory = {json.dumps(str(tmp_path / "sessions"))}
""",
        encoding="utf-8",
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO("are you there?\n"))
    code = main(["chat", "-c", str(config), "--session", "ses_cut"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == "welcome back\n"
    assert (
        "note: turn 2 was cut off when the process stopped; 2 tool call(s) without a result "
        "were recorded as not executed\n"
    ) in err


# ---- the rule itself --------------------------------------------------------------------


def _call(call_id: str) -> ToolCallBlock:
    return ToolCallBlock(id=call_id, name="t", arguments={})


def test_a_settled_log_has_nothing_to_close() -> None:
    session = Session(SessionId("ses_x"))
    session.append(TurnStart(turn=1))
    session.append(UserMessageEvent(message=UserMessage.of("hi")))
    session.append(TurnEnd(turn=1, reason="completed"))
    assert find_cut_off_turn(session.events) is None
    assert find_cut_off_turn(()) is None


def test_a_turn_cut_off_after_its_last_result_is_closed_without_new_results() -> None:
    session = Session(SessionId("ses_x"))
    session.append(TurnStart(turn=1))
    session.append(AssistantMessageEvent(message=AssistantMessage(content=(_call("c1"),))))
    session.append(ToolResultEvent(message=ToolMessage.of("c1", "t", "done")))
    cut = find_cut_off_turn(session.events)
    assert cut is not None
    assert cut.unanswered == ()
    assert [type(e).__name__ for e in cut.closing_events()] == ["TurnEnd"]
    assert cut.describe() == "turn 1 was cut off when the process stopped"


def test_call_ids_reused_in_another_turn_are_matched_within_the_turn() -> None:
    session = Session(SessionId("ses_x"))
    session.append(TurnStart(turn=1))
    session.append(AssistantMessageEvent(message=AssistantMessage(content=(_call("c1"),))))
    session.append(ToolResultEvent(message=ToolMessage.of("c1", "t", "done")))
    session.append(TurnEnd(turn=1, reason="completed"))
    session.append(TurnStart(turn=2))
    session.append(AssistantMessageEvent(message=AssistantMessage(content=(_call("c1"),))))
    cut = find_cut_off_turn(session.events)
    assert cut is not None
    assert (cut.turn, [c.id for c in cut.unanswered]) == (2, ["c1"])


@given(
    rounds=st.lists(
        st.tuples(st.integers(min_value=0, max_value=3), st.integers(min_value=0, max_value=3)),
        min_size=1,
        max_size=4,
    )
)
def test_closing_a_cut_off_turn_answers_every_call(rounds: list[tuple[int, int]]) -> None:
    # each round: the model makes `calls` calls, of which the first `answered` got results
    session = Session(SessionId("ses_x"))
    session.append(TurnStart(turn=1))
    session.append(UserMessageEvent(message=UserMessage.of("go")))
    for number, (calls, answered) in enumerate(rounds):
        ids = [f"r{number}c{i}" for i in range(calls)]
        content = tuple(_call(i) for i in ids) or (TextBlock(text="thinking"),)
        session.append(AssistantMessageEvent(message=AssistantMessage(content=content)))
        for call_id in ids[:answered]:
            session.append(ToolResultEvent(message=ToolMessage.of(call_id, "t", "ok")))
        if answered < calls:
            break  # the process stopped while this round's calls ran
    cut = find_cut_off_turn(session.events)
    assert cut is not None
    for data in cut.closing_events():
        session.append(data)
    assert find_cut_off_turn(session.events) is None
    _assert_every_call_answered(session.derive_messages())
