"""Crash recovery: a child process running a journaled agent is SIGKILLed at named points;
continuation in this process never repeats or hides an effect, and refuses what the journal
cannot prove."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from journal_support import (
    AGENT,
    SESSION,
    Observer,
    Reply,
    ScriptedProvider,
    agent_config,
    effect_tool,
    journaled,
    marker_lines,
    tool_results,
    two_round_script,
)

from agentrig.agent import IdenticalToolInputError
from agentrig.ids import AgentId, InvocationId, SessionId
from agentrig.journal import (
    ContinuationResult,
    ReconciliationRequired,
    SqliteJournal,
    continue_execution,
    reconcile_model,
    reconcile_tool,
)
from agentrig.llm import ToolMessage

pytestmark = [pytest.mark.subprocess, pytest.mark.slow, pytest.mark.anyio]

CHILD = Path(__file__).with_name("journal_child.py")


def crash(tmp: Path, point: str, script: str = "two-rounds") -> None:
    """Run the child until it kills itself at ``point``."""
    done = subprocess.run(
        [sys.executable, str(CHILD), str(tmp), point, script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=CHILD.parent,
    )
    assert done.returncode == -signal.SIGKILL, (
        f"the child did not die at {point}: rc={done.returncode}\n{done.stdout}\n{done.stderr}"
    )


def journal_of(tmp: Path) -> SqliteJournal:
    return SqliteJournal(tmp / "private" / "journal.sqlite3")


@dataclass
class Resumed:
    result: ContinuationResult
    results: list[str]  # the tool results in the agent's history
    provider: ScriptedProvider
    marker: Path
    observed: list[str]  # what an observer plugin saw during the continuation


async def resume(tmp: Path, replies: Sequence[Reply | str], *, idempotent: bool = False) -> Resumed:
    """Continue the crashed execution in a fresh runtime (a fresh process's view)."""
    marker = tmp / "marker.txt"
    provider = ScriptedProvider(replies)
    journal = journal_of(tmp)
    observer = Observer()
    try:
        async with journaled(
            tmp,
            journal,
            provider,
            [effect_tool(marker, idempotent=idempotent)],
            plugins=[("observer", observer)],
        ) as rt:
            result = await continue_execution(
                rt, journal, agent_id=AGENT, session_id=SESSION, config=agent_config()
            )
            results = [m.text for m in tool_results(result.agent)]
            return Resumed(result, results, provider, marker, observer.seen)
    finally:
        await journal.aclose()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the child processes dominate; one backend is enough here


async def test_killed_before_first_model_intent_runs_the_turn_once(tmp_path: Path) -> None:
    crash(tmp_path, "before-model-intent:m1")
    assert marker_lines(tmp_path / "marker.txt") == []
    r = await resume(tmp_path, two_round_script())
    assert r.result.status == "continued"
    assert r.result.text == "done after one"
    assert marker_lines(r.marker) == ["one"]
    assert r.results == ["wrote one"]
    assert len(r.provider.requests) == 2


async def test_killed_after_model_intent_is_refused_naming_the_call(tmp_path: Path) -> None:
    crash(tmp_path, "after-model-intent:m1")
    with pytest.raises(ReconciliationRequired) as caught:
        await resume(tmp_path, [])
    assert caught.value.ids("model_call") == ("m1",)
    assert "m1" in str(caught.value)
    assert marker_lines(tmp_path / "marker.txt") == []


async def test_a_reconciled_model_call_is_asked_again(tmp_path: Path) -> None:
    crash(tmp_path, "after-model-intent:m1")
    journal = journal_of(tmp_path)
    (record,) = await journal.executions(agent_id=AgentId(AGENT), session_id=SessionId(SESSION))
    await reconcile_model(
        journal, record.run_id, InvocationId("m1")
    )  # the host: "no answer arrived"
    await journal.aclose()
    script: list[Reply | str] = ["answered without tools"]
    r = await resume(tmp_path, script)
    assert r.result.text == "answered without tools"
    assert r.results == []
    assert marker_lines(r.marker) == []


async def test_killed_after_model_result_restores_the_response(tmp_path: Path) -> None:
    crash(tmp_path, "after-model-result:m1")
    r = await resume(tmp_path, ["done after one"])
    assert r.result.restored == ("m1",)
    assert r.result.dispatched == ("m1/call_a",)
    assert marker_lines(r.marker) == ["one"]
    assert r.results == ["wrote one"]
    assert len(r.provider.requests) == 1  # the settled response was not asked for again
    assert r.observed == ["tool:effect", "turn_stopping"]


async def test_killed_after_tool_intent_is_refused_and_never_runs(tmp_path: Path) -> None:
    crash(tmp_path, "after-tool-intent")
    assert marker_lines(tmp_path / "marker.txt") == []
    with pytest.raises(ReconciliationRequired) as caught:
        await resume(tmp_path, ["never asked"])
    assert caught.value.ids("tool_effect") == ("m1/call_a",)
    assert "effect" in str(caught.value)
    assert marker_lines(tmp_path / "marker.txt") == []


async def test_killed_after_the_effect_is_refused_and_never_repeated(tmp_path: Path) -> None:
    crash(tmp_path, "after-effect")
    assert marker_lines(tmp_path / "marker.txt") == ["one"]
    with pytest.raises(ReconciliationRequired) as caught:
        await resume(tmp_path, ["never asked"])
    assert caught.value.ids("tool_effect") == ("m1/call_a",)
    assert marker_lines(tmp_path / "marker.txt") == ["one"]
    # the host checks the world, records what happened, and continues
    journal = journal_of(tmp_path)
    (record,) = await journal.executions(agent_id=AgentId(AGENT), session_id=SessionId(SESSION))
    message = ToolMessage.of("call_a", "effect", "wrote one (confirmed by the host)")
    await reconcile_tool(journal, record.run_id, InvocationId("m1/call_a"), message)
    await journal.aclose()
    r = await resume(tmp_path, ["done after one"])
    assert r.result.restored == ("m1/call_a",)
    assert r.result.dispatched == ()
    assert marker_lines(r.marker) == ["one"]
    assert r.results == ["wrote one (confirmed by the host)"]


@pytest.mark.parametrize("point", ["after-tool-intent", "after-effect"])
async def test_an_idempotent_effect_cut_off_by_the_crash_runs_again_as_its_next_attempt(
    tmp_path: Path, point: str
) -> None:
    crash(tmp_path, point, "idempotent")
    before = marker_lines(tmp_path / "marker.txt")
    r = await resume(tmp_path, ["done after one"], idempotent=True)
    assert r.result.rerun == ("m1/call_a",)
    assert r.result.dispatched == ()
    assert r.result.text == "done after one"
    assert marker_lines(r.marker) == [*before, "one"]  # ran again: harmless, the tool says
    assert r.results == ["wrote one"]  # one result in the history
    notices = [e.data.text for e in r.result.agent.session.events if e.type == "notice"]
    assert len(notices) == 1
    assert "re-running effect (m1/call_a), attempt 2" in notices[0]
    # the journal holds both starts, each under its own key, and one settlement
    journal = journal_of(tmp_path)
    try:
        state = await journal.load(r.result.run_id)
        assert state is not None
        effect = state.effects["m1/call_a"]
        assert effect.attempt == 2
        assert [i.invocation_id for i in effect.reruns] == ["m1/call_a#2"]
        assert effect.result is not None
        assert effect.result.message.text == "wrote one"
    finally:
        await journal.aclose()
    again = await resume(tmp_path, [])
    assert again.result.status == "completed"  # nothing is run a third time
    assert again.result.rerun == ()
    assert marker_lines(r.marker) == [*before, "one"]


async def test_a_second_crash_in_the_rerun_runs_it_a_third_time(tmp_path: Path) -> None:
    crash(tmp_path, "after-effect", "idempotent")
    crash(tmp_path, "after-effect", "idempotent-resume")
    assert marker_lines(tmp_path / "marker.txt") == ["one", "one"]
    r = await resume(tmp_path, ["done after one"], idempotent=True)
    assert r.result.rerun == ("m1/call_a",)
    assert marker_lines(r.marker) == ["one", "one", "one"]
    notices = [e.data.text for e in r.result.agent.session.events if e.type == "notice"]
    assert [n.split(":")[0] for n in notices] == [
        "re-running effect (m1/call_a), attempt 2",
        "re-running effect (m1/call_a), attempt 3",
    ]


async def test_killed_after_tool_result_restores_it_without_rerunning(tmp_path: Path) -> None:
    crash(tmp_path, "after-tool-result")
    assert marker_lines(tmp_path / "marker.txt") == ["one"]
    r = await resume(tmp_path, ["done after one"])
    assert r.result.status == "continued"
    assert r.result.restored == ("m1/call_a",)
    assert r.result.dispatched == ()
    assert marker_lines(r.marker) == ["one"]  # never twice
    assert r.results == ["wrote one"]  # never hidden
    assert r.result.text == "done after one"
    # the call's start was logged before the crash: it is not logged a second time
    calls = [e for e in r.result.agent.session.events if e.type == "tool/call"]
    assert [e.data.call.id for e in calls] == ["call_a"]
    # the restored settlement re-entered no observer; only the continued turn closed
    assert r.observed == ["turn_stopping"]


async def test_killed_before_the_second_round_reuses_the_settled_result(tmp_path: Path) -> None:
    crash(tmp_path, "before-model-intent:m2")
    r = await resume(tmp_path, ["done after one"])
    assert r.result.reused == ("m1/call_a",)
    assert r.result.restored == ()
    assert marker_lines(r.marker) == ["one"]
    assert r.results == ["wrote one"]
    (request,) = r.provider.requests
    assert [m.role for m in request.messages][-2:] == ["assistant", "tool"]


async def test_a_finished_execution_is_not_repeated(tmp_path: Path) -> None:
    crash(tmp_path, "after-model-result:m2")
    r = await resume(tmp_path, [])
    assert r.result.status == "completed"
    assert r.result.restored == ("m2",)
    assert r.result.text == "done after one"
    assert r.provider.requests == []
    assert r.observed == []  # turn-level hooks are not replayed
    assert marker_lines(r.marker) == ["one"]


async def test_history_that_conflicts_with_the_journal_is_never_overwritten(
    tmp_path: Path,
) -> None:
    crash(tmp_path, "before-model-intent:m2")
    # someone edits the live history: the effect's result now claims something else
    sessions = tmp_path / "sessions"
    (log,) = [p for p in sessions.rglob("*.jsonl")]
    original = log.read_text(encoding="utf-8")
    log.write_text(original.replace("wrote one", "wrote nothing"), encoding="utf-8")
    with pytest.raises(ReconciliationRequired) as caught:
        await resume(tmp_path, ["never asked"])
    assert caught.value.ids("history") == ("m1/call_a",)
    assert "wrote nothing" in log.read_text(encoding="utf-8")
    assert marker_lines(tmp_path / "marker.txt") == ["one"]


async def test_changed_runtime_state_is_refused(tmp_path: Path) -> None:
    crash(tmp_path, "before-model-intent:m2")
    marker = tmp_path / "marker.txt"
    journal = journal_of(tmp_path)
    try:
        async with journaled(tmp_path, journal, ScriptedProvider([]), [effect_tool(marker)]) as rt:
            with pytest.raises(ReconciliationRequired) as caught:
                await continue_execution(
                    rt,
                    journal,
                    agent_id=AGENT,
                    session_id=SESSION,
                    config=agent_config(model="m2", identical_input_limit=9),
                )
    finally:
        await journal.aclose()
    details = [item.detail for item in caught.value.items]
    assert any("model is 'm2'" in d for d in details)
    assert any("identical_input_limit" in d for d in details)


async def test_the_identical_input_guard_holds_across_a_crash(tmp_path: Path) -> None:
    # limit 1: round 2 repeats round 1's call; the child dies once round 2 is journaled
    crash(tmp_path, "after-model-result:m2", script="repeat")
    assert marker_lines(tmp_path / "marker.txt") == ["one"]
    marker = tmp_path / "marker.txt"
    journal = journal_of(tmp_path)
    try:
        async with journaled(
            tmp_path, journal, ScriptedProvider(["never asked"]), [effect_tool(marker)]
        ) as rt:
            with pytest.raises(IdenticalToolInputError):
                await continue_execution(
                    rt,
                    journal,
                    agent_id=AGENT,
                    session_id=SESSION,
                    config=agent_config(identical_input_limit=1),
                )
            agent = rt.agent(AgentId(AGENT))
            # no transcript-only settlement was invented: the journal keeps the authority
            assert [m.text for m in tool_results(agent)] == ["wrote one"]
            state = await journal.load((await journal.executions())[0].run_id)
            assert state is not None
            assert sorted(state.effects) == ["m1/call_a"]
    finally:
        await journal.aclose()
    assert marker_lines(marker) == ["one"]
