"""One tool round of a turn: dispatch a reply's calls, in parallel groups, and record them.

Every call gets exactly one result, in call order: executed, refused, skipped (an unknown
tool), not executed (a stop, a cancellation, a guard) or interrupted while running.
Consecutive calls that may overlap run as one group, one task per call.

A call that suspends the run (:class:`~agentrig.errors.ExecutionSuspended`: it waits for an
outside answer) is no failure of its group: the calls already running beside it finish and
keep their results, the calls after it do not start, and the suspension is raised once the
group is done -- unless another call failed (that failure wins) or the caller cancelled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import anyio
import anyio.abc

from agentrig.agent._dispatch import (
    CallOutcome,
    canonical_input,
    execute_call,
    is_concurrent,
    not_executed,
    prepare_call,
    unknown_tool,
)
from agentrig.agent._observations import observe_tool_call
from agentrig.agent._results import IdenticalToolInputError, RefusedCall
from agentrig.agent._spill import cap_result
from agentrig.agent._turn_state import TurnState, refusal
from agentrig.errors import ExecutionSuspended
from agentrig.llm import ToolCallBlock, ToolMessage, ToolResultChunk
from agentrig.session import ToolCallEvent, ToolResultEvent
from agentrig.tools import Tool

__all__ = ["ToolRound"]


class ToolRound(TurnState):
    """The tool-call part of a turn (a mixin of :class:`~._turn_state.TurnState`)."""

    async def run_calls(self, calls: Sequence[ToolCallBlock], tools: Sequence[Tool]) -> bool:
        """Dispatch a round's calls (a reply's, in order); True when a result concludes the turn."""
        by_name: dict[str, Tool] = {t.id: t for t in tools}
        all_tools = self.agent._offer.tools
        concluded = False
        # identical-input guard: refuse the whole batch before any body runs
        limit = self.agent.config.identical_input_limit
        if limit:
            for call in calls:
                key = canonical_input(call)
                self.identical[key] = self.identical.get(key, 0) + 1
                if self.identical[key] > limit:
                    if not self.agent.journaled:  # a journal proves these never started
                        await self.settle_open_calls(
                            f"not executed: {call.name} was called with identical input "
                            f"more than {limit} times in this run"
                        )
                    raise IdenticalToolInputError(
                        f"tool {call.name!r} was called with byte-identical input more than "
                        f"{limit} times in one run; the agent is not making progress"
                    )
        parallel = self.agent.config.parallel_tool_calls and len(calls) > 1
        resolved = [by_name.get(call.name) or all_tools.get(call.name) for call in calls]
        known_round = any(tool is not None for tool in resolved)
        index = 0
        while index < len(calls):
            if self.signal.cancelled or self.agent.stop_requested is not None:
                break  # settled below as not executed (interrupted, or with the stop's reason)
            end = index + 1
            if parallel and _may_overlap(resolved[index]):
                while end < len(calls) and _may_overlap(resolved[end]):
                    end += 1
            if end - index == 1:
                trace = self.trace
                scope = trace.open("tool_call", self.agent.id) if trace is not None else None
                try:
                    concludes = await self.run_one(index, calls[index], resolved[index], by_name)
                finally:
                    if scope is not None:
                        scope.close()
            else:
                concludes = await self.run_group(range(index, end), calls, resolved, by_name)
            concluded = concluded or concludes
            index = end
        if self.open_calls:  # calls left without a result: a stop's or a cancellation's
            stopped = self.agent.stop_requested
            await self.settle_open_calls(
                "not executed: interrupted" if stopped is None else f"not executed: {stopped}"
            )
        self.unknown_streak = 0 if known_round else self.unknown_streak + 1
        return concluded

    async def run_one(
        self, index: int, call: ToolCallBlock, tool: Tool | None, offered: Mapping[str, Tool]
    ) -> bool:
        """Dispatch one call and record its result (a call that must run on its own)."""
        if tool is None:
            return await self.record(index, call, _unknown(call, offered))
        invocation = f"{self.turn}.{self.step}.{index}"
        if (writing := self.write(ToolCallEvent, call=call, invocation_id=invocation)) is not None:
            await writing
        try:  # dispatch_call, unrolled: one coroutine less per call
            outcome = await prepare_call(self.agent, tool, call, self.signal, self.agent._gate)
            if not isinstance(outcome, CallOutcome):
                outcome = await execute_call(self.agent, outcome, self.signal)
        except anyio.get_cancelled_exc_class():
            # the caller cancelled while the tool ran: the call still gets its result
            self.open_calls.pop(index, None)
            with anyio.CancelScope(shield=True):
                await self.log(ToolResultEvent(message=_cancelled_while_running(call)))
            raise
        self.outcome.tool_results += 1
        return await self.record(index, call, outcome)

    async def run_group(
        self,
        indexes: range,
        calls: Sequence[ToolCallBlock],
        resolved: Sequence[Tool | None],
        offered: Mapping[str, Tool],
    ) -> bool:
        """Run consecutive calls that may overlap concurrently, one task per call.

        The tasks hand over to each other in call order twice: validation and the gate
        (permission rules, ``PreToolUse`` hooks, approvals) run one call at a time, so no two
        questions are open at once and a call that passed starts executing while the next
        one is checked; results are recorded in call order.  Each call's work -- gate,
        execution, its result, its observation -- happens in its own task, inside its own
        tracing scope.  A call that suspends the run stops the calls not started yet, not
        the running ones (see the module's docstring).
        """
        agent = self.agent
        first = indexes[0]
        gated = {i: anyio.Event() for i in indexes}  # call i is through the gate
        recorded = {i: anyio.Event() for i in indexes}  # call i's result is settled
        outcomes: dict[int, CallOutcome] = {}
        entered: set[int] = set()  # calls whose tool/call event is logged
        concludes: list[bool] = []
        # an error that ends the run (a journal write, a failing gate) is raised as itself,
        # not wrapped in the task group's exception group
        failure: list[Exception] = []
        # a call waiting for an outside answer (its index and the suspension)
        waiting: list[tuple[int, ExecutionSuspended]] = []

        async def one(index: int, group: anyio.abc.TaskGroup) -> None:
            call, tool = calls[index], resolved[index]
            trace = self.trace
            scope = trace.open("tool_call", agent.id) if trace is not None else None
            try:
                if index != first:
                    await gated[index - 1].wait()
                if self.signal.cancelled or agent.stop_requested is not None or waiting:
                    # not started: settled as not executed once the group is done (or left
                    # pending for continuation when the run suspends)
                    gated[index].set()
                    recorded[index].set()
                    return
                if tool is None:
                    outcome = _unknown(call, offered)
                    gated[index].set()
                else:
                    entered.add(index)
                    await self.log(
                        ToolCallEvent(call=call, invocation_id=f"{self.turn}.{self.step}.{index}")
                    )
                    ready = await prepare_call(agent, tool, call, self.signal, agent._gate)
                    gated[index].set()
                    if isinstance(ready, CallOutcome):
                        outcome = ready
                    else:
                        outcome = await execute_call(agent, ready, self.signal, alongside=True)
                outcomes[index] = outcome
                if index != first:
                    await recorded[index - 1].wait()
                concludes.append(await self.record(index, call, outcome, count=True))
                recorded[index].set()
            except ExecutionSuspended as exc:
                # its siblings that are running go on; the ones after it never start
                waiting.append((index, exc))
                gated[index].set()
                recorded[index].set()
            except Exception as exc:
                failure.append(exc)
                group.cancel_scope.cancel()
            finally:
                if scope is not None:
                    scope.close()

        try:
            async with anyio.create_task_group() as group:
                for index in indexes:
                    group.start_soon(one, index, group)
        except anyio.get_cancelled_exc_class():
            # the caller cancelled mid-batch: what finished keeps its result, what was running
            # gets "interrupted while running"; calls never entered are settled later
            suspended = {i for i, _ in waiting}
            with anyio.CancelScope(shield=True):
                for index in indexes:
                    if index not in self.open_calls:
                        continue  # its result is logged already
                    if index in suspended:  # it never ran: the cancellation ends its wait
                        self.open_calls.pop(index, None)
                        message = not_executed(calls[index])
                        await self.log(ToolResultEvent(message=message))
                        self.outcome.refused.append(
                            RefusedCall(message.call_id, message.name, "not_executed", message.text)
                        )
                    elif index in outcomes:
                        await self.record(index, calls[index], outcomes[index], count=True)
                    elif index in entered:
                        self.open_calls.pop(index, None)
                        await self.log(
                            ToolResultEvent(message=_cancelled_while_running(calls[index]))
                        )
                    else:
                        break
            raise
        if failure:
            raise failure[0]  # a failure (a journal write ...) wins over a wait
        if waiting and not self.signal.cancelled:
            raise waiting[0][1]  # the siblings that ran are recorded; the rest stays pending
        return any(concludes)

    async def record(
        self, index: int, call: ToolCallBlock, outcome: CallOutcome, *, count: bool = False
    ) -> bool:
        """Log one call's result, observe it, stream it; True when it concludes the turn."""
        if count and outcome.invocation_id:
            self.outcome.tool_results += 1
        message = outcome.message
        stored = None
        limit = self.agent.config.tool_result_max_bytes
        if limit and outcome.executed and len(message.text) > limit // 4:  # maybe too big
            message, stored = await cap_result(self.agent, message, outcome.invocation_id)
        writing = self.write(
            ToolResultEvent,
            message=message,
            invocation_id=outcome.invocation_id or None,
            duration_ms=outcome.duration_ms,
        )
        if writing is not None:
            await writing
        self.open_calls.pop(index, None)  # from here on the call has its result
        if not outcome.executed or outcome.failure is not None:
            refused = refusal(call, outcome)
            if refused is not None:
                self.outcome.refused.append(refused)
        if stored is not None:
            await self.log(stored)  # links the call to its whole result
        hooks = self.agent.runtime.hooks
        if hooks.has_listeners("observe"):
            observe_tool_call(self, hooks, call, outcome)
        if self.emit is not None:
            waiting = self.emit(
                ToolResultChunk(
                    call_id=call.id, name=call.name, status=message.status, text=message.text
                )
            )
            if waiting is not None:
                await waiting
        return outcome.concludes_turn


def _may_overlap(tool: Tool | None) -> bool:
    # an unknown tool runs nothing (its result is a skip), so it does not split a group
    return tool is None or is_concurrent(tool)


def _unknown(call: ToolCallBlock, offered: Mapping[str, Tool]) -> CallOutcome:
    return CallOutcome(unknown_tool(call, list(offered)), executed=False)


def _cancelled_while_running(call: ToolCallBlock) -> ToolMessage:
    text = "interrupted while running: the run was cancelled by its caller"
    return ToolMessage.of(call.id, call.name, text, status="error")
