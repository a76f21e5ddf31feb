"""What the parts of one turn share: its outcome, counters, open calls and log writer.

The turn is assembled from single-purpose parts (:mod:`._model_call`, :mod:`._tool_round`,
:mod:`._turn`) that are mixins of :class:`TurnState`: they read and write one object's
plain attributes, so the hot path pays no extra attribute hop or call for the split.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from agentrig.agent._dispatch import CallOutcome, not_executed
from agentrig.agent._results import RefusalCode, RefusedCall
from agentrig.cancel import CancelSignal
from agentrig.ids import AgentId, ProviderId
from agentrig.llm import AssistantMessage, StreamChunk, ToolCallBlock, Usage
from agentrig.session import ToolResultEvent, TurnTrigger
from agentrig.tools import ToolRefusedError

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent
    from agentrig.agent._driver import RunOptions

__all__ = ["Emit", "Interrupted", "TurnOutcome", "TurnState", "refusal"]

# Hands a chunk to the stream's consumer: None when it was taken at once (the common case,
# no coroutine per token), else an awaitable that completes once the consumer has room.
Emit = Callable[[StreamChunk], Awaitable[None] | None]


class TurnOutcome:
    """What a finished turn produced."""

    __slots__ = (
        "final",
        "interrupted",
        "model",
        "refused",
        "rounds",
        "stop_reason",
        "tool_results",
        "usages",
    )

    def __init__(self) -> None:
        self.final: AssistantMessage | None = None
        self.interrupted = False
        self.stop_reason: str | None = None  # the turn was rejected or stopped: why
        self.rounds = 0
        self.usages: list[Usage | None] = []
        self.model: str | None = None
        self.tool_results = 0
        self.refused: list[RefusedCall] = []  # calls answered without running, in order

    @property
    def text(self) -> str:
        return self.final.text if self.final is not None else ""


class Interrupted(Exception):
    """Internal: the run's signal fired while the model was answering."""


class TurnState:
    """One turn's shared state (the parts of the turn are its mixins)."""

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
        # ``self.log(data)`` appends one event: bound to the agent's writer here (one
        # coroutine frame per event instead of two)
        self.log: Callable[[Any], Awaitable[None]] = agent._write
        #: ``self.write(cls, **fields)`` logs ``cls(**fields)`` for the loop's own events,
        #: whose field types it vouches for (the payload is not built without a store):
        #: None when it is logged, else an awaitable that logs it (a store writes it)
        self.write: Callable[..., Awaitable[object] | None] = agent._write_trusted
        self.trigger: TurnTrigger = "prompt"
        self.started = (0.0, 0.0)  # the turn's start: wall clock, performance counter
        self.first_chunk = 0.0  # when the current model call's first chunk arrived
        #: the class of the anyio cancel scope of the turn's first provider call
        self.scope_class: type[anyio.CancelScope] | None = None
        # a tracing plugin's context (None without one: then nothing below opens a scope)
        # for the turn's observations, made when a listener is there: see observed_ids() and
        # _observations (set here, not as class defaults: the reads stay specialized)
        self.observed: tuple[str, str, str, AgentId] | None = None
        self.provider_kinds: dict[ProviderId, str | None] | None = None
        self.trace = trace = agent.runtime.trace
        if trace is not None and agent.session.trace_ids is None:
            agent.session.trace_ids = trace.ids

    async def settle_open_calls(self, reason: str = "not executed: interrupted") -> None:
        """Give every call still without a result its explicit not-executed result."""
        for call in list(self.open_calls.values()):
            await self.log(ToolResultEvent(message=not_executed(call, reason)))
            self.outcome.refused.append(RefusedCall(call.id, call.name, "not_executed", reason))
        self.open_calls.clear()

    def observed_ids(self) -> tuple[str, str, str, AgentId]:
        """The session id, agent name, run id and agent id of the turn's observations.

        Built once per turn (read it as ``state.observed or state.observed_ids()``).
        """
        ids = self.observed
        if ids is None:
            agent = self.agent
            ids = self.observed = (
                agent.session_id,
                agent.config.name or agent.id,
                self.options.run_id,
                agent.id,
            )
        return ids


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
    return RefusedCall(call.id, call.name, code, message.text)
