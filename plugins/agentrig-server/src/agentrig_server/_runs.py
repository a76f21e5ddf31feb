"""Served runs: admission per exposed model, one agent per request or conversation, budgets.

A request to model ``M`` runs agent ``M`` as configured in ``[agents.M]`` -- its provider,
model, tools, permissions and hooks -- on a session of its own: a fresh one seeded with the
request's history (OpenAI chat completions, Anthropic messages), or a conversation the server
keeps (Responses ``previous_response_id``, the chat page).  The run is bounded by the exposed
model's limits: wall-clock seconds, tokens, rounds and output tokens.  Whatever stops it
early -- a budget, the client going away -- ends it ``interrupted`` in its session, and the
client (if still there) sees a truncation, never an unexecuted tool call.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import anyio
import attrs

from agentrig.agent import AgentConfig, agent_configs
from agentrig.cancel import CancelSignal, is_abort
from agentrig.diagnostics import get_logger
from agentrig.errors import AgentrigError, did_you_mean
from agentrig.ids import AgentId, agent_id
from agentrig.lifecycle import ExecutionSuspended
from agentrig.llm import (
    AssistantMessage,
    ContextLengthError,
    FinishChunk,
    ProviderError,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    ToolMessage,
    ToolResultChunk,
    UsageChunk,
    UserMessage,
    parse_tool_arguments,
)
from agentrig.plugin import TRACE_CONTEXT
from agentrig.session import (
    AssistantMessageEvent,
    SessionEvent,
    ToolResultEvent,
    UserMessageEvent,
    event_usage,
)
from agentrig_server._admission import Caller, Slots
from agentrig_server._errors import ApiError, internal_error
from agentrig_server._events import (
    Finished,
    FinishReason,
    RunEvent,
    TextOut,
    ToolCallOut,
    ToolResultOut,
    UsageOut,
)
from agentrig_server._sessions import ServedSession, Sessions
from agentrig_server._settings import ExposedAgent, ServerSettings

if TYPE_CHECKING:
    from agentrig.agent import Agent, RunRecord, RunResult
    from agentrig.kernel import Runtime
    from agentrig_server._usage import Ledger

_log = get_logger("server")

__all__ = [
    "STEP_SEPARATOR",
    "ActiveRun",
    "HistoryMessage",
    "Prompt",
    "RunService",
    "run_cost",
]

HistoryMessage = UserMessage | AssistantMessage | ToolMessage

#: What joins the texts of a run's steps into one answer.
STEP_SEPARATOR = "\n\n"
Emit = Callable[[RunEvent], Awaitable[None]]


@attrs.frozen(slots=True)
class Prompt:
    """A validated request in agentrig's vocabulary: history, then the message to answer."""

    model: str
    message: UserMessage
    history: tuple[HistoryMessage, ...] = ()
    system: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    #: continue this served conversation (a Responses id or a chat-page session id)
    previous_response: str | None = None
    #: keep the conversation for ``previous_response_id`` / the chat page
    store: bool = False


