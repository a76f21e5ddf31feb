"""Journaled runs in one process: boundaries are durable before they are crossed, rejected
writes fail the run, cancellation joins the provider call, and the identical-input guard."""

from __future__ import annotations

from collections.abc import AsyncIterator
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
    effect_tool,
    journaled,
    marker_lines,
    tool_results,
    two_round_script,
)

from agentrig import hookimpl
from agentrig.agent import IdenticalToolInputError
from agentrig.cancel import CancelSignal
from agentrig.ids import AgentId, RunId, SessionId
from agentrig.journal import (
    ExecutionRecord,
    ExecutionState,
    JournaledProvider,
    JournalError,
    JournalWriteError,
    MemoryJournal,
    ModelIntent,
    ModelSettlement,
    ToolIntent,
    ToolSettlement,
    UnknownExecutionError,
    continue_execution,
)
from agentrig.kernel import open_runtime
from agentrig.llm import (
    FinishChunk,
    ModelRequest,
    StreamChunk,
    TextDelta,
    ToolCallStart,
    Usage,
    UsageChunk,
)

pytestmark = pytest.mark.anyio


class FailingJournal(MemoryJournal):
    """Rejects the writes of one kind (``model/intent``, ``tool/result`` ...)."""

    def __init__(self, fail: str) -> None:
        super().__init__()
        self.fail = fail

    async def _append(self, record: Any) -> None:
        if record.kind == self.fail:
            raise OSError(f"disk full while writing {record.kind}")
        await super()._append(record)


class RawJournal:
    """A host backend that is not a RecordJournal and raises plain errors."""

    def __init__(self) -> None:
        self.inner = MemoryJournal()

    async def begin_execution(self, record: ExecutionRecord) -> None:
        await self.inner.begin_execution(record)

    async def model_intent(self, intent: ModelIntent) -> None:
        await self.inner.model_intent(intent)

    async def model_result(self, settlement: ModelSettlement) -> None:
        await self.inner.model_result(settlement)

    async def tool_intent(self, intent: ToolIntent) -> None:
        raise RuntimeError("backend offline")

    async def tool_result(self, settlement: ToolSettlement) -> None:
        await self.inner.tool_result(settlement)

    async def load(self, run_id: str) -> ExecutionState | None:
        return await self.inner.load(RunId(run_id))

    async def executions(
        self, *, agent_id: AgentId | None = None, session_id: SessionId | None = None
    ) -> tuple[ExecutionRecord, ...]:
        return await self.inner.executions(agent_id=agent_id, session_id=session_id)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_every_boundary_is_durable_before_it_is_crossed(tmp_path: Path) -> None:
    journal = MemoryJournal()
    seen: list[str] = []

    class Checking(ScriptedProvider):
        async def stream(  # type: ignore[override]
            self, request: ModelRequest, *, signal: CancelSignal
        ) -> AsyncIterator[StreamChunk]:
            kinds = [r.kind for r in journal.records]
            seen.append(f"provider after {kinds[-1]}")
            async for chunk in super().stream(request, signal=signal):
                yield chunk

    def before_effect() -> None:
        seen.append(f"effect after {journal.records[-1].kind}")

    marker = tmp_path / "marker.txt"
    tool = effect_tool(marker, before_effect=before_effect)
    async with journaled(tmp_path, journal, Checking(two_round_script()), [tool]) as rt:
        agent = await create_agent(rt)
        result = await agent.run("go")
    assert result.value == "done after one"
    assert seen == [
        "provider after model/intent",
        "effect after tool/intent",
        "provider after model/intent",
    ]
    kinds = [r.kind for r in journal.records]
    assert kinds == [
        "execution",
        "model/intent",
        "model/result",
        "tool/intent",
        "tool/result",
        "model/intent",
        "model/result",
    ]
    (execution, intent, *_rest) = journal.records
    assert execution.agent_id == AGENT  # type: ignore[union-attr]
    assert execution.session_id == SESSION  # type: ignore[union-attr]
    assert execution.limits.max_rounds == 25  # type: ignore[union-attr]
    assert execution.resident == ("effect",)  # type: ignore[union-attr]
    assert isinstance(intent, ModelIntent)
    assert intent.digest.startswith("sha256:")
    assert intent.tools == ("effect",)


