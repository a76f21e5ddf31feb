"""One turn of the agent loop: its step loop and how it ends.

claim input → ``pre_step`` waterfall → model round (:class:`~._model_call.ModelRound`:
``request_config`` waterfall, context guard, streamed provider call) → tool round
(:class:`~._tool_round.ToolRound`) → next step, until no tool call or steering remains;
then ``turn_stopping`` and one last drain.  A spent tool budget or repeated unknown tools
end the turn with a forced final answer (one call without tools).

The objects of a turn and their seams:

* :class:`Turn` owns the step loop and one each of :class:`~._turn_state.TurnContext`
  (whose turn, which run, its position), :class:`~._turn_state.TurnOutcome` (what it
  produced), :class:`~._turn_state.OpenCalls` (calls still without a result), a
  :class:`~._model_call.ModelRound` and a :class:`~._tool_round.ToolRound`; the rounds get
  the three shared objects explicitly, never the turn itself.
* Everything a turn does to its agent goes through :class:`~._port.AgentPort` (the log,
  the turn counter, the tool offer and gate), never through the handle's private members.
* A known tool call is a :class:`~._invocation.ToolInvocation` (check, then execute).

Invariant kept at every exit: each tool call in the log has exactly one tool result.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, final

import anyio

from agentrig.agent._model_call import ModelRound
from agentrig.agent._observations import observe_turn
from agentrig.agent._results import (
    DeadlineExceededError,
    ModelResponseFailure,
    ResponseFailureKind,
    ToolChoiceViolationError,
)
from agentrig.agent._tool_round import ToolRound
from agentrig.agent._turn_state import (
    Emit,
    Interrupted,
    OpenCalls,
    TurnContext,
    TurnOutcome,
)
from agentrig.cancel import CancelSignal, is_abort
from agentrig.errors import error_info
from agentrig.lifecycle import (
    Enter,
    ExecutionControlError,
    ExecutionSuspended,
    PreStep,
    PreStepDecision,
    Reject,
    TurnStopping,
)
from agentrig.llm import (
    AssistantMessage,
    EmptyCompletionError,
    TextBlock,
    ToolCallBlock,
    UserMessage,
)
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
from agentrig.tools import Tool

if TYPE_CHECKING:
    from agentrig.agent._driver import RunOptions
    from agentrig.agent._port import AgentPort

__all__ = [
    "FORCED_SUMMARY_FALLBACK",
    "FORCED_SUMMARY_INSTRUCTION",
    "Turn",
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

CLASSIFIED_TEXT = "not executed: the model's reply was classified as a failure"
#: the stop reasons a classifying agent ends a run on, and the failure each reports
_CLASSIFIED: dict[str, ResponseFailureKind] = {
    "refusal": "refusal",
    "content_filter": "content_filter",
    "error": "error",
}

Batch = tuple[UserMessage, ...]


@final
class Turn:
    """A turn: its step loop over a model round and a tool round."""

    __slots__ = ("calls", "ctx", "model", "outcome", "tools")

    def __init__(
        self, port: AgentPort, options: RunOptions, signal: CancelSignal, emit: Emit | None
    ) -> None:
        self.ctx = ctx = TurnContext(port, options, signal, emit)
        self.outcome = outcome = TurnOutcome()
        self.calls = calls = OpenCalls(port, outcome)
        self.model = ModelRound(ctx, outcome, calls)
        self.tools = ToolRound(ctx, outcome, calls)

    async def run(self, first: Batch, trigger: TurnTrigger) -> TurnOutcome:
        """Run the turn for ``first`` (and what the inbox holds); its outcome."""
        ctx = self.ctx
        port = ctx.port
        trace = ctx.trace
        agent = ctx.agent
        scope = (
            None if trace is None else trace.open("turn", agent.id, agent.config.name or agent.id)
        )
        try:
            ctx.turn = port.next_turn()
            ctx.trigger = trigger
            await port.ensure_system_prompt()
            ctx.started = (time.time(), time.perf_counter())
            await port.write(TurnStart, turn=ctx.turn, trigger=trigger, run_id=ctx.options.run_id)
            batch = first + agent.inbox.claim(turn_boundary=False)
            try:
                reason = await self._steps(batch)
            except Interrupted:
                await self._close_interrupted()
                return self.outcome
            except BaseException as exc:
                await self._close_failed(exc)
                raise
            await self._end(reason)
            return self.outcome
        finally:
            if scope is not None:
                scope.close()

    # ---- the steps -----------------------------------------------------------------------
    async def _steps(self, batch: Batch) -> TurnEndReason:
        ctx = self.ctx
        options = ctx.options
        tool_choice = options.tool_choice
        classify = ctx.agent.config.classify_model_responses
        while True:
            if self._stopped():
                return "rejected"
            ctx.step += 1
            if not await self._enter(batch):
                return "rejected"
            if self.tools.unknown_streak >= UNKNOWN_TOOL_ROUNDS_LIMIT or (
                options.max_rounds and self.outcome.rounds >= options.max_rounds
            ):
                return await self._guarded_end()
            # re-read every round: a tool loaded in round N is offered in round N + 1
            tools = [] if tool_choice == "none" else ctx.agent.offered_tools()
            message = await self.model.run(tools=tools, tool_choice=tool_choice)
            if classify and self._classified(message):
                await self.calls.settle(CLASSIFIED_TEXT)
                await self._end_step()
                return "model_response_failure"
            calls = message.tool_calls
            if calls:
                ended, batch = await self._after_calls(calls, tools)
            else:
                ended, batch = await self._after_answer(message)
            if ended is not None:
                return ended

    async def _enter(self, batch: Batch) -> bool:
        """Open the step with ``batch`` (after ``pre_step``); False: a listener rejected it."""
        ctx = self.ctx
        port = ctx.port
        if port.runtime.hooks.has_listeners("pre_step"):
            decision = await self._pre_step(batch)
            if isinstance(decision, Reject):
                ctx.step -= 1
                self.outcome.stop_reason = decision.reason
                return False
            batch = decision.messages
        # (without a listener the batch enters as it is: what the waterfall's end gives)
        await port.write(StepStart, turn=ctx.turn, step=ctx.step)
        for entered in batch:
            if entered.source == "steer":
                await port.append(SteeringMessage(message=entered))
            else:
                await port.write(UserMessageEvent, message=entered)
        return True

    async def _guarded_end(self) -> TurnEndReason:
        """End the turn here: unknown tools repeated, or the round budget is spent."""
        if self.tools.unknown_streak >= UNKNOWN_TOOL_ROUNDS_LIMIT:
            await self._forced_final(UNKNOWN_TOOLS_INSTRUCTION.format(calls=self._unexecuted()))
            await self._end_step()
            return "completed"
        if self.ctx.options.tool_only_completion:
            await self._end_step()
            self._check_not_empty()
            return "budget"
        await self._forced_final(FORCED_SUMMARY_INSTRUCTION)
        await self._end_step()
        return "budget"

    async def _after_calls(
        self, calls: Sequence[ToolCallBlock], tools: Sequence[Tool]
    ) -> tuple[TurnEndReason | None, Batch]:
        """Run the reply's calls, close the step; the turn's end, or the next step's input."""
        ctx = self.ctx
        if ctx.options.tool_choice == "none":
            await self.calls.settle("not executed: tool_choice is none for this run")
            raise ToolChoiceViolationError(
                "the model called a tool although tool_choice='none' was requested"
            )
        concludes = await self.tools.run(calls, tools)
        await ctx.port.write(StepEnd, turn=ctx.turn, step=ctx.step)  # (what _end_step does)
        ended = self._ended()
        if ended is not None:
            # (aborted during the tool round: no further step; pending input waits for a
            # later turn)
            return ended, ()
        batch = ctx.agent.inbox.claim(turn_boundary=False)
        if concludes and not batch:
            return "completed", ()
        return None, batch

    async def _after_answer(self, message: AssistantMessage) -> tuple[TurnEndReason | None, Batch]:
        """Close the step of a reply without calls; the turn ends unless steering arrived."""
        ctx = self.ctx
        await self._end_step()
        hooks = ctx.port.runtime.hooks
        if hooks.has_listeners("turn_stopping"):  # its payload built only then
            payload = TurnStopping(
                agent=ctx.agent, turn=ctx.turn, last_message=message, signal=ctx.signal
            )
            await hooks.awaited("turn_stopping", payload)
        ended = self._ended()
        if ended is not None:
            return ended, ()
        batch = ctx.agent.inbox.claim(turn_boundary=False)
        if batch:
            return None, batch  # steering arrived: another step
        self._check_not_empty()
        return "completed", ()

    def _classified(self, message: AssistantMessage) -> bool:
        """Does ``message`` report a failure a classifying agent ends the run on (kept on
        the outcome)?"""
        kind = message.stop_reason
        if kind not in _CLASSIFIED:
            return False
        self.outcome.response_failure = ModelResponseFailure(
            kind=_CLASSIFIED[kind],
            provider_stop_reason=message.provider_stop_reason,
            text=message.text,
            model=message.model,
        )
        return True

    def _ended(self) -> TurnEndReason | None:
        """After a step: the run's cancellation or a stop ends the turn here."""
        if self.ctx.signal.cancelled:
            self.outcome.interrupted = True
            return "interrupted"
        return "rejected" if self._stopped() else None

    async def _end_step(self) -> None:
        await self.ctx.port.write(StepEnd, turn=self.ctx.turn, step=self.ctx.step)

    async def _pre_step(self, batch: Batch) -> PreStepDecision:
        ctx = self.ctx
        payload = PreStep(
            agent=ctx.agent, turn=ctx.turn, step=ctx.step, messages=batch, signal=ctx.signal
        )
        return await ctx.port.runtime.hooks.waterfall("pre_step", payload, _enter_batch)

    async def _forced_final(self, instruction: str) -> None:
        """One call without tools; its tool calls are not dispatched; empty → fallback text."""
        message = await self.model.run(tools=(), tool_choice="none", extra_instruction=instruction)
        if message.tool_calls:
            await self.calls.settle("not executed: the final answer was requested without tools")
        if not message.text.strip():
            fallback = AssistantMessage(
                content=(TextBlock(text=FORCED_SUMMARY_FALLBACK),), stop_reason="end"
            )
            await self.ctx.port.append(AssistantMessageEvent(message=fallback))
            self.outcome.final = fallback

    def _stopped(self) -> bool:
        """Did someone (a hook's ``continue: false``) ask to end the run here?"""
        reason = self.ctx.agent.stop_requested
        if reason is None:
            return False
        self.outcome.stop_reason = reason
        return True

    def _check_not_empty(self) -> None:
        final = self.outcome.final
        has_text = final is not None and bool(final.text.strip())
        if not has_text and not (
            self.ctx.options.tool_only_completion and self.outcome.tool_results
        ):
            raise EmptyCompletionError(
                "the model ended the turn with neither text nor a tool result",
            )

    def _unexecuted(self) -> str:
        names: list[str] = []
        for event in reversed(self.ctx.port.session.events[-50:]):
            data: Any = event.data
            if isinstance(data, ToolResultEvent) and data.message.status == "skipped":
                names.append(data.message.name)
        return ", ".join(sorted(set(names))) or "unknown"

    # ---- how it ends -----------------------------------------------------------------------
    async def _close_interrupted(self) -> None:
        """End an aborted turn: every open call settled, the open step closed, then turn/end."""
        await self.calls.settle()
        if self._step_open():
            await self._end_step()
        await self._end("interrupted")

    async def _close_failed(self, exc: BaseException) -> None:
        """End a turn that raised: settle what must be settled, close the step, turn/end."""
        if isinstance(exc, anyio.get_cancelled_exc_class()):
            # cancelled by the caller: record the run as an aborted one (it is re-raised)
            self.outcome.interrupted = True
            with anyio.CancelScope(shield=True):
                await self._close_interrupted()
            return
        journaled = self.ctx.agent.journaled
        suspended = isinstance(exc, ExecutionSuspended)
        if not (isinstance(exc, ExecutionControlError) or journaled):
            # a journaled run keeps its recovery authority: no transcript-only settlement
            await self.calls.settle("not executed: the turn failed")
        elif suspended and not journaled:
            # no journal, no continuation: nothing would ever answer the pending calls
            await self.calls.settle(SUSPENDED_UNJOURNALED)
        if self.ctx.step:
            await self._end_step()
        if suspended:
            # waiting for an outside answer: its calls stay open for continuation
            self.outcome.stop_reason = str(exc)
            await self._end("suspended")
        else:
            await self._end("interrupted" if is_abort(exc, self.ctx.signal) else "failed", exc)

    async def _end(self, reason: TurnEndReason, error: BaseException | None = None) -> None:
        """Log turn/end, then observe the finished turn (``turn``)."""
        ctx, outcome = self.ctx, self.outcome
        deadline = ctx.signal.reason
        if reason == "interrupted" and isinstance(deadline, DeadlineExceededError):
            reason = "timeout"  # the run's own deadline, not its caller, ended it
            outcome.timed_out = True
            outcome.stop_reason = outcome.stop_reason or str(deadline)
        info = error_info(error) if error is not None else None
        await ctx.port.write(
            TurnEnd,
            turn=ctx.turn,
            reason=reason,
            error=info.to_dict() if info else None,
            detail=outcome.stop_reason,
        )
        observe_turn(ctx, outcome, reason, error, info.code if info else None)

    def _step_open(self) -> bool:
        # The last step marker of this turn tells (a cancellation can land between a step's
        # start and any of the loop's own StepEnd writes).
        for event in reversed(self.ctx.port.session.events):
            data: Any = event.data
            if isinstance(data, StepEnd | StepStart):
                return isinstance(data, StepStart) and data.turn == self.ctx.turn
            if isinstance(data, TurnStart):
                return False
        return False


async def _enter_batch(payload: PreStep) -> PreStepDecision:
    return Enter(messages=payload.messages)  # the end of the pre_step waterfall


async def run_turn(
    port: AgentPort,
    first: Batch,
    trigger: TurnTrigger,
    options: RunOptions,
    signal: CancelSignal,
    emit: Emit | None,
) -> TurnOutcome:
    """One turn of the agent behind ``port``."""
    return await Turn(port, options, signal, emit).run(first, trigger)