class RunService:
    """Admits, runs and settles served runs for one runtime."""

    def __init__(self, rt: Runtime, settings: ServerSettings, ledger: Ledger | None = None) -> None:
        self.rt = rt
        self.settings = settings
        self.ledger = ledger
        self.sessions = Sessions(settings.max_sessions)
        self._model_slots = {
            name: Slots(exposed.max_concurrent, "model")
            for name, exposed in settings.agents.items()
        }
        self._active: dict[str, ActiveRun] = {}  # agent id -> the run it is doing now

    # ---- lookups -------------------------------------------------------------------------
    def exposed(self, model: object) -> ExposedAgent:
        """The exposed agent ``model`` (a 404 naming the known ones otherwise)."""
        if not isinstance(model, str) or not model:
            raise ApiError(400, "'model' must be the id of an exposed agent", param="model")
        exposed = self.settings.agents.get(model)
        if exposed is None:
            known = sorted(self.settings.agents)
            hint = did_you_mean(model, known)
            raise ApiError(
                404,
                f"the model {model!r} does not exist{hint} (models: {', '.join(known)})",
                code="model_not_found",
                param="model",
            )
        return exposed

    def allowed(self, model: object, caller: Caller) -> ExposedAgent:
        """The exposed agent ``model`` if the caller's key may call it (a 403 otherwise)."""
        exposed = self.exposed(model)
        key = caller.key
        if key is not None and not key.allows(str(model)):
            raise ApiError(
                403,
                f"key {key.key_id!r} may not call model {model!r} (its models: "
                f"{', '.join(key.limits.models or ())})",
                code="model_not_allowed",
                param="model",
            )
        if key is not None and key.limits.max_budget is not None:
            unpriced = self._unpriced(str(model))
            if unpriced is not None:
                # a spend that cannot be counted cannot be held to a budget: refuse
                agent, agent_model = unpriced
                raise ApiError(
                    403,
                    f"key {key.key_id!r} has a USD budget, but model {agent_model!r} (of agent "
                    f"{agent!r}, which model {model!r} runs or delegates to) has no price, so "
                    "its spend cannot be counted; use max_budget_tokens for it",
                    code="budget_unpriced",
                    param="model",
                )
        return exposed

    def _unpriced(self, model: str) -> tuple[str, str] | None:
        """The first agent (and its model) without a price among the exposed agent and every
        agent it can delegate or hand off to."""
        agents = agent_configs(self.rt.loaded)
        seen: set[str] = set()
        pending = [model]
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            config = agents.get(AgentId(name))
            if config is None:
                continue
            info = self.rt.models.lookup(config.model)
            if info is None or info.pricing is None:
                return name, config.model
            pending.extend(str(a) for a in (*config.subagents, *config.handoffs))
        return None

    def active_run(self, agent_id: str | None) -> ActiveRun | None:
        """The served run ``agent_id`` works for: its own, or -- for a sub-agent it
        delegated to, at any depth -- the run of the served agent at the root of its chain
        (a child's model calls count against that run's budget, its questions reach that
        run's caller)."""
        seen: set[str] = set()
        while agent_id is not None and agent_id not in seen:
            run = self._active.get(agent_id)
            if run is not None:
                return run
            seen.add(agent_id)
            agent = self.rt.agents.get(AgentId(agent_id))  # a lookup: a miss ends the walk
            agent_id = agent.lineage.parent_agent if agent is not None else None
        return None

    # ---- admission -------------------------------------------------------------------------
    async def open(self, prompt: Prompt, caller: Caller) -> ActiveRun:
        """Admit ``prompt`` and make its agent ready; every refusal happens here, before any
        response (or stream) starts."""
        exposed = self.allowed(prompt.model, caller)
        served: ServedSession | None = None
        if prompt.previous_response is not None:
            served = self.sessions.continuing(prompt.previous_response, caller.identity)
            if served.model != prompt.model:
                raise ApiError(
                    400,
                    f"previous_response_id {prompt.previous_response!r} belongs to model "
                    f"{served.model!r}, not {prompt.model!r}",
                    param="previous_response_id",
                )
        slots = self._model_slots[prompt.model]
        slots.acquire(prompt.model)
        try:
            if served is None:
                agent = await self._new_agent(prompt, exposed)
                if prompt.store:
                    served = self.sessions.add(prompt.model, agent, caller.identity)
                    for evicted in self.sessions.evict():
                        await self.rt.agents.dispose(evicted.agent.id, cancel_running=True)
            else:
                agent = served.agent
                for message in prompt.history:
                    if not isinstance(message, UserMessage):
                        raise ApiError(
                            400,
                            "a request continuing a conversation may only add user input",
                            param="input",
                        )
                    agent.inject(message)
        except BaseException:
            slots.release(prompt.model)
            raise
        return ActiveRun(self, prompt, exposed, agent, caller, served)

    async def _new_agent(self, prompt: Prompt, exposed: ExposedAgent) -> Agent:
        base = agent_configs(self.rt.loaded)[AgentId(prompt.model)]  # an exposed agent (checked)
        system = base.system_prompt
        if prompt.system:
            system = f"{system}\n\n{prompt.system}" if system else prompt.system
        asked = [v for v in (prompt.max_tokens, base.max_tokens) if v is not None]
        config = AgentConfig.model_validate(
            {
                **base.model_dump(),
                # its id is per request; it reports as the configured agent it runs
                "name": base.name or prompt.model,
                "system_prompt": system,
                "max_tokens": min(asked[0], exposed.max_output_tokens)
                if asked
                else exposed.max_output_tokens,
                "temperature": (
                    prompt.temperature if prompt.temperature is not None else base.temperature
                ),
                "max_rounds": min(base.max_rounds or exposed.max_rounds, exposed.max_rounds),
            }
        )
        history = prompt.history

        def seed(agent: Agent) -> None:
            for message in history:
                if isinstance(message, UserMessage):
                    agent.session.append(UserMessageEvent(message=message))
                elif isinstance(message, AssistantMessage):
                    agent.session.append(AssistantMessageEvent(message=message))
                else:
                    agent.session.append(ToolResultEvent(message=message))

        name = agent_id(f"{prompt.model[:100]}.srv-{secrets.token_hex(6)}")
        try:
            return await self.rt.agents.create(name, config=config, setup=seed)
        except AgentrigError as exc:
            raise internal_error(exc) from None


