"""Journaled runs whose reply makes several read-only calls (run concurrently): each effect
is journaled once, intent before result, and a rejected write fails the run as itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from journal_support import (
    Reply,
    ScriptedCall,
    ScriptedProvider,
    create_agent,
    effect_tool,
    journaled,
    marker_lines,
    tool_results,
)

from agentrig.journal import JournalWriteError, MemoryJournal

pytestmark = pytest.mark.anyio


def three_calls() -> list[Reply]:
    calls = tuple(ScriptedCall("effect", {"label": f"l{i}"}, id=f"call_{i}") for i in range(3))
    return [Reply(tool_calls=calls), Reply(text="done after three")]


async def test_each_concurrent_effect_is_journaled_once_intent_before_result(
    tmp_path: Path,
) -> None:
    journal = MemoryJournal()
    marker = tmp_path / "marker.txt"
    async with journaled(
        tmp_path, journal, ScriptedProvider(three_calls()), [effect_tool(marker)]
    ) as rt:
        agent = await create_agent(rt)
        result = await agent.run("go")
    assert result.value == "done after three"
    assert sorted(marker_lines(marker)) == ["l0", "l1", "l2"]
    tools = [r for r in journal.records if r.kind in ("tool/intent", "tool/result")]
    assert len(tools) == 6
    # per effect (one invocation id each): its intent, then its result, each once
    for invocation in {r.invocation_id for r in tools}:
        assert [r.kind for r in tools if r.invocation_id == invocation] == [
            "tool/intent",
            "tool/result",
        ]
    assert len({r.invocation_id for r in tools}) == 3
    assert [m.text for m in tool_results(agent)] == ["wrote l0", "wrote l1", "wrote l2"]


class FailingResults(MemoryJournal):
    async def _append(self, record: Any) -> None:
        if record.kind == "tool/result":
            raise OSError("disk full while writing tool/result")
        await super()._append(record)


async def test_a_rejected_write_in_a_concurrent_group_fails_the_run_as_itself(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "marker.txt"
    provider = ScriptedProvider(three_calls())
    async with journaled(tmp_path, FailingResults(), provider, [effect_tool(marker)]) as rt:
        agent = await create_agent(rt)
        with pytest.raises(JournalWriteError):  # not an exception group
            await agent.run("go")
        assert len(provider.requests) == 1
        assert [m for m in tool_results(agent) if m.status == "ok"] == []
        ends = [e.data for e in agent.session.events if e.type == "turn/end"]
        assert ends[-1].error["code"] == "journal.write_failed"