async def test_the_intent_records_the_arguments_actually_run(tmp_path: Path) -> None:
    class Rewriter:
        @hookimpl
        async def tool_execution(self, payload: Any, next: Any) -> Any:
            import attrs

            return await next(attrs.evolve(payload, arguments={"label": "rewritten"}))

    journal = MemoryJournal()
    marker = tmp_path / "marker.txt"
    provider = ScriptedProvider(two_round_script())
    async with journaled(
        tmp_path, journal, provider, [effect_tool(marker)], plugins=[("rewriter", Rewriter())]
    ) as rt:
        agent = await create_agent(rt)
        await agent.run("go")
    (intent,) = [r for r in journal.records if isinstance(r, ToolIntent)]
    assert intent.arguments == {"label": "rewritten"}
    assert marker_lines(marker) == ["rewritten"]
    (settled,) = [r for r in journal.records if isinstance(r, ToolSettlement)]
    assert settled.message == tool_results(agent)[0]


@pytest.mark.parametrize(
    ("fail", "effects", "requests"),
    [
        ("model/intent", [], 0),
        ("tool/intent", [], 1),
        ("tool/result", ["one"], 1),
        ("model/result", [], 1),
    ],
)
async def test_a_rejected_write_fails_the_run(
    tmp_path: Path, fail: str, effects: list[str], requests: int
) -> None:
    journal = FailingJournal(fail)
    marker = tmp_path / "marker.txt"
    provider = ScriptedProvider(two_round_script())
    async with journaled(tmp_path, journal, provider, [effect_tool(marker)]) as rt:
        agent = await create_agent(rt)
        with pytest.raises(JournalWriteError) as caught:
            await agent.run("go")
        assert isinstance(caught.value.cause, OSError)
        assert marker_lines(marker) == effects
        assert len(provider.requests) == requests
        # no tool result claims success, and the model never saw the failure as a result
        assert [m for m in tool_results(agent) if m.status == "ok"] == []
        assert all("disk full" not in m.text for m in tool_results(agent))
        ends = [e.data for e in agent.session.events if e.type == "turn/end"]
        assert ends[-1].reason == "failed"
        assert ends[-1].error["code"] == "journal.write_failed"


async def test_a_host_backend_raising_anything_still_fails_the_run(tmp_path: Path) -> None:
    journal = RawJournal()
    marker = tmp_path / "marker.txt"
    async with journaled(
        tmp_path, journal, ScriptedProvider(two_round_script()), [effect_tool(marker)]
    ) as rt:
        agent = await create_agent(rt)
        with pytest.raises(JournalWriteError, match="backend offline"):
            await agent.run("go")
    assert marker_lines(marker) == []


