"""One tool round of a turn: dispatch a reply's calls, in parallel groups, and record them.

Every call gets exactly one result, in call order: executed, refused, skipped (an unknown
tool), not executed (a stop, a cancellation, a guard) or interrupted while running.
Consecutive calls that may overlap run as one :class:`_Group`, one task per call; each
known call is a :class:`~agentrig.agent._invocation.ToolInvocation`, recorded as it is once
it ran (a :class:`~agentrig.agent._dispatch.CallOutcome` is built only when one is read).

A call that suspends the run (:class:`~agentrig.errors.ExecutionSuspended`: it waits for an
outside answer) is no failure of its group: the calls already running beside it finish and
keep their results, the calls after it do not start, and the suspension is raised once the
group is done -- unless another call failed (that failure wins) or the caller cancelled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias, final

import anyio
import anyio.abc

from agentrig.agent._dispatch import CallOutcome, canonical_input, is_concurrent, unknown_tool
from agentrig.agent._invocation import ToolInvocation
from agentrig.agent._observations import observe_tool_call
from agentrig.agent._results import IdenticalToolInputError
from agentrig.agent._spill import cap_result
from agentrig.agent._turn_state import OpenCalls, TurnContext, TurnOutcome, refusal
from agentrig.lifecycle import ExecutionSuspended
from agentrig.llm import ToolCallBlock, ToolMessage, ToolResultChunk
from agentrig.session import ToolCallEvent, ToolResultEvent
from agentrig.tools import Tool

__all__ = ["ToolRound"]

CANCELLED_WHILE_RUNNING = "interrupted while running: the run was cancelled by its caller"

#: a settled call: one that did not run, or the invocation that ran (read alike)
Settled: TypeAlias = CallOutcome | ToolInvocation


@final
class ToolRound:
    """The tool rounds of one turn, and the guards that span them."""

    __slots__ = ("calls", "ctx", "identical", "outcome", "unknown_streak")

    def __init__(self, ctx: TurnContext, outcome: TurnOutcome, calls: OpenCalls) -> None:
        self.ctx = ctx
        self.outcome = outcome
        self.calls = calls
        self.identical: dict[str, int] = {}  # canonical input -> calls in this turn
        self.unknown_streak = 0  # consecutive rounds that called only unknown tools

    async def run(self, calls: Sequence[ToolCallBlock], tools: Sequence[Tool]) -> bool:
        """Dispatch a reply's calls, in order; True when a result concludes the turn."""
        ctx = self.ctx
        agent = ctx.agent
        repeated = self._repeated(calls)
        if repeated is not None:
            await self._refuse_repeated(*repeated)
        every = ctx.port.offer.tools
        resolved = [_resolve(call.name, tools, every) for call in calls]
        parallel = agent.config.parallel_tool_calls and len(calls) > 1
        concluded = False
        index = 0
        while index < len(calls):
            if ctx.signal.cancelled or agent.stop_requested is not None:
                break  # settled below as not executed (interrupted, or with the stop's reason)
            end = index + 1
            if parallel and _may_overlap(resolved[index]):
                while end < len(calls) and _may_overlap(resolved[end]):
                    end += 1
            if end - index == 1:
                concludes = await self._run_one(index, calls[index], resolved[index], tools)
            else:
                group = _Group(self, range(index, end), calls, resolved, tools)
                concludes = await group.run()
            concluded = concluded or concludes
            index = end
        if self.calls:  # calls left without a result: a stop's or a cancellation's
            stopped = agent.stop_requested
            await self.calls.settle(
                "not executed: interrupted" if stopped is None else f"not executed: {stopped}"
            )
        only_unknown = resolved.count(None) == len(resolved)
        self.unknown_streak = self.unknown_streak + 1 if only_unknown else 0
        return concluded

    def _repeated(self, calls: Sequence[ToolCallBlock]) -> tuple[ToolCallBlock, int] | None:
        """Count the batch's inputs; the first call whose input repeats too often, and the
        limit (None: the batch may run)."""
        limit = self.ctx.agent.config.identical_input_limit
        if not limit:
            return None
        identical = self.identical
        for call in calls:
            key = canonical_input(call)
            identical[key] = seen = identical.get(key, 0) + 1
            if seen > limit:
                return call, limit
        return None

    async def _refuse_repeated(self, call: ToolCallBlock, limit: int) -> None:
        """Refuse the whole batch, before any body runs: an input repeats too often."""
        if not self.ctx.agent.journaled:  # a journal proves these never started
            await self.calls.settle(
                f"not executed: {call.name} was called with identical input "
                f"more than {limit} times in this run"
            )
        raise IdenticalToolInputError(
            f"tool {call.name!r} was called with byte-identical input more than "
            f"{limit} times in one run; the agent is not making progress"
        )

    async def _run_one(
        self, index: int, call: ToolCallBlock, tool: Tool | None, offered: Sequence[Tool]
    ) -> bool:
        """Dispatch one call and record its result (a call that must run on its own), inside
        its tracing scope."""
        ctx = self.ctx
        trace = ctx.trace
        scope = trace.open("tool_call", ctx.agent.id, call.name) if trace is not None else None
        try:
            if tool is None:
                return await self.record(index, call, _unknown(call, offered))
            await ctx.port.write(ToolCallEvent, call=call, invocation_id=self.position(index))
            try:
                invocation = ToolInvocation(ctx.agent, tool, call, ctx.signal)
                refused = await invocation.check(ctx.port.gate)  # then it runs, unless refused
                settled = refused if refused is not None else await invocation.execute()
            except anyio.get_cancelled_exc_class():
                # the caller cancelled while the tool ran: the call still gets its result
                with anyio.CancelScope(shield=True):
                    await self.cancelled_while_running(index, call)
                raise
            self.outcome.tool_results += 1
            return await self.record(index, call, settled)
        finally:
            if scope is not None:
                scope.close()

    def position(self, index: int) -> str:
        """``turn.step.index``: where call ``index`` of this round sits in the log."""
        return f"{self.ctx.position}.{index}"

    async def enter(self, index: int, call: ToolCallBlock) -> None:
        """Log the ``tool/call`` event of a known call about to be dispatched."""
        await self.ctx.port.write(ToolCallEvent, call=call, invocation_id=self.position(index))

    async def cancelled_while_running(self, index: int, call: ToolCallBlock) -> None:
        self.calls.close(index)
        message = ToolMessage.of(call.id, call.name, CANCELLED_WHILE_RUNNING, status="error")
        await self.ctx.port.append(ToolResultEvent(message=message))

    async def record(
        self, index: int, call: ToolCallBlock, settled: Settled, *, count: bool = False
    ) -> bool:
        """Log one call's result, observe it, stream it; True when it concludes the turn."""
        ctx = self.ctx
        if count and settled.invocation_id:
            self.outcome.tool_results += 1
        message = settled.message
        stored = None
        limit = ctx.agent.config.tool_result_max_bytes
        if limit and settled.executed and len(message.text) > limit // 4:  # maybe too big
            message, stored = await cap_result(ctx.agent, message, settled.invocation_id)
        await ctx.port.write(
            ToolResultEvent,
            message=message,
            invocation_id=settled.invocation_id or None,
            duration_ms=settled.duration_ms,
        )
        self.calls.close(index)  # from here on the call has its result
        if not settled.executed or settled.failure is not None:
            refused = refusal(call, _outcome_of(settled))
            if refused is not None:
                self.outcome.refused.append(refused)
        if stored is not None:
            await ctx.port.append(stored)  # links the call to its whole result
        hooks = ctx.port.runtime.hooks
        if hooks.has_listeners("observe"):
            observe_tool_call(ctx, hooks, call, _outcome_of(settled))
        if ctx.emit is not None:
            await ctx.emit(
                ToolResultChunk(
                    call_id=call.id, name=call.name, status=message.status, text=message.text
                )
            )
        return settled.concludes_turn


