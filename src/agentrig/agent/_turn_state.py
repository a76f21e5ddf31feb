"""What a turn's parts are given: where the turn is, what it produced, its open calls.

The turn (:mod:`._turn`) owns one of each and hands them to its model round
(:mod:`._model_call`) and tool round (:mod:`._tool_round`):

* :class:`TurnContext` -- whose turn, which run, its signal and stream, and its position
  (turn and step numbers, written only by the turn);
* :class:`TurnOutcome` -- what the turn produced so far (final message, rounds, usage,
  refused calls), which the driver turns into the run's result;
* :class:`OpenCalls` -- the latest reply's calls still without a result, and how to give
  each its one "not executed" result.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, final

from agentrig.agent._dispatch import INTERRUPTED_TEXT, CallOutcome, not_executed
from agentrig.agent._results import (
    ModelResponseFailure,
    ReasoningAudit,
    RefusalCode,
    RefusedCall,
    RunOutcome,
    RunRecord,
    sum_usage,
)
from agentrig.cancel import CancelSignal
from agentrig.ids import AgentId, CallId, ProviderId, RunId, SessionId, new_invocation_id
from agentrig.llm import AssistantMessage, StreamChunk, ToolCallBlock, Usage
from agentrig.session import ToolResultEvent, TurnTrigger
from agentrig.tools import ToolRefusedError
from agentrig.tracing import TRACE_CONTEXT

if TYPE_CHECKING:
    from agentrig.agent._driver import RunOptions
    from agentrig.agent._port import AgentPort

__all__ = ["Emit", "Interrupted", "OpenCalls", "TurnContext", "TurnOutcome", "refusal"]

#: hands a chunk to the stream's consumer (waits while the consumer has no room)
Emit = Callable[[StreamChunk], Coroutine[Any, Any, None]]


class Interrupted(Exception):
    """Internal: the run's signal fired while the model was answering."""


@final
class TurnOutcome:
    """What a finished turn produced."""

    __slots__ = (
        "compaction_usages",
        "final",
        "interrupted",
        "model",
        "reasoning",
        "refused",
        "response_failure",
        "rounds",
        "stop_reason",
        "timed_out",
        "tool_results",
        "usages",
    )

    def __init__(self) -> None:
        self.final: AssistantMessage | None = None
        self.interrupted = False
        self.timed_out = False  # interrupted by the run's own deadline
        self.stop_reason: str | None = None  # the turn was rejected or stopped: why
        self.rounds = 0
        self.usages: list[Usage | None] = []
        self.compaction_usages: list[Usage | None] = []  # the summary calls' (in ``usages`` too)
        self.model: str | None = None
        self.reasoning: list[ReasoningAudit] = []  # each provider call's effort, in order
        self.tool_results = 0
        self.refused: list[RefusedCall] = []  # calls answered without running, in order
        self.response_failure: ModelResponseFailure | None = None  # a classified reply

    def ended(self) -> RunOutcome:
        """The run's outcome as its record says it."""
        if self.timed_out:
            return "timeout"
        if self.response_failure is not None and not self.interrupted:
            return "model_response_failure"
        return "interrupted" if self.interrupted else "completed"

    @property
    def text(self) -> str:
        return self.final.text if self.final is not None else ""

    def record(
        self,
        run_id: RunId,
        agent_id: AgentId,
        session_id: SessionId,
        turn: int,
        started: tuple[int, float],
        **more: Any,
    ) -> RunRecord:
        """The record of the run this turn was (``started``: epoch ms and perf counter at
        its start; ``more``: the record's other fields)."""
        return RunRecord(
            run_id=run_id,
            invocation_id=new_invocation_id(),
            agent_id=agent_id,
            session_id=session_id,
            turn=turn,
            started_at_ms=started[0],
            duration_ms=(time.perf_counter() - started[1]) * 1000,
            outcome=self.ended(),
            rounds=self.rounds,
            model=self.model,
            usage=sum_usage(self.usages),
            compaction_usage=sum_usage(self.compaction_usages),
            stop_reason=self.stop_reason,
            response_failure=self.response_failure,
            reasoning=tuple(self.reasoning),
            **more,
        )


@final
class TurnContext:
    """One turn's fixed facts and position, read by its parts."""

    __slots__ = (
        "agent",
        "emit",
        "observed",
        "options",
        "port",
        "provider_kinds",
        "signal",
        "started",
        "step",
        "trace",
        "trigger",
        "turn",
    )

    def __init__(
        self, port: AgentPort, options: RunOptions, signal: CancelSignal, emit: Emit | None
    ) -> None:
        self.port = port
        self.agent = port.agent
        self.options = options
        self.signal = signal
        self.emit = emit
        self.turn = 0
        self.step = 0
        self.trigger: TurnTrigger = "prompt"
        self.started = (0.0, 0.0)  # the turn's start: wall clock, performance counter
        # the turn's observation ids, made when a listener is there (see observed_ids())
        self.observed: tuple[str, str, str, AgentId] | None = None
        self.provider_kinds: dict[ProviderId, str | None] | None = None
        # a tracing plugin's context (None without one: then nothing opens a scope)
        self.trace = trace = port.runtime.services.get(TRACE_CONTEXT)
        if trace is not None and port.session.trace_ids is None:
            port.session.trace_ids = trace.ids

    @property
    def position(self) -> str:
        """``turn.step``: the prefix of the invocation ids of the step's calls."""
        return f"{self.turn}.{self.step}"

    def observed_ids(self) -> tuple[str, str, str, AgentId]:
        """The session id, agent name, run id and agent id of the turn's observations."""
        ids = self.observed
        if ids is None:
            agent = self.agent
            name = agent.config.name or agent.id
            ids = self.observed = (agent.session_id, name, self.options.run_id, agent.id)
        return ids


@final
class OpenCalls:
    """The latest reply's calls still without a result (by their index in the reply)."""

    __slots__ = ("_calls", "_outcome", "_port")

    def __init__(self, port: AgentPort, outcome: TurnOutcome) -> None:
        self._port = port
        self._outcome = outcome
        self._calls: dict[int, ToolCallBlock] = {}

    def open(self, calls: Iterable[ToolCallBlock]) -> None:
        for index, call in enumerate(calls):
            self._calls[index] = call

    def close(self, index: int) -> None:
        """Call ``index`` has its result."""
        self._calls.pop(index, None)

    def __contains__(self, index: int) -> bool:
        return index in self._calls

    def __bool__(self) -> bool:
        return bool(self._calls)

    async def settle_one(self, index: int, call: ToolCallBlock, reason: str) -> None:
        """Give one call its explicit not-executed result."""
        self._calls.pop(index, None)
        await self._port.append(ToolResultEvent(message=not_executed(call, reason)))
        refused = RefusedCall(CallId(call.id), call.name, "not_executed", reason)
        self._outcome.refused.append(refused)

    async def settle(self, reason: str = INTERRUPTED_TEXT) -> None:
        """Give every call still without a result its explicit not-executed result."""
        for index, call in list(self._calls.items()):
            await self.settle_one(index, call, reason)


def refusal(call: ToolCallBlock, outcome: CallOutcome) -> RefusedCall | None:
    """What ``outcome`` says about a call that did not run (None: it ran)."""
    message = outcome.message
    if isinstance(outcome.failure, ToolRefusedError):
        code: RefusalCode = "denied"  # the gate, or the tool's own authorize()
    elif outcome.executed:
        return None
    elif message.status == "skipped":
        code = "unknown_tool"
    elif message.status == "not_executed":
        code = "not_executed"
    else:
        code = "invalid_input"
    return RefusedCall(CallId(call.id), call.name, code, message.text)
