"""Continuation: resume a journaled execution from its latest settled model response.

Nothing the journal cannot prove is guessed: every check runs before anything changes, and
a refusal (:class:`~agentrig.journal.ReconciliationRequired`) leaves the live history and the
journal as they were.  When everything is proven, the journal's settlements that the live
history lacks are appended to it (without re-entering any hook or observer), the calls of
the latest response that never started are dispatched, and the turn continues with a model
round without new input -- under the limits and tool residency the execution started with.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import attrs

from agentrig.agent import (
    FORCED_SUMMARY_FALLBACK,
    Agent,
    AgentConfig,
    Continuation,
    IdenticalToolInputError,
    RunOptions,
)
from agentrig.cancel import CancelSignal
from agentrig.ids import AgentId, CallId, InvocationId, RunId, SessionId
from agentrig.ids import agent_id as _agent_id
from agentrig.ids import session_id as _session_id
from agentrig.journal._binding import RESUMED_CALL
from agentrig.journal._errors import (
    JournalError,
    ReconciliationRequired,
    UnknownExecutionError,
    Unproven,
)
from agentrig.journal._guard import durable
from agentrig.journal._listener import JOURNAL, JournalListener
from agentrig.journal._port import ExecutionJournal
from agentrig.journal._records import (
    ExecutionRecord,
    ExecutionState,
    ModelCall,
    ModelSettlement,
    ToolSettlement,
)
from agentrig.llm import AssistantMessage, ToolCallBlock, ToolMessage
from agentrig.session import (
    AssistantMessageEvent,
    Notice,
    SessionEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
    TurnStart,
)
from agentrig.tools import is_idempotent

__all__ = ["ContinuationResult", "continue_execution", "reconcile_model", "reconcile_tool"]

_CLOSED_REASONS = frozenset({"completed", "budget", "rejected"})


@attrs.frozen(slots=True)
class ContinuationResult:
    """What a continuation did.

    ``status`` is ``continued`` (a model round ran) or ``completed`` (the execution had
    already produced its answer: nothing was repeated).  ``restored`` lists the journal's
    settlements appended to the live history, ``reused`` those it already held,
    ``dispatched`` the calls that had never started and ran now, ``undispatched`` the calls
    the history settled without any effect (refused, skipped, not executed) -- never run.
    The agent keeps the restored history: the host checkpoints or disposes it.
    """

    agent: Agent
    run_id: RunId
    status: Literal["continued", "completed"]
    restored: tuple[str, ...] = ()
    reused: tuple[str, ...] = ()
    dispatched: tuple[str, ...] = ()
    undispatched: tuple[str, ...] = ()
    outcome: Any = None
    rerun: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The execution's final assistant text (empty when there is none)."""
        if self.outcome is not None:
            return str(self.outcome.text)
        for message in reversed(self.agent.session.derive_messages()):
            if isinstance(message, AssistantMessage):
                return message.text
        return ""


# ---- the plan ------------------------------------------------------------------------------


@attrs.define(slots=True)
class _Plan:
    items: list[Unproven] = attrs.field(factory=list)
    restore_message: AssistantMessage | None = None
    # per call of the latest settled response: ("logged"|"restore"|"dispatch"|"settle", ...)
    steps: list[tuple[str, ToolCallBlock, InvocationId, ToolMessage | None]] = attrs.field(
        factory=list
    )
    reused: list[str] = attrs.field(factory=list)
    undispatched: list[str] = attrs.field(factory=list)
    latest: ModelCall | None = None
    closed: bool = False
    # calls of the latest response whose tool/call event the live history already holds
    logged_calls: set[str] = attrs.field(factory=set)
    # unsettled effects of idempotent tools -> the attempt a re-run would be
    rerunnable: dict[str, int] = attrs.field(factory=dict)
    # those of the latest response that run again now -> their attempt
    reruns: dict[str, int] = attrs.field(factory=dict)


def _same(a: Any, b: Any) -> bool:
    return bool(a.model_dump(mode="json") == b.model_dump(mode="json"))


def _synthetic(message: AssistantMessage) -> bool:
    """A message the loop wrote itself: the forced-summary fallback, or a failure notice of
    a log written before failed calls became ``model/error`` events."""
    if message.stop_reason == "error":
        return True
    return not message.tool_calls and message.text == FORCED_SUMMARY_FALLBACK


def _matches(logged: AssistantMessage, settled: ModelSettlement) -> bool:
    assert settled.message is not None
    if settled.outcome == "interrupted" and logged.interrupted:
        # the journal joined the call and may hold more than the run committed
        return True
    return _same(logged, settled.message)


