"""Compaction in a journaled run: its summary call is journaled (``c<n>``) and never asked
twice -- a child process killed after the summary was answered (before the compaction was
logged, or after) is continued in this process without a second summary call."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from journal_support import (
    AGENT,
    COMPACT_WINDOW,
    COMPACTION,
    SESSION,
    ScriptedProvider,
    agent_config,
    create_agent,
    effect_tool,
    journaled,
    marker_lines,
)

from agentrig.ids import AgentId, SessionId
from agentrig.journal import MemoryJournal, SqliteJournal, continue_execution
from agentrig.llm import ModelInfo, ModelRequest
from agentrig.session import ContextCompacted

pytestmark = [pytest.mark.anyio]

CHILD = Path(__file__).with_name("journal_child.py")
SUMMARY_MARK = "Summarise the conversation transcript"  # the summary call's system prompt


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the child processes dominate; one backend is enough here


def is_summary_request(request: ModelRequest) -> bool:
    first = request.messages[0]
    return first.role == "system" and first.text.startswith(SUMMARY_MARK)


def crash(tmp: Path, point: str, script: str = "compact") -> None:
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


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(
    "point",
    [
        "after-model-result:c2",  # the summary is journaled; the compaction is not logged
        "before-model-intent:m3",  # the compaction is logged; the next round never started
    ],
)
async def test_a_killed_run_continues_without_a_second_summary_call(
    tmp_path: Path, point: str
) -> None:
    crash(tmp_path, point)
    assert marker_lines(tmp_path / "marker.txt") == ["one"]
    journal = SqliteJournal(tmp_path / "private" / "journal.sqlite3")
    provider = ScriptedProvider(["done after one"])  # the turn's last answer, no summary
    marker = tmp_path / "marker.txt"
    try:
        async with journaled(tmp_path, journal, provider, [effect_tool(marker)]) as rt:
            rt.models.register(ModelInfo(model="m1", context_window=COMPACT_WINDOW))
            result = await continue_execution(
                rt,
                journal,
                agent_id=AGENT,
                session_id=SESSION,
                config=agent_config(compaction=COMPACTION),
            )
            events = result.agent.session.events
            view = result.agent.session.derive_messages()
        (record,) = await journal.executions(agent_id=AgentId(AGENT), session_id=SessionId(SESSION))
        state = await journal.load(record.run_id)
    finally:
        await journal.aclose()
    assert result.text == "done after one"
    assert [is_summary_request(r) for r in provider.requests] == [False]  # asked once, before
    assert marker_lines(marker) == ["one"]
    compactions = [e.data for e in events if isinstance(e.data, ContextCompacted)]
    assert [(c.strategy, c.replaced) for c in compactions] == [("summary", 1)]
    assert getattr(view[0], "source", None) == "compaction-summary"
    assert view[0].text.endswith("The user asked for the thing.")
    assert provider.requests[0].messages[0].text == view[0].text  # the model saw the summary
    assert state is not None
    assert [(c.call_id, c.compaction) for c in state.model_calls] == [
        ("m1", False),
        ("c2", True),
        ("m3", False),
    ]
    assert state.rounds_used() == 2  # the summary call is no round of the turn


@pytest.mark.slow
@pytest.mark.subprocess
async def test_a_run_killed_after_compacting_in_its_first_round_is_not_summarised_twice(
    tmp_path: Path,
) -> None:
    """The common case: a new prompt pushes a long session past the threshold, so the run's
    first model call is the summary -- its execution holds nothing else when it dies."""
    crash(tmp_path, "after-model-result:c1", "compact-second")
    journal = SqliteJournal(tmp_path / "private" / "journal.sqlite3")
    provider = ScriptedProvider(["ok"])
    try:
        async with journaled(tmp_path, journal, provider, [effect_tool(tmp_path / "m")]) as rt:
            rt.models.register(ModelInfo(model="m1", context_window=COMPACT_WINDOW))
            result = await continue_execution(
                rt,
                journal,
                agent_id=AGENT,
                session_id=SESSION,
                config=agent_config(compaction=COMPACTION),
            )
            view = result.agent.session.derive_messages()
        _first, second = await journal.executions(
            agent_id=AgentId(AGENT), session_id=SessionId(SESSION)
        )
        state = await journal.load(second.run_id)
    finally:
        await journal.aclose()
    assert result.run_id == second.run_id
    assert result.text == "ok"
    assert [is_summary_request(r) for r in provider.requests] == [False]
    assert getattr(view[0], "source", None) == "compaction-summary"
    assert view[-2].text.startswith("do the thing x")  # the new prompt is kept
    assert state is not None
    assert [c.call_id for c in state.model_calls] == ["c1", "m2"]


async def test_a_manual_compaction_between_runs_of_a_journaled_agent_is_not_journaled(
    tmp_path: Path,
) -> None:
    journal = MemoryJournal()
    provider = ScriptedProvider(["Paris.", "Big.", "The user asked about Paris."])
    async with journaled(tmp_path, journal, provider, []) as rt:
        agent = await create_agent(rt, tools=[], compaction={"keep_last": 2})
        await agent.run("Capital of France?")
        await agent.run("How big?")
        event = await agent.compact()
    assert event is not None
    assert event.strategy == "summary"
    assert is_summary_request(provider.requests[-1])
    records = await journal.executions(agent_id=AgentId(AGENT), session_id=SessionId(SESSION))
    calls = []
    for record in records:
        state = await journal.load(record.run_id)
        assert state is not None
        calls += [c.call_id for c in state.model_calls]
    assert calls == ["m1", "m1"]  # one call per run; the compaction belongs to no run
