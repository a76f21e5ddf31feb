"""Suspension is control flow: a call that waits for an outside answer before its effect
starts ends the turn ``suspended`` -- not completed, not failed.

One reply makes three calls: A (read-only, still running when B is asked about), B (needs
an approval the approver does not have yet: it raises ``ExecutionSuspended``) and C (not
started: gated after B in the same concurrent group, or a barrier after it).  A finishes and
its result is saved, B and C stay pending, and continuation after the answer runs B and C
exactly once.  The caller's cancellation still interrupts A; a failed journal write wins
over the wait.  Real SQLite journal, both backends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from journal_support import (
    AGENT,
    SESSION,
    Reply,
    ScriptedCall,
    ScriptedProvider,
    create_agent,
    journaled,
    tool_results,
)

import agentrig
from agentrig.agent import Agent
from agentrig.ids import RunId
from agentrig.journal import JournalWriteError, SqliteJournal, continue_execution
from agentrig.lifecycle import ExecutionSuspended, PermissionQuestion
from agentrig.tools import RiskClass, ToolContext, tool

pytestmark = pytest.mark.anyio

ASK = {"mode": "default", "ask": ["approve_me"]}


class WaitingApprover:
    """Answers from ``answers``; a question about ``approve_me`` it has no answer for
    suspends the run (as a durable host's approver does: the question is saved, the answer
    comes later).  Other questions are allowed."""

    def __init__(self) -> None:
        self.asked = anyio.Event()
        self.questions: list[str] = []
        self.answers: dict[str, str] = {}

    @agentrig.hookimpl
    async def permission_approver(self, payload: PermissionQuestion) -> str:
        call_id = str(payload.call_id)
        self.questions.append(call_id)
        if call_id in self.answers or payload.tool != "approve_me":
            return self.answers.get(call_id, "allow")
        self.asked.set()
        raise ExecutionSuspended(f"waiting for an answer on call {call_id!r}")


class Tools:
    """A: waits for ``release`` (honouring the run's signal); B and C: count their runs."""

    def __init__(self, release: anyio.Event, c_risk: RiskClass) -> None:
        self.release = release
        self.ran: list[str] = []

        @tool(id="slow", risk="inspect")
        async def slow(key: str, ctx: ToolContext) -> str:
            """Read something slowly."""
            self.ran.append(f"slow:{key}")
            with ctx.signal.scope():
                await self.release.wait()
            ctx.signal.raise_if_cancelled()
            return f"slow {key} done"

        @tool(id="approve_me", risk="inspect")
        async def approve_me(key: str) -> str:
            """Something that needs a person's approval."""
            self.ran.append(f"approve_me:{key}")
            return f"approved {key} ran"

        @tool(id="after", risk=c_risk)
        async def after(key: str) -> str:
            """Runs after the waiting call."""
            self.ran.append(f"after:{key}")
            return f"after {key} ran"

        self.all = [slow, approve_me, after]


def script() -> list[Reply]:
    calls = (
        ScriptedCall("slow", {"key": "a"}, id="call_a"),
        ScriptedCall("approve_me", {"key": "b"}, id="call_b"),
        ScriptedCall("after", {"key": "c"}, id="call_c"),
    )
    return [Reply(tool_calls=calls), Reply(text="done")]


def types(agent: Agent) -> list[str]:
    return [e.type for e in agent.session.events]


def turn_ends(agent: Agent) -> list[Any]:
    return [e.data for e in agent.session.events if e.type == "turn/end"]


def results_by_call(agent: Agent) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for message in tool_results(agent):
        found.setdefault(message.call_id, []).append(f"{message.status}: {message.text}")
    return found


@pytest.mark.parametrize("c_risk", ["inspect", "modify"])  # C in B's group / behind it
async def test_running_siblings_finish_and_calls_not_started_stay_pending(
    tmp_path: Path, c_risk: RiskClass
) -> None:
    approver = WaitingApprover()
    release = anyio.Event()
    tools = Tools(release, c_risk)
    journal = SqliteJournal(tmp_path / "journal" / "j.sqlite3")
    provider = ScriptedProvider(script())
    plugins = [("approver", approver)]
    async with journaled(
        tmp_path, journal, provider, tools.all, plugins=plugins, permissions=ASK
    ) as rt:
        agent = await create_agent(rt, tools=["slow", "approve_me", "after"])

        async def free_a_once_b_waits() -> None:
            await approver.asked.wait()  # B's question suspended the run; A still runs
            release.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(free_a_once_b_waits)
            with pytest.raises(ExecutionSuspended, match="call_b"):
                await agent.run("go")

        # A finished beside the waiting call and its result is saved (history and journal)
        assert tools.ran == ["slow:a"]
        assert results_by_call(agent) == {"call_a": ["ok: slow a done"]}
        state = await journal.load(RunId(_run_id(agent)))
        assert state is not None
        settled = {i: e.result.message.text for i, e in state.effects.items() if e.result}
        assert list(settled.values()) == ["slow a done"]
        assert set(state.effects) == set(settled)  # B and C never started an effect
        # B and C are pending: no result, nothing "not executed" or "interrupted"
        end = turn_ends(agent)[-1]
        assert end.reason == "suspended"
        assert end.error is None
        assert "call_b" in str(end.detail)
        assert types(agent)[-2:] == ["step/end", "turn/end"]
        assert agent.status == "idle"

        # the answer arrives: continuation runs B and C, each exactly once, and reuses A
        approver.answers["call_b"] = "allow"
        result = await continue_execution(rt, journal, agent_id=AGENT, session_id=SESSION)
        assert result.text == "done"
        assert [i.rsplit("/", 1)[1] for i in result.dispatched] == ["call_b", "call_c"]
        assert [i.rsplit("/", 1)[1] for i in result.reused] == ["call_a"]
        assert tools.ran == ["slow:a", "approve_me:b", "after:c"]
        asked = [q for q in approver.questions if q == "call_b"]
        assert asked == ["call_b", "call_b"]  # asked again after the answer came
        assert results_by_call(agent) == {
            "call_a": ["ok: slow a done"],
            "call_b": ["ok: approved b ran"],
            "call_c": ["ok: after c ran"],
        }
        assert [e.reason for e in turn_ends(agent)] == ["suspended", "completed"]


def _run_id(agent: Agent) -> str:
    starts = [e.data for e in agent.session.events if e.type == "turn/start"]
    return str(starts[-1].run_id)


@pytest.mark.parametrize("how", ["signal", "scope"])  # agent.cancel / the caller's scope
async def test_the_callers_cancellation_during_the_wait_still_interrupts_the_running_call(
    tmp_path: Path, how: str
) -> None:
    approver = WaitingApprover()
    tools = Tools(anyio.Event(), "inspect")  # A is never released: only cancelling stops it
    journal = SqliteJournal(tmp_path / "journal" / "j.sqlite3")
    plugins = [("approver", approver)]
    async with journaled(
        tmp_path, journal, ScriptedProvider(script()), tools.all, plugins=plugins, permissions=ASK
    ) as rt:
        agent = await create_agent(rt, tools=["slow", "approve_me", "after"])
        outcome: list[Any] = []
        with anyio.CancelScope() as scope:

            async def run() -> None:
                outcome.append(await agent.run("go"))

            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await approver.asked.wait()  # B suspended; A runs on beside it
                if how == "signal":
                    agent.cancel("stop now")
                else:
                    scope.cancel()
        results = results_by_call(agent)
        assert list(results) == ["call_a", "call_b", "call_c"]  # each exactly one result
        assert results["call_a"][0].startswith("error: interrupted while running")
        assert results["call_b"] == ["not_executed: not executed: interrupted"]
        assert results["call_c"] == ["not_executed: not executed: interrupted"]
        assert tools.ran == ["slow:a"]
        assert turn_ends(agent)[-1].reason == "interrupted"
        if how == "signal":
            assert outcome[0].interrupted  # the run returns, interrupted
        else:
            assert scope.cancelled_caught  # the caller's cancellation is not swallowed
        state = await journal.load(RunId(_run_id(agent)))
        assert state is not None
        [effect] = state.effects.values()  # only A started; its end is saved as interrupted
        assert effect.result is not None
        assert effect.result.message.text.startswith("interrupted while running")


class FailingResultOf(SqliteJournal):
    """Refuses to save the result of one call (the disk filled up under it)."""

    def __init__(self, path: Path, call_id: str) -> None:
        super().__init__(path)
        self.call_id = call_id

    async def _append(self, record: Any) -> None:
        if record.kind == "tool/result" and record.invocation_id.endswith(self.call_id):
            raise OSError("disk full while writing tool/result")
        await super()._append(record)


async def test_a_failed_journal_write_beats_the_suspension(tmp_path: Path) -> None:
    approver = WaitingApprover()
    release = anyio.Event()
    tools = Tools(release, "inspect")
    journal = FailingResultOf(tmp_path / "journal" / "j.sqlite3", "call_a")
    plugins = [("approver", approver)]
    async with journaled(
        tmp_path, journal, ScriptedProvider(script()), tools.all, plugins=plugins, permissions=ASK
    ) as rt:
        agent = await create_agent(rt, tools=["slow", "approve_me", "after"])

        async def free_a_once_b_waits() -> None:
            await approver.asked.wait()
            release.set()  # A finishes after B suspended; saving its result fails

        async with anyio.create_task_group() as tg:
            tg.start_soon(free_a_once_b_waits)
            with pytest.raises(JournalWriteError):  # the failure, not the wait
                await agent.run("go")
        end = turn_ends(agent)[-1]
        assert end.reason == "failed"
        assert end.error["code"] == "journal.write_failed"
        assert tools.ran == ["slow:a"]