def _segment(events: Sequence[SessionEvent], run_id: RunId, plan: _Plan) -> list[SessionEvent]:
    start = next(
        (
            i
            for i, e in enumerate(events)
            if isinstance(e.data, TurnStart) and e.data.run_id == run_id
        ),
        None,
    )
    if start is None:
        plan.items.append(
            Unproven("history", run_id, "the live history holds no turn of this execution")
        )
        return []
    segment = list(events[start:])
    for event in segment:
        data = event.data
        if isinstance(data, TurnStart) and data.run_id != run_id:
            plan.items.append(
                Unproven(
                    "history",
                    run_id,
                    f"the live history continued with run {data.run_id} after this execution",
                )
            )
    return segment


def _check_state(record: ExecutionRecord, state: ExecutionState, agent: Agent, plan: _Plan) -> None:
    config = agent.config
    differences: list[str] = []
    if config.provider != record.provider:
        differences.append(f"provider is {config.provider!r}, was {record.provider!r}")
    if config.model != record.model:
        differences.append(f"model is {config.model!r}, was {record.model!r}")
    if config.identical_input_limit != record.limits.identical_input_limit:
        differences.append(
            f"identical_input_limit is {config.identical_input_limit}, "
            f"was {record.limits.identical_input_limit}"
        )
    tools = tuple(sorted(t.id for t in agent.all_tools()))
    if tools != record.tools:
        differences.append(f"tools are {list(tools)}, were {list(record.tools)}")
    else:
        resident = set(record.resident)
        rounds = state.rounds
        if rounds:
            resident |= set(rounds[-1].intent.tools)
        agent.load_tools(sorted(resident))
        offered = {t.id for t in agent.offered_tools()}
        if offered != resident:
            differences.append(
                f"resident tools would be {sorted(offered)}, were {sorted(resident)}"
            )
    for difference in differences:
        plan.items.append(Unproven("runtime_state", record.agent_id, difference))


def _check_journal(state: ExecutionState, agent: Agent, plan: _Plan) -> None:
    for call in state.unsettled_calls():
        plan.items.append(
            Unproven(
                "model_call",
                call.call_id,
                ("the compaction's summary call" if call.compaction else "the call")
                + " was journaled as made but no response was recorded; the provider "
                "may have answered (and charged)",
            )
        )
    tools: dict[str, Any] = {str(t.id): t for t in agent.all_tools()}
    for effect in state.unsettled_effects():
        intent = effect.intent
        tool = tools.get(intent.tool)
        if tool is not None and is_idempotent(tool):
            plan.rerunnable[effect.invocation_id] = effect.attempt + 1  # if still the latest
            continue
        plan.items.append(
            Unproven(
                "tool_effect",
                effect.invocation_id,
                f"{intent.tool} started with {json.dumps(intent.arguments, sort_keys=True)} "
                "but no result was recorded; its effect may have happened",
            )
        )


