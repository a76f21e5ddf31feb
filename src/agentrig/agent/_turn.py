"""One turn of the agent loop: its step loop and how it ends.

claim input → ``pre_step`` waterfall → model round (:mod:`._model_call`: ``request_config``
waterfall, context guard, streamed provider call) → tool round (:mod:`._tool_round`) →
next step, until no tool call or steering remains; then ``turn_stopping`` and one last
drain.  A spent tool budget or repeated unknown tools end the turn with a forced final
answer (one call without tools).

Invariant kept at every exit: each tool call in the log has exactly one tool result.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import anyio

from agentrig.agent._model_call import ModelCall
from agentrig.agent._observations import observe_turn
from agentrig.agent._results import DeadlineExceededError, ToolChoiceViolationError
from agentrig.agent._tool_round import ToolRound
from agentrig.agent._turn_state import Emit, Interrupted, TurnOutcome
from agentrig.cancel import CancelSignal, is_abort
from agentrig.errors import ExecutionControlError, ExecutionSuspended, error_info
from agentrig.kernel.payloads import Enter, PreStep, PreStepDecision, Reject, TurnStopping
from agentrig.llm import AssistantMessage, EmptyCompletionError, TextBlock, UserMessage
from agentrig.session import (
    AssistantMessageEvent,
    SteeringMessage,
    StepEnd,
    StepStart,
    ToolResultEvent,
    TurnEnd,
    TurnEndReason,
    TurnStart,
    TurnTrigger,
    UserMessageEvent,
)

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent
    from agentrig.agent._driver import RunOptions
    from agentrig.kernel.tracing import TraceContext

__all__ = [
    "FORCED_SUMMARY_FALLBACK",
    "FORCED_SUMMARY_INSTRUCTION",
    "run_turn",
]

FORCED_SUMMARY_INSTRUCTION = (
    "The tool budget for this turn is used up. Answer now from what you have, without "
    "calling tools."
)
FORCED_SUMMARY_FALLBACK = "No final answer was produced before the tool budget ran out."
UNKNOWN_TOOLS_INSTRUCTION = (
    "These tool calls were never executed because the tools do not exist: {calls}. "
    "Answer now without calling tools."
)
UNKNOWN_TOOL_ROUNDS_LIMIT = 2
SUSPENDED_UNJOURNALED = (
    "not executed: the run suspended without an execution journal, so nothing can continue it"
)


class _Turn(ModelCall, ToolRound):
    """A turn: the model-call and tool-round parts, driven step by step."""

    def run(self, first: tuple[UserMessage, ...], trigger: TurnTrigger) -> Awaitable[TurnOutcome]:
        trace = self.trace
        if trace is None:  # the turn itself, without a coroutine around it
            return self._run(first, trigger)
        return self._traced(trace, first, trigger)

    async def _traced(
        self, trace: TraceContext, first: tuple[UserMessage, ...], trigger: TurnTrigger
    ) -> TurnOutcome:
        scope = trace.open("turn", self.agent.id)
        try:
            return await self._run(first, trigger)
        finally:
            scope.close()

    async def _run(self, first: tuple[UserMessage, ...], trigger: TurnTrigger) -> TurnOutcome:
        agent = self.agent
        self.turn = agent._next_turn()
        self.trigger = trigger
        await agent._ensure_system_prompt()
        self.started = (time.time(), time.perf_counter())
        writing = self.write(TurnStart, turn=self.turn, trigger=trigger, run_id=self.options.run_id)
        if writing is not None:
            await writing
        batch = first + agent.inbox.claim(turn_boundary=False)
        try:
            reason = await self._steps(batch)
        except Interrupted:
            await self.close_interrupted()
            return self.outcome
        except BaseException as exc:
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                # cancelled by the caller: record the run as an aborted one, then re-raise
                self.outcome.interrupted = True
                with anyio.CancelScope(shield=True):
                    await self.close_interrupted()
                raise
            suspended = isinstance(exc, ExecutionSuspended)
            if not (isinstance(exc, ExecutionControlError) or self.agent.journaled):
                # a journaled run keeps its recovery authority: no transcript-only settlement
                await self.settle_open_calls("not executed: the turn failed")
            elif suspended and not self.agent.journaled:
                # no journal, no continuation: nothing would ever answer the pending calls
                await self.settle_open_calls(SUSPENDED_UNJOURNALED)
            if self.step:
                await self.log(StepEnd(turn=self.turn, step=self.step))
            if suspended:
                # waiting for an outside answer: its calls stay open for continuation
                self.outcome.stop_reason = str(exc)
                await self.end_turn("suspended")
            else:
                await self.end_turn("interrupted" if is_abort(exc, self.signal) else "failed", exc)
            raise
        await self.end_turn(reason)
        return self.outcome

    async def close_interrupted(self) -> None:
        """End an aborted turn: every open call settled, the open step closed, then turn/end."""
        await self.settle_open_calls()
        if self._step_open():
            await self.log(StepEnd(turn=self.turn, step=self.step))
        await self.end_turn("interrupted")

    async def end_turn(self, reason: TurnEndReason, error: BaseException | None = None) -> None:
        """Log turn/end, then observe the finished turn (``turn``)."""
        deadline = self.signal.reason
        if reason == "interrupted" and isinstance(deadline, DeadlineExceededError):
            self.outcome.stop_reason = self.outcome.stop_reason or str(deadline)
        info = error_info(error) if error is not None else None
        writing = self.write(
            TurnEnd,
            turn=self.turn,
            reason=reason,
            error=info.to_dict() if info else None,
            detail=self.outcome.stop_reason,
        )
        if writing is not None:
            await writing
        observe_turn(self, reason, error, info.code if info else None)

    def _step_open(self) -> bool:
        # The last step marker of this turn tells (a cancellation can land between a step's
        # start and any of the loop's own StepEnd writes).
        for event in reversed(self.agent.session.events):
            data: Any = event.data
            if isinstance(data, StepEnd | StepStart):
                return isinstance(data, StepStart) and data.turn == self.turn
            if isinstance(data, TurnStart):
                return False
        return False

    def _stopped(self) -> bool:
        """Did someone (a hook's ``continue: false``) ask to end the run here?"""
        reason = self.agent.stop_requested
        if reason is None:
            return False
        self.outcome.stop_reason = reason
        return True

    async def _steps(self, batch: tuple[UserMessage, ...]) -> Any:
        agent = self.agent
        hooks = agent.runtime.hooks
        max_rounds = self.options.max_rounds
        tool_choice = self.options.tool_choice
        while True:
            if self._stopped():
                return "rejected"
            self.step += 1
            if hooks.has_listeners("pre_step"):
                decision = await self._pre_step(batch)
            else:  # what the waterfall's end gives, without a payload or a coroutine
                decision = Enter(messages=batch)
            if isinstance(decision, Reject):
                self.step -= 1
                self.outcome.stop_reason = decision.reason
                return "rejected"
            if (writing := self.write(StepStart, turn=self.turn, step=self.step)) is not None:
                await writing
            for entered in decision.messages:
                if entered.source == "steer":
                    await self.log(SteeringMessage(message=entered))
                elif (writing := self.write(UserMessageEvent, message=entered)) is not None:
                    await writing
            budget_left = not max_rounds or self.outcome.rounds < max_rounds
            if self.unknown_streak >= UNKNOWN_TOOL_ROUNDS_LIMIT:
                await self._forced_final(
                    UNKNOWN_TOOLS_INSTRUCTION.format(calls=self._unexecuted_calls())
                )
                await self.log(StepEnd(turn=self.turn, step=self.step))
                return "completed"
            if not budget_left:
                if self.options.tool_only_completion:
                    await self.log(StepEnd(turn=self.turn, step=self.step))
                    self._check_not_empty()
                    return "budget"
                await self._forced_final(FORCED_SUMMARY_INSTRUCTION)
                await self.log(StepEnd(turn=self.turn, step=self.step))
                return "budget"
            # re-read every round: a tool loaded in round N is offered in round N + 1
            tools = [] if tool_choice == "none" else agent.offered_tools()
            message = await self.model_round(tools=tools, tool_choice=tool_choice)
            calls = message.tool_calls
            if calls:
                if tool_choice == "none":
                    await self.settle_open_calls("not executed: tool_choice is none for this run")
                    raise ToolChoiceViolationError(
                        "the model called a tool although tool_choice='none' was requested"
                    )
                concludes = await self.run_calls(calls, tools)
                if (writing := self.write(StepEnd, turn=self.turn, step=self.step)) is not None:
                    await writing
                if self.signal.cancelled:
                    # aborted during the tool round: open no further step, and leave
                    # pending input for a later turn
                    self.outcome.interrupted = True
                    return "interrupted"
                if self._stopped():
                    return "rejected"
                batch = agent.inbox.claim(turn_boundary=False)
                if concludes and not batch:
                    return "completed"
                continue
            if (writing := self.write(StepEnd, turn=self.turn, step=self.step)) is not None:
                await writing
            if hooks.has_listeners("turn_stopping"):  # its payload built only then
                await hooks.awaited(
                    "turn_stopping",
                    TurnStopping(
                        agent=agent, turn=self.turn, last_message=message, signal=self.signal
                    ),
                )
            if self.signal.cancelled:
                self.outcome.interrupted = True
                return "interrupted"
            if self._stopped():
                return "rejected"
            batch = agent.inbox.claim(turn_boundary=False)
            if batch:
                continue  # steering arrived: another step
            self._check_not_empty()
            return "completed"

    def _check_not_empty(self) -> None:
        final = self.outcome.final
        has_text = final is not None and bool(final.text.strip())
        if not has_text and not (self.options.tool_only_completion and self.outcome.tool_results):
            raise EmptyCompletionError(
                "the model ended the turn with neither text nor a tool result",
            )

    def _unexecuted_calls(self) -> str:
        names: list[str] = []
        for event in reversed(self.agent.session.events[-50:]):
            data: Any = event.data
            if isinstance(data, ToolResultEvent) and data.message.status == "skipped":
                names.append(data.message.name)
        return ", ".join(sorted(set(names))) or "unknown"

    async def _forced_final(self, instruction: str) -> None:
        """One call without tools; its tool calls are not dispatched; empty → fallback text."""
        message = await self.model_round(
            tools=(), tool_choice="none", extra_instruction=instruction
        )
        if message.tool_calls:
            await self.settle_open_calls(
                "not executed: the final answer was requested without tools"
            )
        if not message.text.strip():
            fallback = AssistantMessage(
                content=(TextBlock(text=FORCED_SUMMARY_FALLBACK),), stop_reason="end"
            )
            await self.log(AssistantMessageEvent(message=fallback))
            self.outcome.final = fallback

    async def _pre_step(self, batch: tuple[UserMessage, ...]) -> PreStepDecision:
        payload = PreStep(
            agent=self.agent, turn=self.turn, step=self.step, messages=batch, signal=self.signal
        )
        return await self.agent.runtime.hooks.waterfall("pre_step", payload, _enter_batch)


async def _enter_batch(payload: PreStep) -> PreStepDecision:
    return Enter(messages=payload.messages)  # the end of the pre_step waterfall


def run_turn(
    agent: Agent,
    first: tuple[UserMessage, ...],
    trigger: TurnTrigger,
    options: RunOptions,
    signal: CancelSignal,
    emit: Emit | None,
) -> Awaitable[TurnOutcome]:
    """One turn of ``agent`` (await it)."""
    return _Turn(agent, options, signal, emit).run(first, trigger)
