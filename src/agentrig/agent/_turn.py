"""One turn of the agent loop.

claim input → ``pre_step`` waterfall → ``request_config`` waterfall → context guard →
stream the model response → dispatch tool calls → append every model-visible fact → next
step, until no tool call or steering remains; then ``turn_stopping`` and one last drain.

Invariant kept at every exit: each tool call in the log has exactly one tool result.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.abc

from agentrig._construct import construct_trusted
from agentrig.agent._dispatch import (
    CallOutcome,
    canonical_input,
    execute_call,
    is_concurrent,
    not_executed,
    observe_tool_call,
    prepare_call,
    unknown_tool,
)
from agentrig.agent._results import (
    ContextWindowError,
    DeadlineExceededError,
    IdenticalToolInputError,
    ToolChoiceViolationError,
    sum_usage,
)
from agentrig.agent._spill import cap_result
from agentrig.agent._structured import structured_instruction, structured_transport
from agentrig.cancel import CancelSignal, is_abort
from agentrig.errors import ExecutionControlError, error_info
from agentrig.kernel.payloads import (
    Enter,
    Observation,
    PreStep,
    PreStepDecision,
    Reject,
    RequestConfig,
    RequestError,
    Retry,
    TurnStopping,
)
from agentrig.llm import (
    PROVIDERS,
    AssistantMessage,
    EmptyCompletionError,
    Message,
    ModelRequest,
    ModelResponse,
    StreamAssembler,
    StreamChunk,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    ToolResultChunk,
    Usage,
    UserMessage,
    message_chunks,
    require_capabilities,
)
from agentrig.session import (
    AssistantMessageEvent,
    RequestHeader,
    SteeringMessage,
    StepEnd,
    StepStart,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
    TurnEndReason,
    TurnStart,
    TurnTrigger,
    UserMessageEvent,
)
from agentrig.tools import Tool

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent
    from agentrig.agent._driver import RunOptions

__all__ = [
    "FORCED_SUMMARY_FALLBACK",
    "FORCED_SUMMARY_INSTRUCTION",
    "TurnOutcome",
    "run_turn",
    "with_deadline",
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
CONTEXT_GUARD_RATIO = 0.95
UNKNOWN_TOOL_ROUNDS_LIMIT = 2

# Hands a chunk to the stream's consumer: None when it was taken at once (the common case,
# no coroutine per token), else an awaitable that completes once the consumer has room.
Emit = Callable[[StreamChunk], Awaitable[None] | None]


class TurnOutcome:
    """What a finished turn produced."""

    __slots__ = ("final", "interrupted", "model", "rounds", "stop_reason", "tool_results", "usages")

    def __init__(self) -> None:
        self.final: AssistantMessage | None = None
        self.interrupted = False
        self.stop_reason: str | None = None  # the turn was rejected or stopped: why
        self.rounds = 0
        self.usages: list[Usage | None] = []
        self.model: str | None = None
        self.tool_results = 0

    @property
    def text(self) -> str:
        return self.final.text if self.final is not None else ""


def _estimate_tokens(history_chars: int, extra_chars: int, tool_chars: int) -> int:
    # ~4 characters per token; a coarse guard against sending what cannot fit.  The history's
    # size comes from the session's incremental projection, so this is O(1) in the log.
    return (history_chars + extra_chars + tool_chars) // 4


class _Turn:
    def __init__(
        self,
        agent: Agent,
        options: RunOptions,
        signal: CancelSignal,
        emit: Emit | None,
    ) -> None:
        self.agent = agent
        self.options = options
        self.signal = signal
        self.emit = emit
        self.outcome = TurnOutcome()
        self.turn = 0
        self.step = 0
        self.open_calls: dict[int, ToolCallBlock] = {}
        self.identical: dict[str, int] = {}
        self.unknown_streak = 0
        self.log: Callable[[Any], Awaitable[Any]] = agent._log
        self.trigger: TurnTrigger = "prompt"
        self.started = (0.0, 0.0)  # the turn's start: wall clock, performance counter
        self.first_chunk = 0.0  # when the current model call's first chunk arrived
        # a tracing plugin's context (None without one: then nothing below opens a scope)
        self.trace = trace = agent.runtime.trace
        if trace is not None and agent.session.trace_ids is None:
            agent.session.trace_ids = trace.ids

    # ---- log helpers ---------------------------------------------------------------------
    # ``self.log(data)`` appends one event: bound to the agent's writer in __init__ (one
    # coroutine frame per event instead of two)

    async def settle_open_calls(self, reason: str = "not executed: interrupted") -> None:
        """Give every call still without a result its explicit not-executed result."""
        for call in list(self.open_calls.values()):
            await self.log(ToolResultEvent(message=not_executed(call, reason)))
        self.open_calls.clear()

    # ---- the model call ------------------------------------------------------------------
    async def request_config(self) -> RequestConfig:
        # What the machine would use: the agent's options on its first request, the
        # configuration of its last logged request header afterwards.
        default = self.agent._last_request_config
        if default is None:
            cfg = self.agent.config
            default = RequestConfig(
                agent=self.agent,
                provider=cfg.provider,
                model=cfg.model,
                max_tokens=cfg.max_tokens,
                temperature=cfg.temperature,
            )
        chosen = await self.agent.runtime.hooks.waterfall("request_config", default, _keep_config)
        self.agent._last_request_config = chosen
        return chosen

    def offered_tools(self) -> list[Tool]:
        # Re-read every round: a tool loaded in round N is offered in round N + 1.
        return self.agent.offered_tools()

    async def call_model(
        self,
        cfg: RequestConfig,
        *,
        tools: Sequence[Tool],
        tool_choice: str | None,
        extra_instruction: str | None = None,
    ) -> AssistantMessage:
        agent = self.agent
        provider = agent.runtime.catalog(PROVIDERS).require(cfg.provider)
        view = agent.session.derive_messages()
        messages: Sequence[Message] = view
        system_extra = structured_instruction(self.options, provider, cfg.model)
        extra_chars = len(system_extra or "") + len(extra_instruction or "")
        if system_extra or extra_instruction:
            items = list(messages)
            if system_extra:
                if items and isinstance(items[0], SystemMessage):
                    items[0] = SystemMessage(text=f"{items[0].text}\n\n{system_extra}")
                else:
                    items.insert(0, SystemMessage(text=system_extra))
            if extra_instruction:
                items.append(UserMessage.of(extra_instruction, source="instruction"))
            messages = tuple(items)
        specs = tuple(agent.tool_spec(t) for t in tools)
        window = agent.runtime.models.context_window(cfg.model)
        tool_chars = sum(agent.tool_spec_chars(t) for t in tools)
        estimate = _estimate_tokens(view.chars, extra_chars, tool_chars)
        if estimate > window * CONTEXT_GUARD_RATIO:
            text = (
                f"The request was not sent: it needs about {estimate} tokens, more than "
                f"{int(CONTEXT_GUARD_RATIO * 100)}% of the {window}-token context window of "
                f"{cfg.model}."
            )
            await self.log(
                AssistantMessageEvent(
                    message=AssistantMessage(content=(TextBlock(text=text),), stop_reason="error")
                )
            )
            raise ContextWindowError(text)
        response_format, transport = structured_transport(self.options, provider, cfg.model)
        declared = provider.capabilities(cfg.model)
        if declared.tool_choice is False and not specs:
            tool_choice = None  # nothing to choose from: no need to ask for what is absent
        request = construct_trusted(
            ModelRequest,
            {
                "model": cfg.model,
                "messages": messages,
                "tools": specs,
                "tool_choice": tool_choice,
                "max_tokens": cfg.max_tokens,
                "temperature": cfg.temperature,
                "stop": (),
                "response_format": response_format,
                "structured_output": transport,
                "reasoning_effort": cfg.reasoning_effort,
                "parallel_tool_calls": None,
                "options": dict(cfg.options),
            },
        )
        require_capabilities(
            provider, request, declared
        )  # refused here: the provider is never called
        await self.log(
            RequestHeader(
                provider=cfg.provider,
                model=cfg.model,
                max_tokens=cfg.max_tokens,
                temperature=cfg.temperature,
                tools=tuple(t.id for t in tools),
            )
        )
        assembler = StreamAssembler()
        answered: AssistantMessage | None = None  # a reply that arrived whole
        self.outcome.model = cfg.model
        emit = self.emit
        try:
            with self.signal.scope():
                if declared.streaming is False:
                    # a provider that cannot stream is driven through its non-streaming call
                    answered = _whole(await provider.complete(request, signal=self.signal))
                    self.first_chunk = time.perf_counter()
                    if emit is not None:
                        for chunk in message_chunks(answered):
                            if (waiting := emit(chunk)) is not None:
                                await waiting
                else:
                    stream = provider.stream(request, signal=self.signal)
                    try:
                        async for chunk in stream:
                            if not self.first_chunk:
                                self.first_chunk = time.perf_counter()
                            assembler.feed(chunk)
                            if emit is not None and (waiting := emit(chunk)) is not None:
                                await waiting
                    finally:
                        aclose = getattr(stream, "aclose", None)  # a plain AsyncIterator has none
                        if aclose is not None:
                            await aclose()
            self.signal.raise_if_cancelled()
        except ExecutionControlError:
            raise  # a journal failure stays a failure, even when a cancellation races it
        except BaseException as exc:
            if answered is not None:
                partial = answered.model_copy(update={"interrupted": True})
            else:
                partial = assembler.message(interrupted=True)
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                # The caller's own cancellation (the signal's scope absorbs only its own):
                # keep what arrived, then let it propagate -- it is not ours to swallow.
                with anyio.CancelScope(shield=True):
                    await self.commit_assistant(partial)
                self.outcome.interrupted = True
                raise
            if self.signal.cancelled or is_abort(exc, self.signal):
                await self.commit_assistant(partial)
                self.outcome.interrupted = True
                raise _Interrupted() from None
            raise
        message = answered if answered is not None else assembler.message()
        if message.model:
            self.outcome.model = message.model  # the model that answered (fallbacks move)
        return message

    async def commit_assistant(self, message: AssistantMessage) -> None:
        await self.log(AssistantMessageEvent(message=message))
        for index, call in enumerate(message.tool_calls):
            self.open_calls[index] = call
        self.outcome.usages.append(message.usage)
        self.outcome.final = message

    async def model_round(
        self,
        *,
        tools: Sequence[Tool],
        tool_choice: str | None,
        extra_instruction: str | None = None,
    ) -> AssistantMessage:
        """One provider call, retried while a ``request_error`` listener says so."""
        attempt = 0
        cfg = await self.request_config()
        while True:
            trace = self.trace
            scope = trace.open("model_call", self.agent.id) if trace is not None else None
            try:
                message = await self._attempt(cfg, attempt, tools, tool_choice, extra_instruction)
            finally:
                if scope is not None:
                    scope.close()
            if message is not None:
                return message
            attempt += 1

    async def _attempt(
        self,
        cfg: RequestConfig,
        attempt: int,
        tools: Sequence[Tool],
        tool_choice: str | None,
        extra_instruction: str | None,
    ) -> AssistantMessage | None:
        """One attempt of a model round: its message, or None when a listener said retry."""
        started = (time.time(), time.perf_counter())
        self.first_chunk = 0.0
        try:
            message = await self.call_model(
                cfg, tools=tools, tool_choice=tool_choice, extra_instruction=extra_instruction
            )
        except _Interrupted:
            self._observe_call(cfg, started, attempt, "interrupted", self.outcome.final)
            raise
        except (ContextWindowError, ExecutionControlError):
            raise
        except Exception as exc:
            self._observe_call(cfg, started, attempt, "failure", None, exc)

            async def terminal(_payload: RequestError) -> Retry | None:
                return None

            action = await self.agent.runtime.hooks.waterfall(
                "request_error",
                RequestError(agent=self.agent, error=exc, attempt=attempt + 1, signal=self.signal),
                terminal,
            )
            if isinstance(action, Retry) and not self.signal.cancelled:
                return None
            # Kept readable in history, then raised as the typed error it is.
            text = f"The model request failed: {error_info(exc).code}: {exc}"
            await self.log(
                AssistantMessageEvent(
                    message=AssistantMessage(
                        content=(TextBlock(text=text),), stop_reason="error", model=cfg.model
                    )
                )
            )
            raise
        except BaseException as exc:
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                self._observe_call(cfg, started, attempt, "cancelled", self.outcome.final)
            raise
        self.outcome.rounds += 1
        self._observe_call(cfg, started, attempt, "success", message)
        await self.commit_assistant(message)
        return message

    def _observe_call(
        self,
        cfg: RequestConfig,
        started: tuple[float, float],
        attempt: int,
        outcome: str,
        message: AssistantMessage | None,
        error: BaseException | None = None,
    ) -> None:
        # One content-free observation per attempted provider round (forced summary too);
        # it describes the call boundary, not proof of a network request.
        hooks = self.agent.runtime.hooks
        if not hooks.has_listeners("observe"):
            return
        now = time.perf_counter()
        started_at, start = started
        first = self.first_chunk
        provider = self.agent.runtime.catalog(PROVIDERS).get(cfg.provider)
        data = self._ids()
        data.update(
            round=self.outcome.rounds + (1 if outcome != "success" else 0),
            attempt=attempt + 1,
            provider=cfg.provider,
            provider_kind=getattr(provider, "kind", None),
            model=cfg.model,
            response_model=message.model if message is not None else None,
            outcome=outcome,
            stop_reason=message.stop_reason if message is not None else None,
            usage=message.usage if message is not None else None,
            started_at=started_at,
            ended_at=started_at + (now - start),
            duration_ms=(now - start) * 1000,
            time_to_first_chunk_ms=(first - start) * 1000 if first else None,
            error_type=type(error).__name__ if error is not None else None,
            error_code=error_info(error).code if error is not None else None,
        )
        hooks.notify("observe", Observation(kind="model_call", agent_id=self.agent.id, data=data))

    # ---- tool calls ----------------------------------------------------------------------
    async def run_calls(self, message: AssistantMessage, tools: Sequence[Tool]) -> bool:
        """Dispatch a round's calls; returns True when a result concludes the turn."""
        calls = message.tool_calls
        by_name: dict[str, Tool] = {t.id: t for t in tools}
        all_tools = self.agent._tools
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
        await self.log(ToolCallEvent(call=call, invocation_id=f"{self.turn}.{self.step}.{index}"))
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
        tracing scope.
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

        async def one(index: int, group: anyio.abc.TaskGroup) -> None:
            call, tool = calls[index], resolved[index]
            trace = self.trace
            scope = trace.open("tool_call", agent.id) if trace is not None else None
            try:
                if index != first:
                    await gated[index - 1].wait()
                if self.signal.cancelled or agent.stop_requested is not None:
                    # not started: settled as not executed once the group is done
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
                        outcome = await execute_call(agent, ready, self.signal)
                outcomes[index] = outcome
                if index != first:
                    await recorded[index - 1].wait()
                concludes.append(await self.record(index, call, outcome, count=True))
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
            with anyio.CancelScope(shield=True):
                for index in indexes:
                    if index not in self.open_calls:
                        continue  # its result is logged already
                    if index in outcomes:
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
            raise failure[0]
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
        await self.log(
            ToolResultEvent(
                message=message,
                invocation_id=outcome.invocation_id or None,
                duration_ms=outcome.duration_ms,
            )
        )
        self.open_calls.pop(index, None)  # from here on the call has its result
        if stored is not None:
            await self.log(stored)  # links the call to its whole result
        observe_tool_call(self.agent, call, outcome, self._ids())
        if self.emit is not None:
            waiting = self.emit(
                ToolResultChunk(
                    call_id=call.id, name=call.name, status=message.status, text=message.text
                )
            )
            if waiting is not None:
                await waiting
        return outcome.concludes_turn

    # ---- the turn --------------------------------------------------------------------------
    async def run(self, first: tuple[UserMessage, ...], trigger: TurnTrigger) -> TurnOutcome:
        trace = self.trace
        if trace is None:
            return await self._run(first, trigger)
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
        await self.log(TurnStart(turn=self.turn, trigger=trigger, run_id=self.options.run_id))
        batch = first + agent.inbox.claim(turn_boundary=False)
        try:
            reason = await self._steps(batch)
        except _Interrupted:
            await self.close_interrupted()
            return self.outcome
        except BaseException as exc:
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                # cancelled by the caller: record the run as an aborted one, then re-raise
                self.outcome.interrupted = True
                with anyio.CancelScope(shield=True):
                    await self.close_interrupted()
                raise
            if not (isinstance(exc, ExecutionControlError) or self.agent.journaled):
                # a journaled run keeps its recovery authority: no transcript-only settlement
                await self.settle_open_calls("not executed: the turn failed")
            if self.step:
                await self.log(StepEnd(turn=self.turn, step=self.step))
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
        await self.log(
            TurnEnd(
                turn=self.turn,
                reason=reason,
                error=info.to_dict() if info else None,
                detail=self.outcome.stop_reason,
            )
        )
        hooks = self.agent.runtime.hooks
        if not hooks.has_listeners("observe"):
            return
        outcome = self.outcome
        started_at, started = self.started
        data = self._ids()
        data.update(
            trigger=self.trigger,
            reason=reason,
            rounds=outcome.rounds,
            tool_calls=outcome.tool_results,
            model=outcome.model,
            usage=sum_usage(outcome.usages),
            started_at=started_at,
            duration_ms=(time.perf_counter() - started) * 1000,
            error_type=type(error).__name__ if error is not None else None,
            error_code=info.code if info else None,
        )
        hooks.notify("observe", Observation(kind="turn", agent_id=self.agent.id, data=data))

    def _ids(self) -> dict[str, Any]:
        # what every observation of the loop carries, so a listener can correlate them
        return {
            "session_id": self.agent.session_id,
            "agent_name": self.agent.config.name or self.agent.id,
            "run_id": self.options.run_id,
            "turn": self.turn,
            "step": self.step,
        }

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
        max_rounds = self.options.max_rounds
        tool_choice = self.options.tool_choice
        while True:
            if self._stopped():
                return "rejected"
            self.step += 1
            decision = await self._pre_step(batch)
            if isinstance(decision, Reject):
                self.step -= 1
                self.outcome.stop_reason = decision.reason
                return "rejected"
            await self.log(StepStart(turn=self.turn, step=self.step))
            for entered in decision.messages:
                if entered.source == "steer":
                    await self.log(SteeringMessage(message=entered))
                else:
                    await self.log(UserMessageEvent(message=entered))
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
            tools = [] if tool_choice == "none" else self.offered_tools()
            message = await self.model_round(tools=tools, tool_choice=tool_choice)
            if message.tool_calls:
                if tool_choice == "none":
                    await self.settle_open_calls("not executed: tool_choice is none for this run")
                    raise ToolChoiceViolationError(
                        "the model called a tool although tool_choice='none' was requested"
                    )
                concludes = await self.run_calls(message, tools)
                await self.log(StepEnd(turn=self.turn, step=self.step))
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
            await self.log(StepEnd(turn=self.turn, step=self.step))
            await agent.runtime.hooks.awaited(
                "turn_stopping",
                TurnStopping(agent=agent, turn=self.turn, last_message=message, signal=self.signal),
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


async def _keep_config(payload: RequestConfig) -> RequestConfig:
    return payload  # the end of the request_config waterfall: the configuration as it is


async def _enter_batch(payload: PreStep) -> PreStepDecision:
    return Enter(messages=payload.messages)  # the end of the pre_step waterfall


def _whole(response: ModelResponse) -> AssistantMessage:
    message = response.message
    if message.model is None and response.served_model:
        message = message.model_copy(update={"model": response.served_model})
    return message


def _may_overlap(tool: Tool | None) -> bool:
    # an unknown tool runs nothing (its result is a skip), so it does not split a group
    return tool is None or is_concurrent(tool)


def _unknown(call: ToolCallBlock, offered: Mapping[str, Tool]) -> CallOutcome:
    return CallOutcome(unknown_tool(call, list(offered)), executed=False)


def _cancelled_while_running(call: ToolCallBlock) -> ToolMessage:
    text = "interrupted while running: the run was cancelled by its caller"
    return ToolMessage.of(call.id, call.name, text, status="error")


class _Interrupted(Exception):
    """Internal: the run's signal fired while the model was answering."""


_T = TypeVar("_T")


async def with_deadline(
    seconds: float | None,
    signal: CancelSignal,
    body: Callable[[CancelSignal], Awaitable[_T]],
) -> _T:
    """Run ``body`` with a signal that fires ``seconds`` from now (or when ``signal`` does).

    The deadline is this run's own: when it passes, the run's signal fires with a
    :class:`DeadlineExceededError` and the loop ends the turn ``interrupted`` with that reason.
    A cancellation from the caller is not ours and propagates untouched.
    """
    if seconds is None:
        return await body(signal)
    own = CancelSignal()

    def pass_on(reason: object) -> None:
        own.cancel(reason)  # the caller's cancel reaches the run as before

    forward = signal.on_cancel(pass_on)
    result: list[_T] = []
    failure: list[Exception] = []

    async def expire() -> None:
        await anyio.sleep(seconds)
        own.cancel(DeadlineExceededError(seconds))

    try:
        async with anyio.create_task_group() as timer:
            timer.start_soon(expire)
            try:
                result.append(await body(own))
            except Exception as exc:  # raised as itself below, not in an exception group
                failure.append(exc)
            timer.cancel_scope.cancel()
    finally:
        forward()
    if failure:
        raise failure[0]
    return result[0]


async def run_turn(
    agent: Agent,
    first: tuple[UserMessage, ...],
    trigger: TurnTrigger,
    options: RunOptions,
    signal: CancelSignal,
    emit: Emit | None,
) -> TurnOutcome:
    return await _Turn(agent, options, signal, emit).run(first, trigger)