@final
class _Group:
    """Consecutive calls that may overlap, run concurrently, one task per call.

    The tasks hand over to each other in call order twice: validation and the gate
    (permission rules, ``PreToolUse`` hooks, approvals) run one call at a time, so no two
    questions are open at once and a call that passed starts executing while the next one
    is checked; results are recorded in call order.  Each call's work -- gate, execution,
    its result, its observation -- happens in its own task, inside its own tracing scope.
    A call that suspends the run stops the calls not started yet, not the running ones.
    """

    __slots__ = (
        "calls",
        "concludes",
        "entered",
        "failure",
        "gated",
        "indexes",
        "offered",
        "outcomes",
        "recorded",
        "resolved",
        "round",
        "waiting",
    )

    def __init__(
        self,
        tool_round: ToolRound,
        indexes: range,
        calls: Sequence[ToolCallBlock],
        resolved: Sequence[Tool | None],
        offered: Sequence[Tool],
    ) -> None:
        self.round = tool_round
        self.indexes = indexes
        self.calls = calls
        self.resolved = resolved
        self.offered = offered
        self.gated = {i: anyio.Event() for i in indexes}  # call i is through the gate
        self.recorded = {i: anyio.Event() for i in indexes}  # call i's result is settled
        self.outcomes: dict[int, Settled] = {}
        self.entered: set[int] = set()  # calls whose tool/call event is logged
        self.concludes: list[bool] = []
        # an error that ends the run (a journal write, a failing gate) is raised as itself,
        # not wrapped in the task group's exception group
        self.failure: list[Exception] = []
        # a call waiting for an outside answer (its index and the suspension)
        self.waiting: list[tuple[int, ExecutionSuspended]] = []

    async def run(self) -> bool:
        try:
            async with anyio.create_task_group() as group:
                for index in self.indexes:
                    group.start_soon(self._traced, index, group)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._settle_cancelled()
            raise
        if self.failure:
            raise self.failure[0]  # a failure (a journal write ...) wins over a wait
        if self.waiting and not self.round.ctx.signal.cancelled:
            raise self.waiting[0][1]  # the siblings that ran are recorded; the rest pends
        return any(self.concludes)

    async def _traced(self, index: int, group: anyio.abc.TaskGroup) -> None:
        ctx = self.round.ctx
        trace = ctx.trace
        name = self.calls[index].name
        scope = trace.open("tool_call", ctx.agent.id, name) if trace is not None else None
        try:
            await self._one(index)
        except ExecutionSuspended as exc:
            # its siblings that are running go on; the ones after it never start
            self.waiting.append((index, exc))
            self.gated[index].set()
            self.recorded[index].set()
        except Exception as exc:
            self.failure.append(exc)
            group.cancel_scope.cancel()
        finally:
            if scope is not None:
                scope.close()

    async def _one(self, index: int) -> None:
        ctx = self.round.ctx
        call, tool = self.calls[index], self.resolved[index]
        first = index == self.indexes[0]
        if not first:
            await self.gated[index - 1].wait()
        if ctx.signal.cancelled or ctx.agent.stop_requested is not None or self.waiting:
            # not started: settled as not executed once the group is done (or left pending
            # for continuation when the run suspends)
            self.gated[index].set()
            self.recorded[index].set()
            return
        settled = await self._dispatch(index, call, tool)
        self.outcomes[index] = settled
        if not first:
            await self.recorded[index - 1].wait()
        self.concludes.append(await self.round.record(index, call, settled, count=True))
        self.recorded[index].set()

    async def _dispatch(self, index: int, call: ToolCallBlock, tool: Tool | None) -> Settled:
        """Through the gate (then the next call may be checked), then run alongside."""
        if tool is None:
            self.gated[index].set()
            return _unknown(call, self.offered)
        ctx = self.round.ctx
        self.entered.add(index)
        await self.round.enter(index, call)
        invocation = ToolInvocation(ctx.agent, tool, call, ctx.signal)
        refused = await invocation.check(ctx.port.gate)
        self.gated[index].set()
        if refused is not None:
            return refused
        return await invocation.execute(alongside=True)

    async def _settle_cancelled(self) -> None:
        """The caller cancelled mid-batch: what finished keeps its result, what was running
        gets "interrupted while running"; calls never entered are settled later."""
        tool_round = self.round
        open_calls = tool_round.calls
        suspended = {i for i, _ in self.waiting}
        for index in self.indexes:
            call = self.calls[index]
            if index not in open_calls:
                continue  # its result is logged already
            if index in suspended:  # it never ran: the cancellation ends its wait
                await open_calls.settle_one(index, call, "not executed: interrupted")
            elif index in self.outcomes:
                await tool_round.record(index, call, self.outcomes[index], count=True)
            elif index in self.entered:
                await tool_round.cancelled_while_running(index, call)
            else:
                break


def _may_overlap(tool: Tool | None) -> bool:
    # an unknown tool runs nothing (its result is a skip), so it does not split a group
    return tool is None or is_concurrent(tool)


def _resolve(name: str, offered: Sequence[Tool], every: Mapping[str, Tool]) -> Tool | None:
    """The tool a call names: the one offered under that name, else the agent's own."""
    for tool in offered:
        if tool.id == name:
            return tool
    return every.get(name)


def _unknown(call: ToolCallBlock, offered: Sequence[Tool]) -> CallOutcome:
    return CallOutcome(unknown_tool(call, [tool.id for tool in offered]), executed=False)


def _outcome_of(settled: Settled) -> CallOutcome:
    return settled if isinstance(settled, CallOutcome) else settled.outcome()