class StubbornProvider(ScriptedProvider):
    """Ignores its cancel signal: it answers completely (text, a tool call, usage)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = anyio.Event()
        self.finished = False

    async def stream(  # type: ignore[override]
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamChunk]:
        self.requests.append(request)
        yield TextDelta(text="partial ")
        self.started.set()
        with anyio.CancelScope(shield=True):
            await anyio.sleep(0.2)
        yield TextDelta(text="late text")
        yield ToolCallStart(index=0, id="late_call", name="effect")
        yield UsageChunk(usage=Usage(prompt=10, completion=5, total=15))
        yield FinishChunk(stop_reason="tool_calls")
        self.finished = True


async def test_cancellation_joins_the_provider_call_and_records_the_late_response(
    tmp_path: Path,
) -> None:
    journal = MemoryJournal()
    provider = StubbornProvider()
    marker = tmp_path / "marker.txt"
    async with journaled(tmp_path, journal, provider, [effect_tool(marker)]) as rt:
        agent = await create_agent(rt)
        signal = CancelSignal()
        async with anyio.create_task_group() as tg:

            async def cancel() -> None:
                await provider.started.wait()
                signal.cancel("user stop")

            tg.start_soon(cancel)
            result = await agent.run("go", signal=signal)
        assert result.invocation.outcome == "interrupted"
        assert provider.finished  # the run completed only after the call settled
    (settled,) = [r for r in journal.records if isinstance(r, ModelSettlement)]
    assert settled.outcome == "interrupted"
    assert settled.message is not None
    assert settled.message.usage == Usage(prompt=10, completion=5, total=15)
    assert [c.id for c in settled.message.tool_calls] == ["late_call"]
    assert marker_lines(marker) == []  # a late tool intent is recorded, never run


async def test_a_failed_write_wins_over_a_racing_cancellation(tmp_path: Path) -> None:
    journal = FailingJournal("model/result")
    provider = StubbornProvider()
    async with journaled(tmp_path, journal, provider, [effect_tool(tmp_path / "m")]) as rt:
        agent = await create_agent(rt)
        signal = CancelSignal()
        async with anyio.create_task_group() as tg:

            async def cancel() -> None:
                await provider.started.wait()
                signal.cancel("user stop")

            tg.start_soon(cancel)
            failure: BaseException | None = None
            try:
                await agent.run("go", signal=signal)
            except JournalWriteError as exc:
                failure = exc
    assert isinstance(failure, JournalWriteError)


async def test_identical_input_guard_keeps_the_journal_the_recovery_authority(
    tmp_path: Path,
) -> None:
    journal = MemoryJournal()
    marker = tmp_path / "marker.txt"
    script = [
        Reply(tool_calls=(ScriptedCall("effect", {"label": "one"}, id="call_a"),)),
        Reply(tool_calls=(ScriptedCall("effect", {"label": "one"}, id="call_b"),)),
        Reply(text="I will stop repeating myself"),
    ]
    provider = ScriptedProvider(script)
    async with journaled(tmp_path, journal, provider, [effect_tool(marker)]) as rt:
        agent = await create_agent(rt, identical_input_limit=1)
        with pytest.raises(IdenticalToolInputError):
            await agent.run("go")
        assert marker_lines(marker) == ["one"]
        run_id = (await journal.executions())[0].run_id
        state = await journal.load(run_id)
        assert state is not None
        # the journal proves the refused batch never started: no intent, nothing to guess
        assert sorted(state.effects) == ["m1/call_a"]
        assert [c.call_id for c in state.model_calls] == ["m1", "m2"]
        # no transcript-only settlement was invented for the refused batch ...
        calls = [m for m in agent.session.derive_messages() if m.role == "tool"]
        assert [m.call_id for m in calls] == ["call_a"]
        # ... so continuing re-applies the guard from the journal's counts: still refused
        with pytest.raises(IdenticalToolInputError, match="undispatched"):
            await continue_execution(rt, journal, agent_id=AGENT, session_id=SESSION)
    assert marker_lines(marker) == ["one"]  # the effect never ran twice


async def test_misuse_is_reported(tmp_path: Path) -> None:
    journal = MemoryJournal()
    wrapped = JournaledProvider(ScriptedProvider(["x"]), journal)
    request = ModelRequest(model="m1", messages=())
    with pytest.raises(JournalError, match="outside a journaled turn"):
        async for _chunk in wrapped.stream(request, signal=CancelSignal()):
            pass
    tool = effect_tool(tmp_path / "marker.txt")
    async with journaled(tmp_path, journal, ScriptedProvider([]), [tool]) as rt:
        with pytest.raises(UnknownExecutionError):
            await continue_execution(rt, journal, agent_id=AGENT, session_id=SESSION)
        with pytest.raises(JournalError, match="not journaled with that journal"):
            await continue_execution(rt, MemoryJournal(), agent_id=AGENT, session_id=SESSION)
    async with open_runtime({}, environ={}) as plain:
        with pytest.raises(JournalError, match="not journaled"):
            await continue_execution(plain, journal, agent_id=AGENT, session_id=SESSION)