class ActiveRun:
    """One admitted run: drive it once, then :meth:`close` it (always)."""

    def __init__(
        self,
        service: RunService,
        prompt: Prompt,
        exposed: ExposedAgent,
        agent: Agent,
        caller: Caller,
        served: ServedSession | None,
    ) -> None:
        self.service = service
        self.prompt = prompt
        self.exposed = exposed
        self.agent = agent
        self.caller = caller
        self.served = served
        self.signal = CancelSignal()
        self.refusal: ApiError | None = None
        self.response_id = f"resp_{secrets.token_hex(12)}"
        self.over_budget = False
        self.timed_out = False
        #: the finished run's record (its usage and cost go to the caller's key)
        self.record: RunRecord | None = None
        self._start = 0
        self._emit: Emit | None = None
        self._closed = False
        #: agents the run handed the conversation to (``handoffs``): disposed with the run
        self._handoffs: list[AgentId] = []
        #: the W3C trace context the request came with (``traceparent``, ``tracestate``)
        self.inbound_trace: dict[str, str] = {}

    @property
    def session_id(self) -> str:
        return self.agent.session_id

    async def emit(self, event: RunEvent) -> None:
        """Hand ``event`` to the response being written (approval notices come this way)."""
        if self._emit is not None:
            await self._emit(event)

    def check_token_budget(self, pending: int = 0) -> None:
        """Before a model call: stop the run once its calls so far (and ``pending`` tokens
        not logged yet) used the token budget."""
        used = pending
        for event in self.agent.session.events[self._start :]:
            # replies, a compaction's summary call, side calls (MCP sampling): all the run's
            usage = event_usage(event.data)
            used += usage.total if usage is not None else 0
        for child in self.agent.delegations.finished:  # sub-agents the run delegated to
            total = child.total_usage
            used += total.total if total is not None else 0
        if used >= self.exposed.max_run_tokens and not self.signal.cancelled:
            self.over_budget = True
            self.signal.cancel(f"the run used its token budget ({used} tokens)")

    def refuse(self, error: ApiError) -> None:
        """Fail the request with ``error`` and stop the run."""
        self.refusal = error
        self.signal.cancel(error)

    def time_out(self) -> None:
        """The wall-clock budget is spent: stop the run (its answer becomes a truncation)."""
        if not self.signal.cancelled:
            self.timed_out = True
            self.signal.cancel(f"the run used its time budget ({self.exposed.max_run_seconds:g}s)")

    async def drive(self, emit: Emit, *, stream: bool) -> Finished:
        """Run the agent, handing each event to ``emit``; returns (and emits) the finish.

        Streamed, the events come from the agent's stream as they happen; otherwise the run
        goes straight through ``agent.run`` and the same events are read from its session
        afterwards (the cheaper path: no stream pipe, no extra task).  When the runtime
        traces, the run continues the trace the request came with.
        """
        trace = self.service.rt.services.get(TRACE_CONTEXT)
        if trace is None or not self.inbound_trace:
            return await self._drive(emit, stream=stream)
        scope = trace.continue_from(self.inbound_trace)
        try:
            return await self._drive(emit, stream=stream)
        finally:
            scope.close()

    async def _drive(self, emit: Emit, *, stream: bool) -> Finished:
        self._emit = emit
        self.service._active[self.agent.id] = self
        self._start = len(self.agent.session)
        state = _StepState()
        result: RunResult[Any] | None = None
        try:
            if stream:
                result = await self._streamed(emit, state)
                if result is not None:
                    for _streamed_already in self._handed_over(result):
                        pass  # their words came through the stream; they are disposed
            else:
                result = await self.agent.run(self.prompt.message, signal=self.signal)
                for event in _session_events(self.agent.session.events[self._start :], state):
                    await emit(event)
                for taken in self._handed_over(result):  # the agents that took over answer
                    for event in _session_events(taken, state):
                        await emit(event)
        except Exception as exc:
            if self.refusal is not None:
                raise self.refusal from None
            if not is_abort(exc, self.signal):
                raise _client_error(exc) from None
        finally:
            self._emit = None
            self.service._active.pop(self.agent.id, None)
        self.record = result.invocation if result is not None else None
        if self.refusal is not None:
            raise self.refusal
        finished = Finished(
            text="".join(state.texts),
            finish=self._finish_reason(result, state),
            # the run's own calls and its sub-agents' (delegation rolls them up)
            usage=result.invocation.total_usage if result is not None else None,
            model=self.prompt.model,
        )
        if self.served is not None:
            self.service.sessions.answered(self.served, self.response_id, self.prompt, finished)
        await emit(finished)
        return finished

    def _finish_reason(self, result: RunResult[Any] | None, state: _StepState) -> FinishReason:
        """How the run ended: a classified reply's kind, its deadline, a truncation, or
        ``stop``."""
        if result is None:
            return "timeout" if self.timed_out else "length"
        record = result.invocation
        while record.handoff is not None:  # the agent that answered last decides
            record = record.handoff
        failure = record.response_failure
        if failure is not None and record.outcome == "model_response_failure":
            return failure.kind
        if self.timed_out or "timeout" in (record.outcome, result.invocation.outcome):
            return "timeout"
        if (
            result.invocation.outcome != "completed"  # interrupted
            or record.outcome != "completed"
            or self.over_budget
            or state.last_stop == "length"
        ):
            return "length"
        return "stop"

    async def _streamed(self, emit: Emit, state: _StepState) -> RunResult[Any] | None:
        stream = self.agent.stream(self.prompt.message, signal=self.signal)
        chunks = stream.__aiter__()
        events = _translate(chunks, state)
        try:
            async for event in events:
                await emit(event)
        finally:
            with anyio.CancelScope(shield=True):
                await events.aclose()
                await _aclose(chunks)
        try:
            return stream.result
        except RuntimeError:  # the run never produced a result (cancelled before it began)
            return None

    async def close(self) -> None:
        """Release the model slot and dispose a per-request agent. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.service._model_slots[self.prompt.model].release(self.prompt.model)
        ledger, key, record = self.service.ledger, self.caller.key, self.record
        if ledger is not None and key is not None and record is not None:
            ledger.record(key, record.total_usage, run_cost(self.service.rt, record))
        with anyio.CancelScope(shield=True):
            for taken in self._handoffs:
                await self.service.rt.agents.dispose(taken, cancel_running=True)
            if self.served is None:
                await self.service.rt.agents.dispose(self.agent.id, cancel_running=True)

    def _handed_over(self, result: RunResult[Any]) -> Iterator[Sequence[SessionEvent]]:
        """The events each agent the run handed the conversation to wrote after it took
        over (it is disposed with the run)."""
        record = result.invocation.handoff
        while record is not None:
            agent = self.service.rt.agents.get(record.agent_id)
            if agent is not None:
                self._handoffs.append(agent.id)
                point = agent.lineage.fork_point or 0
                yield [event for event in agent.session.events if event.seq > point]
            record = record.handoff


@attrs.define(slots=True)
class _StepState:
    """What translating a run into events keeps between steps."""

    texts: list[str] = attrs.Factory(list)
    last_stop: str | None = None
    text_in_step: bool = False
    text_before: bool = False
    calls: dict[int, list[str]] = attrs.Factory(dict)

    def text(self, text: str) -> list[TextOut]:
        """The events for more text of the current step (a separator before a new step's)."""
        out = []
        if not self.text_in_step and self.text_before:
            out.append(TextOut(STEP_SEPARATOR))
        self.text_in_step = True
        out.append(TextOut(text))
        self.texts.extend(e.text for e in out)
        return out

    def end_step(self, stop: str | None) -> None:
        self.last_stop = stop
        self.text_before = self.text_before or self.text_in_step
        self.text_in_step = False


def _session_events(events: Sequence[SessionEvent], state: _StepState) -> Iterator[RunEvent]:
    """A finished run's events, read from its session (the same ones its stream gives)."""
    for event in events:
        data = event.data
        if isinstance(data, AssistantMessageEvent):
            message = data.message
            if message.text:
                yield from state.text(message.text)
            for call in message.tool_calls:
                yield ToolCallOut(call.id, call.name, dict(call.arguments))
            state.end_step(message.stop_reason)
        elif isinstance(data, ToolResultEvent):
            result = data.message
            yield ToolResultOut(result.call_id, result.name, result.status, result.text)


async def _translate(
    chunks: AsyncIterator[Any], state: _StepState
) -> AsyncGenerator[RunEvent, None]:
    """Stream chunks -> run events: step texts joined by a blank line, tool calls as one
    event each when their step finished."""
    async for chunk in chunks:
        if isinstance(chunk, TextDelta):
            for event in state.text(chunk.text):
                yield event
        elif isinstance(chunk, ToolCallStart):
            state.calls[chunk.index] = [chunk.id, chunk.name]
        elif isinstance(chunk, ToolCallDelta):
            state.calls.setdefault(chunk.index, ["", ""]).append(chunk.arguments)
        elif isinstance(chunk, FinishChunk):
            for call_id, name, *parts in state.calls.values():
                arguments, _raw = parse_tool_arguments("".join(parts))
                yield ToolCallOut(call_id, name, arguments)
            state.calls = {}
            state.end_step(chunk.stop_reason)
        elif isinstance(chunk, ToolResultChunk):
            yield ToolResultOut(chunk.call_id, chunk.name, chunk.status, chunk.text)
        elif isinstance(chunk, UsageChunk):
            yield UsageOut(chunk.usage)


async def _aclose(chunks: AsyncIterator[Any]) -> None:
    aclose = getattr(chunks, "aclose", None)
    if aclose is not None:
        await aclose()


def run_cost(rt: Runtime, record: RunRecord) -> Decimal | None:
    """USD cost of a run: each of its model calls, its sub-agents' and a handoff's, at their
    models' prices (None when none of them is priced)."""
    total: Decimal | None = None
    pending = [record]
    while pending:
        item = pending.pop()
        if item.model is not None:
            cost = rt.models.cost(item.model, item.usage)
            if cost is not None:
                total = cost if total is None else total + cost
        pending.extend(item.subagents)
        if item.handoff is not None:
            pending.append(item.handoff)
    return total


def _client_error(exc: Exception) -> ApiError:
    """What a client may learn about a failed run (the log gets the rest)."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, ContextLengthError):
        return ApiError(
            400,
            "the conversation is too long for the agent's model",
            code="context_length_exceeded",
        )
    if isinstance(exc, ExecutionSuspended):
        # a listener or approver paused the run for an outside answer: no server fault, but
        # nothing in these APIs can deliver that answer or continue the run
        _log.warning("a served run suspended (%s): %s", exc.code, exc)
        return ApiError(
            409,
            "the run suspended waiting for an outside answer (execution.suspended); "
            "this API cannot continue it",
            code="run_suspended",
        )
    if isinstance(exc, ProviderError):
        error = internal_error(exc)
        return ApiError(
            502, f"the agent's model provider failed ({error.message})", code="upstream_error"
        )
    return internal_error(exc)