def _plan(state: ExecutionState, agent: Agent) -> _Plan:
    plan = _Plan()
    record = state.record
    _check_state(record, state, agent, plan)
    _check_journal(state, agent, plan)
    segment = _segment(agent.session.events, record.run_id, plan)

    # the live rounds: each model response of this execution and the results that follow it
    rounds: list[tuple[AssistantMessage, dict[str, ToolMessage]]] = []
    for event in segment:
        data = event.data
        if isinstance(data, AssistantMessageEvent):
            rounds.append((data.message, {}))
            plan.logged_calls = set()
        elif isinstance(data, ToolResultEvent) and rounds:
            results = rounds[-1][1]
            if data.message.call_id in results:
                plan.items.append(
                    Unproven("history", data.message.call_id, "the call has two results")
                )
            results[data.message.call_id] = data.message
        elif isinstance(data, ToolCallEvent) and rounds:
            plan.logged_calls.add(data.call.id)
        elif isinstance(data, TurnEnd):
            plan.closed = data.reason in _CLOSED_REASONS
        elif isinstance(data, TurnStart):
            plan.closed = False

    settled = [  # a compaction's summary call is no round: its answer is not in the history
        c
        for c in state.rounds
        if c.result is not None and c.result.outcome != "failed" and c.result.message is not None
    ]
    matched: list[tuple[ModelCall, dict[str, ToolMessage] | None]] = []
    pointer = 0
    for message, results in rounds:
        if pointer < len(settled):
            result = settled[pointer].result
            assert result is not None
            if _matches(message, result):
                matched.append((settled[pointer], results))
                pointer += 1
                continue
        if _synthetic(message) and not results:
            continue
        plan.items.append(
            Unproven(
                "history",
                f"assistant message {message.text[:40]!r}",
                "the live history holds a model response the journal did not record",
            )
        )
    missing = settled[pointer:]
    if len(missing) > 1:
        plan.items.append(
            Unproven(
                "history",
                missing[0].call_id,
                f"the live history lacks {len(missing)} recorded model responses",
            )
        )
    elif missing:
        result = missing[0].result
        assert result is not None
        assert result.message is not None
        plan.restore_message = result.message
        matched.append((missing[0], None))

    plan.latest = matched[-1][0] if matched else None
    for position, (call, logged) in enumerate(matched):
        last = position == len(matched) - 1
        result = call.result
        assert result is not None
        assert result.message is not None
        complete = result.outcome == "completed"
        for block in result.message.tool_calls:
            invocation_id = InvocationId(f"{call.call_id}/{block.id}")
            effect = state.effects.get(invocation_id)
            seen = (logged or {}).get(block.id)
            if effect is not None:
                if effect.result is None:
                    if invocation_id in plan.rerunnable and last and seen is None:
                        plan.steps.append(("rerun", block, invocation_id, None))
                        plan.reruns[invocation_id] = plan.rerunnable.pop(invocation_id)
                    continue  # else unproven (below, when not already)
                if seen is None:
                    if last:
                        plan.steps.append(("restore", block, invocation_id, effect.result.message))
                    else:
                        plan.items.append(
                            Unproven("history", invocation_id, "the history lacks its result")
                        )
                elif _same(seen, effect.result.message):
                    plan.reused.append(invocation_id)
                else:
                    plan.items.append(
                        Unproven(
                            "history",
                            invocation_id,
                            f"the history shows {seen.status}: {seen.text[:60]!r}, the journal "
                            f"recorded {effect.result.message.status}: "
                            f"{effect.result.message.text[:60]!r}",
                        )
                    )
            elif seen is not None:
                if seen.status == "ok":
                    plan.items.append(
                        Unproven(
                            "history",
                            invocation_id,
                            "the history shows a successful result the journal never saw start",
                        )
                    )
                else:
                    plan.undispatched.append(invocation_id)
            elif not last:
                plan.items.append(Unproven("history", invocation_id, "the call has no result"))
            elif complete:
                plan.steps.append(("dispatch", block, invocation_id, None))
            else:
                plan.steps.append(("settle", block, invocation_id, None))
    for left in plan.rerunnable:  # not the latest response's, or logged as settled
        plan.items.append(
            Unproven(
                "tool_effect",
                left,
                "an idempotent effect that started with no recorded result, outside the "
                "latest model response (or with a result only the live history holds)",
            )
        )
    return plan


# ---- continuing ------------------------------------------------------------------------------


def _listener(rt: Any, journal: ExecutionJournal) -> JournalListener:
    listener = rt.services.get(JOURNAL)
    if not isinstance(listener, JournalListener) or listener.journal is not journal:
        raise JournalError(
            "this runtime is not journaled with that journal: open it with "
            "attach_journal(journal) (its plugins and provider wrapper)"
        )
    return listener


async def _agent(
    rt: Any,
    agent_id: AgentId,
    session_id: SessionId,
    config: AgentConfig | None,
    tools: list[Any] | None,
    run_id: RunId,
) -> Agent:
    live: Agent | None = rt.agents.get(agent_id)
    if live is None:
        agent: Agent = await rt.agents.resume(
            session_id, agent_id=agent_id, config=config, tools=tools
        )
        return agent
    if live.session_id != session_id:
        raise ReconciliationRequired(
            [
                Unproven(
                    "runtime_state",
                    agent_id,
                    f"the live agent holds session {live.session_id}, not {session_id}",
                )
            ],
            run_id=run_id,
        )
    if live.status != "idle":
        raise ReconciliationRequired(
            [Unproven("runtime_state", agent_id, "the live agent is running")], run_id=run_id
        )
    return live


