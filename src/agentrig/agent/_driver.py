"""The run driver: what turns an :class:`~agentrig.agent.Agent` handle's calls into runs.

It owns the agent's FIFO run slot (runs wait for earlier ones), the turns queued by
``followup``/``steer`` (drained in the background), the cancel signal, stop request and
notices of the run in progress, per-run options and deadlines, and the run record.  The
handle keeps identity, config, session and inbox; what the driver and the turn change of
the agent (status, log writes, turn counter) they change through its
:class:`~agentrig.agent._port.AgentPort`.  A turn is a :class:`~agentrig.agent._turn.Turn`.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, final

import anyio
import attrs
from pydantic import BaseModel

from agentrig.agent._deadline import with_deadline
from agentrig.agent._handoff import hand_off
from agentrig.agent._results import RunResult, sum_usage
from agentrig.agent._resume import Continuation
from agentrig.agent._structured import finish_structured
from agentrig.agent._turn import Turn, run_turn
from agentrig.agent._turn_state import Emit
from agentrig.cancel import CancelSignal
from agentrig.diagnostics import get_logger
from agentrig.errors import AgentrigError
from agentrig.ids import RunId, new_run_id
from agentrig.kernel import parse_duration
from agentrig.llm import UserMessage
from agentrig.session import TurnTrigger

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent
    from agentrig.agent._port import AgentPort

__all__ = ["RunDriver", "RunOptions", "user_message"]

_log = get_logger("agent")


@attrs.frozen(slots=True)
class RunOptions:
    """Per-run settings (run-scoped values win over the agent's config)."""

    run_id: RunId
    max_rounds: int
    tool_choice: str | None = None
    tool_only_completion: bool = False
    output_type: type[BaseModel] | None = None
    output_retries: int = 2
    #: seconds the run may take before it ends ``interrupted`` (None: no deadline)
    deadline: float | None = None


def user_message(text: str | UserMessage, source: str) -> UserMessage:
    """``text`` as a user message from ``source`` (a message is taken as it is)."""
    return text if isinstance(text, UserMessage) else UserMessage.of(text, source=source)


class _SlotGuard:
    """Hold an agent's FIFO slot, keeping its status in step."""

    __slots__ = ("driver",)

    def __init__(self, driver: RunDriver) -> None:
        self.driver = driver

    async def __aenter__(self) -> None:
        driver = self.driver
        driver.waiting += 1
        driver.port.set_status("running")
        try:
            await driver.slot().acquire()
        except BaseException:
            # cancelled while waiting for the slot: nothing ran, so the status falls back
            driver.waiting -= 1
            driver.maybe_idle()
            raise
        driver.waiting -= 1

    async def __aexit__(self, *exc: object) -> None:
        driver = self.driver
        port = driver.port
        try:
            if port.writer is not None and port.pending:
                # shielded: a run cancelled by its caller still persists what it recorded
                with anyio.CancelScope(shield=True):
                    await port.flush()
        finally:
            driver.release_slot()
            driver.maybe_idle()


@final
class RunDriver:
    """One agent's runs: the FIFO slot, queued turns and the run in progress."""

    __slots__ = (
        "_slot",
        "agent",
        "current",
        "drain_scheduled",
        "notices",
        "port",
        "stop_request",
        "waiting",
        "wakers",
    )

    def __init__(self, agent: Agent, port: AgentPort) -> None:
        self.agent = agent
        self.port = port
        # the FIFO run slot, made when a run takes it and dropped when the last run let it
        # go: an idle agent holds no lock (an asyncio-backed one is ~760 bytes)
        self._slot: anyio.Lock | None = None
        self.waiting = 0
        #: the cancel signal of the run in progress (None while idle)
        self.current: CancelSignal | None = None
        self.stop_request: str | None = None  # request_stop(): end the run at its next boundary
        self.notices: list[str] = []  # what the current run told the user (note())
        self.drain_scheduled = False
        #: pending next-step ids that asked for a turn (steer); made by the first
        self.wakers: set[str] | None = None

    def options(
        self,
        max_rounds: int | None,
        tool_choice: str | None,
        tool_only_completion: bool | None,
        output_type: type[BaseModel] | None,
        output_retries: int | None,
        deadline: float | str | None,
    ) -> RunOptions:
        config = self.agent.config
        return RunOptions(
            run_id=new_run_id(),
            max_rounds=config.max_rounds if max_rounds is None else max_rounds,
            tool_choice=tool_choice,
            tool_only_completion=(
                config.tool_only_completion
                if tool_only_completion is None
                else tool_only_completion
            ),
            output_type=output_type,
            output_retries=(
                config.structured_output_retries if output_retries is None else output_retries
            ),
            deadline=config.deadline if deadline is None else _seconds(deadline),
        )

    # ---- the slot -------------------------------------------------------------------------
    def slot(self) -> anyio.Lock:
        """The run slot (made on first use; see ``release_slot``)."""
        slot = self._slot
        if slot is None:
            # fast_acquire: a free slot is taken without a trip through the event loop (a
            # cancelled caller is still refused at the acquire)
            slot = self._slot = anyio.Lock(fast_acquire=True)
        return slot

    def release_slot(self) -> None:
        """Let the slot go; a slot nobody holds or waits for is dropped (made anew later)."""
        slot = self.slot()
        slot.release()
        if not slot.locked() and not slot.statistics().tasks_waiting:
            self._slot = None

    def slot_held(self) -> _SlotGuard:
        return _SlotGuard(self)

    def maybe_idle(self) -> None:
        port = self.port
        slot = self._slot
        if (slot is not None and slot.locked()) or self.waiting or self.drain_scheduled:
            return
        if not port.disposed and not port.runtime.closed and self.has_waking_input():
            # a steer or followup arrived after the last drain: it gets a turn of its own
            self.schedule_drain()
            return
        port.set_status("idle")

    @asynccontextmanager
    async def continue_run(self, signal: CancelSignal) -> AsyncIterator[Continuation]:
        async with self.slot_held():
            self.current = signal
            try:
                yield Continuation(self.port, signal)
            finally:
                self.current = None

    async def settle(self, *, cancel_running: bool) -> None:
        """Let the running turn and the runs waiting for the slot end (disposal)."""
        if cancel_running and self.current is not None:
            self.current.cancel("agent disposed")
        await self.slot().acquire()
        self.release_slot()
        self.maybe_idle()  # the slot was handed to us, so the last run could not go idle

    # ---- queued turns (followup, steer) ----------------------------------------------------
    def has_waking_input(self) -> bool:
        """Is input pending that asked for a turn (a followup, or a steer not yet entered)?

        Injected context waits for the next turn without starting one.
        """
        inbox = self.agent.inbox
        if inbox.has("next-turn"):
            return True
        if self.wakers:
            self.wakers &= {m.id for m in inbox.pending("next-step")}
        return bool(self.wakers)

    def add_waker(self, message_id: str) -> None:
        """``message_id`` (pending next-step input) asked for a turn of its own."""
        if self.wakers is None:
            self.wakers = set()
        self.wakers.add(message_id)

    def schedule_drain(self) -> None:
        if self.drain_scheduled:
            return
        self.drain_scheduled = True
        self.port.set_status("running")
        self.agent.runtime.spawn(self._drain)

    async def _drain(self) -> None:
        agent = self.agent
        try:
            while self.has_waking_input():
                options = self.options(None, None, None, None, None, None)
                signal = CancelSignal()
                async with self.slot_held():
                    if self.port.disposed:
                        break  # disposed while waiting: the input stays pending (and logged)
                    batch = agent.inbox.claim(turn_boundary=True)
                    if not batch:
                        break
                    trigger: TurnTrigger = "followup" if batch[0].source != "steer" else "steer"
                    self.current = signal
                    try:
                        turn = functools.partial(self._queued_turn, batch, trigger, options)
                        await with_deadline(options.deadline, signal, turn)
                    except Exception:
                        # no caller awaits a queued turn: its failure is in its turn/end event
                        # (when that could be written) and goes to the log, never further
                        _log.warning(
                            "agent %r: a queued %s turn failed", agent.id, trigger, exc_info=True
                        )
                    finally:
                        self.current = None
                        self.stop_request = None
                        self.notices = []
        finally:
            self.drain_scheduled = False
            self.maybe_idle()

    async def _queued_turn(
        self,
        batch: tuple[UserMessage, ...],
        trigger: TurnTrigger,
        options: RunOptions,
        signal: CancelSignal,
    ) -> None:
        await run_turn(self.port, batch, trigger, options, signal, None)
        # a transfer_to_ call of a queued turn: the target takes over (nobody awaits it; it
        # stays live with the conversation, as after any handoff)
        await hand_off(self.agent, options, signal, None)

    # ---- a run ------------------------------------------------------------------------------
    async def run(
        self,
        prompt: str | UserMessage,
        options: RunOptions,
        signal: CancelSignal,
        emit: Emit | None,
    ) -> Any:
        agent = self.agent
        port = self.port
        port.ensure_alive()
        if signal.cancelled:
            raise signal.abort_error()
        started_ms = int(time.time() * 1000)
        started = time.perf_counter()
        message = user_message(prompt, "user")
        async with self.slot_held():
            if signal.cancelled:
                raise signal.abort_error()
            self.current = signal
            self.notices = []
            port.delegations.take_finished()  # left by direct tool calls: not this run's
            port.side_usages.clear()  # likewise
            port.delegations.handoff = None  # asked for outside a run (a continuation): stale
            port.delegations.handoff_call = None
            try:

                async def body(own: CancelSignal) -> tuple[Any, Any, int, Any]:
                    turn = Turn(port, options, own, emit)
                    outcome = await turn.run((message,), "prompt")
                    handed = await hand_off(agent, options, own, emit)  # a transfer_to_ call
                    if handed is not None:
                        return outcome, handed.value, 0, handed
                    value, attempts = await finish_structured(port, outcome, options, own, emit)
                    return outcome, value, attempts, None

                run = await with_deadline(options.deadline, signal, body)
                outcome, value, attempts, handed = run
            finally:
                self.current = None
                self.stop_request = None
                notices, self.notices = tuple(self.notices), []
                side, port.side_usages = port.side_usages, []
        outcome.usages.extend(side)  # the side calls are the run's too
        record = outcome.record(
            options.run_id,
            agent.id,
            agent.session.id,
            port.turns,
            (started_ms, started),
            structured_attempts=attempts,
            notices=notices,
            subagents=port.delegations.take_finished(),
            side_usage=sum_usage(side),
            handoff=handed.invocation if handed is not None else None,
        )
        refused = tuple(outcome.refused) + (handed.refused if handed is not None else ())
        return RunResult(value=value, invocation=record, refused=refused)


def _seconds(deadline: float | str) -> float:
    try:
        return parse_duration(deadline)
    except ValueError as exc:
        raise AgentrigError(f"deadline: {exc}", code="loop.deadline_invalid") from None
