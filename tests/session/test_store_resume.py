"""``rt.agents.resume``: an agent rebuilt from a stored session in a new runtime."""

from __future__ import annotations

import json
import signal
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

import agentrig
from agentrig.ids import AgentId, SessionId
from agentrig.llm import UserMessage
from agentrig.session import InboxSpliced

pytestmark = pytest.mark.anyio


def _config(tmp_path: Path, script: Sequence[object], kind: str = "jsonl") -> dict[str, Any]:
    options = (
        {"directory": str(tmp_path / "sessions")}
        if kind == "jsonl"
        else {"path": str(tmp_path / "sessions.sqlite3")}
    )
    return {
        "providers": {"local": {"kind": "scripted", "options": {"script": script}}},
        "session_stores": {"main": {"kind": kind, "options": options}},
        "agents": {
            "assistant": {
                "provider": "local",
                "model": "scripted-1",
                "system_prompt": "You are terse.",
                "session_store": "main",
            }
        },
    }


async def _resume(rt: agentrig.Runtime, session_id: str) -> Any:
    # the config declares "assistant", so the runtime already created it with a fresh
    # session; dispose that one first to take its name over for the stored session
    await rt.agents.dispose(AgentId("assistant"))
    return await rt.agents.resume(SessionId(session_id), agent_id=AgentId("assistant"))


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
async def test_resume_rebuilds_history_and_continues_the_log(tmp_path: Path, kind: str) -> None:
    script = [
        {"text": "first answer", "usage": {"prompt": 10, "completion": 2}},
        {"text": "second answer"},
    ]
    async with agentrig.open_runtime(_config(tmp_path, script, kind)) as rt:
        agent = rt.agent(AgentId("assistant"))
        first = await agent.run("first question")
        assert first.value == "first answer"
        # queue input for a later turn without starting it; it is logged with the session
        queued = UserMessage.of("queued for later", source="followup")
        agent.inbox.append("next-turn", queued)
        await agent.flush()
        session_id = agent.session_id
        history = list(agent.session.derive_messages())
        seqs = [e.seq for e in agent.session.events]
    assert len(history) == 3  # system, user, assistant

    async with agentrig.open_runtime(_config(tmp_path, script[1:], kind)) as rt:
        agent = await _resume(rt, session_id)
        assert agent.session_id == session_id
        assert not agent.load_report.damaged
        assert list(agent.session.derive_messages()) == history
        assert [e.seq for e in agent.session.events] == seqs
        # the clean close kept the pending input, and resume restored it
        assert agent.inbox.pending("next-turn") == (queued,)

        second = await agent.run("second question")
        assert second.value == "second answer"
        assert second.invocation.turn == 2
        new_seqs = [e.seq for e in agent.session.events]
        assert new_seqs == list(range(1, len(new_seqs) + 1))
        assert len(new_seqs) > len(seqs)
        messages = list(agent.session.derive_messages())
        assert messages[: len(history)] == history
        assert [m.role for m in messages] == [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
        ]
        # the unchanged system prompt is not logged a second time
        assert sum(e.type == "system/prompt" for e in agent.session.events) == 1

    # and the store holds the whole continued log
    async with agentrig.open_runtime(_config(tmp_path, [], kind)) as rt:
        agent = await _resume(rt, session_id)
        seqs = [e.seq for e in agent.session.events]
        assert seqs[: len(new_seqs)] == new_seqs
        assert seqs == list(range(1, len(seqs) + 1))
        assert agent.session.events[-1].type in {"turn/end", "agent/inbox/spliced"}


async def test_resume_of_an_agent_without_a_store_is_refused(tmp_path: Path) -> None:
    config = _config(tmp_path, [])
    del config["agents"]["assistant"]["session_store"]
    async with agentrig.open_runtime(config) as rt:
        await rt.agents.dispose(AgentId("assistant"))
        with pytest.raises(agentrig.UnknownIdError, match="no session_store"):
            await rt.agents.resume(SessionId("ses_whatever"), agent_id=AgentId("assistant"))


_CRASHING_RUNTIME = """
import os, signal, sys, json
import anyio, agentrig

config = json.loads(sys.argv[1])

async def main():
    async with agentrig.open_runtime(config) as rt:
        agent = rt.agent("assistant")
        await agent.run("first question")
        stream = agent.stream("second question")
        async for chunk in stream:
            # mid-turn: queue a followup, make it durable, then die without closing
            agent.followup("and a followup")
            await agent.flush()
            sys.stdout.write(agent.session_id + "\\n")
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)

anyio.run(main)
"""


@pytest.mark.subprocess
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
async def test_resume_after_a_crash_restores_the_pending_followup(tmp_path: Path) -> None:
    script = [{"text": "first answer"}, {"text": "slow second answer", "delay": 0.05}]
    config = _config(tmp_path, script)
    result = await anyio.run_process(
        [sys.executable, "-c", textwrap.dedent(_CRASHING_RUNTIME), json.dumps(config)],
        check=False,
    )
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()
    session_id = result.stdout.decode().strip()

    resumed_script = [{"text": "third answer"}]
    async with agentrig.open_runtime(_config(tmp_path, resumed_script)) as rt:
        agent = await _resume(rt, session_id)
        events = agent.session.events
        # the second turn never closed: resume closed it as cut off
        assert agent.cut_off is not None
        assert agent.cut_off.turn == 2
        assert events[-1].type == "turn/end"
        assert events[-2].type != "turn/end"
        pending = agent.inbox.pending("next-turn")
        assert [m.text for m in pending] == ["and a followup"]
        assert any(isinstance(e.data, InboxSpliced) for e in events)
        before = agent.session.last_seq

        third = await agent.run("third question")
        assert third.value == "third answer"
        seqs = [e.seq for e in agent.session.events]
        assert seqs == list(range(1, len(seqs) + 1))
        assert seqs[-1] > before