def _identical_guard(
    state: ExecutionState, latest: ModelCall, batch: Sequence[ToolCallBlock], limit: int
) -> None:
    """The identical-input guard over the whole execution, from the journal (no transcript
    settlement is invented: the batch stays undispatched under the journal's authority)."""
    if not limit:
        return
    counts: dict[str, int] = {}

    def key(call: ToolCallBlock) -> str:
        rendered = json.dumps(dict(call.arguments), sort_keys=True, separators=(",", ":"))
        return f"{call.name}\x00{rendered}"

    for call in state.rounds:
        result = call.result
        if call is latest:
            continue
        if result is not None and result.outcome == "completed" and result.message is not None:
            for block in result.message.tool_calls:
                counts[key(block)] = counts.get(key(block), 0) + 1
    for block in batch:
        counts[key(block)] = counts.get(key(block), 0) + 1
        if counts[key(block)] > limit:
            raise IdenticalToolInputError(
                f"tool {block.name!r} was called with byte-identical input more than {limit} "
                "times in this execution; the journal keeps the batch undispatched"
            )


async def continue_execution(
    rt: Any,
    journal: ExecutionJournal,
    *,
    agent_id: str,
    session_id: str,
    run_id: str | None = None,
    config: AgentConfig | None = None,
    tools: list[Any] | None = None,
    signal: CancelSignal | None = None,
) -> ContinuationResult:
    """Resume the latest (or ``run_id``'s) execution of ``agent_id`` on ``session_id``.

    The runtime must be journaled with ``journal`` (:func:`attach_journal`).  The agent is
    the live one holding that session, or is resumed from its store (``config`` / ``tools``
    as for ``rt.agents.resume``).  Raises :class:`ReconciliationRequired` for whatever the
    journal cannot prove, before changing anything.
    """
    listener = _listener(rt, journal)
    # the host's edge: plain strings, validated and branded here
    agent_id, session_id = _agent_id(agent_id), _session_id(session_id)
    records = await journal.executions(agent_id=agent_id, session_id=session_id)
    if run_id is not None:
        records = tuple(r for r in records if r.run_id == run_id)
    if not records:
        raise UnknownExecutionError(
            f"the journal holds no execution of agent {agent_id!r} on session {session_id!r}"
            + (f" with run {run_id!r}" if run_id else "")
        )
    record = records[-1]
    state = await journal.load(record.run_id)
    if state is None:  # pragma: no cover - listed but unreadable
        raise UnknownExecutionError(f"the journal cannot read execution {record.run_id}")
    agent = await _agent(rt, agent_id, session_id, config, tools, record.run_id)
    plan = _plan(state, agent)
    if plan.items:
        raise ReconciliationRequired(plan.items, run_id=record.run_id)

    latest = plan.latest
    final = (
        latest is not None
        and latest.result is not None
        and latest.result.outcome == "completed"
        and latest.result.message is not None
        and not latest.result.message.tool_calls
    )
    if latest is not None and any(kind in ("dispatch", "rerun") for kind, _, _, _ in plan.steps):
        assert latest.result is not None
        assert latest.result.message is not None
        batch = latest.result.message.tool_calls
        _identical_guard(state, latest, batch, record.limits.identical_input_limit)

    signal = signal or CancelSignal()
    if signal.cancelled:
        raise signal.abort_error()
    restored: list[str] = []
    dispatched: list[str] = []
    reran: list[str] = []
    outcome: Any = None
    # The agent's public continuation seam: its FIFO run slot, its log, the loop's turn.
    async with agent.continue_run(signal) as run:
        listener.tracker.pin(agent.session, record.run_id)
        try:
            if plan.restore_message is not None and latest is not None:
                await run.record(AssistantMessageEvent(message=plan.restore_message))
                restored.append(latest.call_id)
            for kind, block, invocation_id, message in plan.steps:
                if kind == "restore":
                    assert message is not None
                    if block.id not in plan.logged_calls:  # the crash may have come after it
                        await run.record(ToolCallEvent(call=block, invocation_id=invocation_id))
                    await run.record(ToolResultEvent(message=message, invocation_id=invocation_id))
                    restored.append(invocation_id)
                elif kind == "settle" or (kind == "dispatch" and signal.cancelled):
                    await run.record(
                        ToolResultEvent(
                            message=ToolMessage.of(
                                block.id,
                                block.name,
                                "not executed: interrupted",
                                status="not_executed",
                            )
                        )
                    )
                elif kind == "rerun" and _stopped(signal):
                    continue  # still unsettled in the journal: the next continuation re-runs it
                elif kind == "rerun":
                    assert latest is not None
                    await run.record(_rerun_notice(block, invocation_id, plan.reruns))
                    logged = block.id in plan.logged_calls
                    await _dispatch(agent, run, block, latest.call_id, invocation_id, logged)
                    reran.append(invocation_id)
                elif kind == "dispatch":
                    assert latest is not None
                    logged = block.id in plan.logged_calls
                    await _dispatch(agent, run, block, latest.call_id, invocation_id, logged)
                    dispatched.append(invocation_id)
            listener.tracker.pin(agent.session, None)
            if not (final or plan.closed) and not signal.cancelled:
                limit = record.limits.max_rounds
                left = limit - state.rounds_used() if limit else 0
                options = RunOptions(
                    run_id=record.run_id,
                    # the loop reads 0 as "no cap"; a used-up budget must stay used up, which
                    # its check `not max_rounds or rounds < max_rounds` reads from -1
                    max_rounds=left if left > 0 or not limit else -1,
                    tool_only_completion=record.limits.tool_only_completion,
                )
                outcome = await run.continue_turn(options)
        finally:
            listener.tracker.pin(agent.session, None)
    return ContinuationResult(
        agent=agent,
        run_id=record.run_id,
        status="continued" if outcome is not None else "completed",
        restored=tuple(restored),
        reused=tuple(plan.reused),
        dispatched=tuple(dispatched),
        undispatched=tuple(plan.undispatched),
        outcome=outcome,
        rerun=tuple(reran),
    )


def _stopped(signal: CancelSignal) -> bool:
    """Whether the run was cancelled meanwhile (read now: a call before may have seen it)."""
    return signal.cancelled


def _rerun_notice(block: ToolCallBlock, invocation_id: str, reruns: dict[str, int]) -> Notice:
    """What the session log shows (never the model) before a cut-off effect runs again."""
    return Notice(
        source="journal",
        text=(
            f"re-running {block.name} ({invocation_id}), attempt {reruns[invocation_id]}: the "
            "process stopped while it ran, before its result was recorded, and the tool is "
            "idempotent"
        ),
    )


async def _dispatch(
    agent: Agent,
    run: Continuation,
    block: ToolCallBlock,
    model_call_id: InvocationId,
    invocation_id: InvocationId,
    logged: bool = False,
) -> None:
    """Run one never-started call through the public direct-invocation path (``logged``:
    the live history already holds the call's start)."""
    if block.raw_arguments is not None or block.name not in {t.id for t in agent.all_tools()}:
        text = (
            f"The arguments were not a JSON object and could not be read: {block.raw_arguments!r}"
            if block.raw_arguments is not None
            else f"Tool {block.name!r} is not available, so the call was not executed."
        )
        status: Any = "error" if block.raw_arguments is not None else "skipped"
        await run.record(
            ToolResultEvent(message=ToolMessage.of(block.id, block.name, text, status))
        )
        return
    if not logged:
        await run.record(ToolCallEvent(call=block, invocation_id=invocation_id))
    token = RESUMED_CALL.set((model_call_id, CallId(block.id)))
    try:
        # the loop's path: a failure is the call's result, not an exception
        outcome = await agent.settle_call(block, signal=run.signal)
    finally:
        RESUMED_CALL.reset(token)
    message = outcome.message.model_copy(update={"call_id": block.id, "name": block.name})
    await run.record(
        ToolResultEvent(
            message=message,
            invocation_id=invocation_id,
            duration_ms=outcome.duration_ms,
        )
    )


# ---- host reconciliation ----------------------------------------------------------------------


async def reconcile_tool(
    journal: ExecutionJournal, run_id: RunId, invocation_id: InvocationId, message: ToolMessage
) -> None:
    """Record the outcome the host established for an effect the journal could not prove
    (after checking the world); continuation then reuses it and never runs the effect."""
    settlement = ToolSettlement(
        run_id=run_id, invocation_id=invocation_id, message=message, reconciled=True
    )
    await durable(journal.tool_result(settlement), f"tool/result:{run_id}/{invocation_id}")


async def reconcile_model(
    journal: ExecutionJournal,
    run_id: RunId,
    call_id: InvocationId,
    message: AssistantMessage | None = None,
) -> None:
    """Settle a model call the journal could not prove: with the ``message`` the host
    recovered, or (None) as failed -- continuation then asks the model again."""
    settlement = ModelSettlement(
        run_id=run_id,
        call_id=call_id,
        outcome="completed" if message is not None else "failed",
        message=message,
        error=None if message is not None else "settled by the host without a response",
        reconciled=True,
    )
    await durable(journal.model_result(settlement), f"model/result:{run_id}/{call_id}")
