"""The Agent handle: identity, config, one session, an inbox, tools and status.

Its runs are driven by a :class:`~agentrig.agent._driver.RunDriver`: a run claims the
agent's slot (FIFO: later runs wait for earlier ones), drives one turn and returns a
:class:`~agentrig.agent.RunResult`.  Separate agents run concurrently.  Input that arrives
while the agent works goes to its inbox: ``steer`` enters the current turn at its next
step, ``followup`` queues a turn of its own, ``inject`` seeds context for the next request
without starting anything.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeVar, final, overload

import anyio
from pydantic import BaseModel

from agentrig.agent._context import ContextUsage, measure_context
from agentrig.agent._delegation import Delegations, Lineage, run_delegation
from agentrig.agent._dispatch import CallOutcome, unknown_tool
from agentrig.agent._driver import RunDriver, RunOptions, user_message
from agentrig.agent._inbox import Inbox
from agentrig.agent._invocation import ToolInvocation
from agentrig.agent._model_call import failed_call_event
from agentrig.agent._model_choice import active_config, switch_model
from agentrig.agent._observations import observe_direct_tool_call
from agentrig.agent._port import AgentPort
from agentrig.agent._results import RunResult, ToolCallRecord, ToolResult
from agentrig.agent._resume import Continuation
from agentrig.agent._run_queue import RUN_QUEUE
from agentrig.agent._runs import RunStream
from agentrig.agent._selection import ModelPreset, ModelSelection
from agentrig.agent._side_call import SideCall, complete_aside
from agentrig.cancel import CancelSignal, is_abort
from agentrig.errors import AgentrigError, UnknownIdError
from agentrig.ids import AgentId, ProviderId, SessionId, new_invocation_id
from agentrig.kernel import ContractViolation, ServiceKey
from agentrig.lifecycle import AgentStatus
from agentrig.llm import (
    ModelResponse,
    ReasoningEffort,
    ToolCallBlock,
    ToolSpec,
    UserMessage,
)
from agentrig.session import (
    ContextCompacted,
    CutOffTurn,
    LoadReport,
    Notice,
    NoticeKind,
    SystemPrompt,
    build_event,
)
from agentrig.tools import Tool, ToolDefinitionError, check_tool_contribution
from agentrig.tools.deferral import DeferralPolicy

# Provided by agentrig.journal's listener (that package imports this one, so the key of the
# service is named here too; a key's name is its identity).
_JOURNAL: ServiceKey[object] = ServiceKey("journal")

__all__ = ["Agent", "RunOptions", "RunStream"]

T = TypeVar("T", bound=BaseModel)


@final
class Agent:
    """A live agent: identity, session log, inbox, tools, status; its runs' driver."""

    def __init__(self, port: AgentPort, agent_id: AgentId) -> None:
        port.agent = self
        self._port = port
        self.runtime = port.runtime
        self._id = agent_id
        self.config = port.config
        self.session = port.session
        #: what ``resume`` loaded from the store (None for a fresh session)
        self.load_report: LoadReport | None = None
        #: the turn a stopped process left open, closed by ``resume`` before anything was sent
        self.cut_off: CutOffTurn | None = None
        self.inbox = Inbox(port.record_inbox)
        self._driver = RunDriver(self, port)

    # ---- identity -----------------------------------------------------------------------
    @property
    def id(self) -> AgentId:
        return self._id

    @property
    def session_id(self) -> SessionId:
        return self.session.id

    @property
    def status(self) -> AgentStatus:
        return self._port.status

    @property
    def journaled(self) -> bool:
        """Is an execution journal attached (it, not the transcript, settles interrupted work)?"""
        return self.runtime.services.has(_JOURNAL)

    @property
    def current_signal(self) -> CancelSignal | None:
        """The cancel signal of the run in progress (None while idle)."""
        return self._driver.current

    @property
    def lineage(self) -> Lineage:
        """Where this agent's session comes from: created by a caller, or delegated to by a
        parent (which one, and how deep in the chain)."""
        return self._port.delegations.lineage

    @property
    def delegations(self) -> Delegations:
        """Its delegation state: lineage, the children running now, and the records of the
        children its delegation tools ran during the current run (rolled up into its own)."""
        return self._port.delegations

    # ---- the model ------------------------------------------------------------------------
    @property
    def model(self) -> str:
        """The model the next round is sent to (before any ``request_config`` hook): the
        configured one until :meth:`set_model` or a hook's choice replaced it."""
        return active_config(self._port).model

    @property
    def provider_id(self) -> ProviderId:
        """The provider (``[providers.<id>]``) the next round is sent to."""
        return active_config(self._port).provider

    def set_model(
        self,
        model: str,
        *,
        provider: str | None = None,
        reasoning_effort: ReasoningEffort | Literal["keep"] | None = "keep",
    ) -> None:
        """Send this agent's next rounds to ``model`` (on ``provider``, default: the current
        one), from the next model round on -- a run in progress included; ``reasoning_effort``
        replaces the agent's effort too (``"keep"``: unchanged).

        Checked first: :class:`ModelChoiceError` (``model.unknown_provider``,
        ``model.unknown`` for a model a listing provider does not serve, ``model.incapable``
        for one that lacks what the agent's requests need); a disposed agent refuses.
        """
        if reasoning_effort == "keep":
            switch_model(self._port, model, provider)
        else:
            switch_model(self._port, model, provider, reasoning_effort)

    @property
    def selection(self) -> ModelSelection:
        """The provider, model and reasoning effort of the next round (a detached value)."""
        config = active_config(self._port)
        return ModelSelection(config.provider, config.model, config.reasoning_effort)

    def select(self, choice: ModelSelection | ModelPreset | str) -> ModelSelection:
        """Switch to a selection, a preset, or a preset by name (read from its file now);
        checked as :meth:`set_model` is.  A selection without an effort keeps the agent's."""
        if isinstance(choice, str):
            choice = self._port.runtime.model_selection.presets.resolve(choice)
        if isinstance(choice, ModelPreset):
            choice = choice.selection
        effort = choice.reasoning_effort
        if effort is None:
            switch_model(self._port, choice.model, choice.provider)
        else:
            switch_model(self._port, choice.model, choice.provider, effort)
        return self.selection

    def __repr__(self) -> str:
        return f"<Agent {self._id!r} session={self.session.id!r} {self._port.status}>"

    # ---- tools ----------------------------------------------------------------------------
    @property
    def deferral(self) -> DeferralPolicy:
        """How this agent defers tools (``[agents.x] deferral``)."""
        return self._port.offer.policy

    def all_tools(self) -> list[Tool]:
        return list(self._port.offer.tools.values())

    def offered_tools(self) -> list[Tool]:
        """The tools offered on the next request: re-read every round, deferred ones withheld,
        tools the permission rules deny outright never shown."""
        return list(self._port.offer.plan().offered)

    def withheld_tools(self) -> list[Tool]:
        """Deferred tools not loaded yet (what ``tool_search`` searches)."""
        return list(self._port.offer.plan().withheld)

    def load_tools(self, tool_ids: Sequence[str]) -> None:
        """Make deferred tools resident from the next request on."""
        self._port.offer.load(tool_ids)

    def replace_tools(self, tools: Sequence[Tool]) -> None:
        """Swap in a new tool set -- a plugin's toolset changed (an MCP server's list did).

        Takes effect at the next request; deferred tools loaded earlier stay loaded when
        they are still present.  A listener calls it between turns (``pre_step`` of step 1).
        """
        ids = [getattr(t, "id", None) for t in tools]
        twice = sorted({str(i) for i in ids if i is not None and ids.count(i) > 1})
        if twice:  # one id, one tool (before the contract check, which stops at the first)
            raise ToolDefinitionError(f"replace_tools: tool ids given twice: {', '.join(twice)}")
        try:
            checked = check_tool_contribution(tuple(tools)) if tools else ()
        except ContractViolation as exc:
            raise ToolDefinitionError(f"replace_tools: {exc}") from None
        self._port.offer.replace(checked)

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any], *, signal: CancelSignal | None = None
    ) -> ToolResult:
        """Invoke any of this agent's tools directly, through the same path a model's call
        takes (validation, permission gate, ``tool_execution`` hooks) -- without a model turn.

        Returns the fixed invocation result only on success.  A failure raises, with its own
        class: invalid arguments (the schema's error, before any permission question), a
        refusal (:class:`~agentrig.tools.ToolRefusedError`), the tool's own exception, or an
        error output (:class:`~agentrig.tools.ToolReportedError`).

        Deferred tools can be invoked without being loaded; no approver is injected, so a
        call that needs approval is refused unless an approver hook answers.
        """
        self._port.ensure_alive()
        tools = self._port.offer.tools
        tool = tools.get(name)
        if tool is None:
            raise UnknownIdError(
                f"agent {self._id!r} has no tool {name!r} (tools: {', '.join(sorted(tools))})",
                id=name,
                known=tuple(sorted(tools)),
                suggestion=None,
            )
        call = ToolCallBlock(id=new_invocation_id(), name=name, arguments=dict(arguments))
        outcome = await self.settle_call(call, signal=signal)
        if outcome.failure is not None:
            raise outcome.failure
        record = ToolCallRecord(
            invocation_id=outcome.invocation_id,
            agent_id=self._id,
            tool=name,
            started_at_ms=int(outcome.started_at * 1000),
            duration_ms=outcome.duration_ms,
            executed=outcome.executed,
        )
        return ToolResult(value=outcome.message, invocation=record)

    async def settle_call(
        self, call: ToolCallBlock, *, signal: CancelSignal | None = None
    ) -> CallOutcome:
        """Settle a model's tool call into exactly one result message, as the loop does.

        Never raises for the call's own failure (it is in the message and ``failure``); an
        unknown tool is an explicit skip.  Journal continuation replays calls through it.
        """
        self._port.ensure_alive()
        tools = self._port.offer.tools
        tool = tools.get(call.name)
        if tool is None:
            return CallOutcome(unknown_tool(call, list(tools)), executed=False)
        invocation = ToolInvocation(self, tool, call, signal or CancelSignal())
        outcome = await invocation.settle(self._port.gate)
        observe_direct_tool_call(self, call, outcome)
        return outcome

    def tool_spec(self, tool: Tool) -> ToolSpec:
        """The (unprojected) definition of ``tool`` for a request; built once per tool."""
        return self._port.offer.spec(tool)

    def tool_spec_chars(self, tool: Tool) -> int:
        """The estimated size of ``tool``'s definition in characters."""
        return self._port.offer.spec_chars(tool)

    # ---- the context window ---------------------------------------------------------------
    @property
    def context(self) -> ContextUsage:
        """How full the model's context window is for the next request: the provider's latest
        report plus an estimate of what came since (see :class:`ContextUsage`)."""
        port = self._port
        window = self.runtime.models.context_window(self.model)
        _, tool_chars = port.offer.request_specs(self.offered_tools())
        return measure_context(self.session, window, tool_chars=tool_chars)

    async def complete_aside(
        self, call: SideCall, *, signal: CancelSignal | None = None
    ) -> ModelResponse:
        """Ask the agent's model ``call``, apart from its conversation (a plugin's seam: an
        MCP server's sampling request).

        The call gets the agent's rules: its provider and model through the
        ``request_config`` waterfall (a listener that stops the run there stops this call),
        its output limit as a ceiling, the run's signal (``signal`` by default: the run in
        progress), and its usage logged (``model/side-call``) and counted in the run's
        record (``side_usage``, a part of ``usage``).  Neither the messages nor the reply
        enter the history.  Who may ask, and when, is the caller's decision.
        """
        return await complete_aside(self._port, call, signal)

    async def compact(
        self, instructions: str | None = None, *, signal: CancelSignal | None = None
    ) -> ContextCompacted | None:
        """Shorten the history now (``trigger: manual``), waiting for a run in progress.

        The ``compaction`` waterfall decides (the built-in strategy: older turns summarised,
        the newest ``compaction.keep_last`` messages kept; ``instructions`` say what the
        summary should keep).  Returns the logged ``context/compaction`` event, or None when
        nothing was compacted (nothing older than what is kept, a hook refused).
        """
        port = self._port
        port.ensure_alive()
        signal = signal or CancelSignal()
        async with self._driver.slot_held():
            try:
                return await port.compactor.compact(
                    self.context, trigger="manual", instructions=instructions, signal=signal
                )
            except Exception as exc:
                called = port.compactor.failed_call(exc)
                if called is not None and not (signal.cancelled or is_abort(exc, signal)):
                    # a failed summary call is logged like a failed round, then raised
                    await port.append(failed_call_event(*called, 1, exc))
                raise

    # ---- the log --------------------------------------------------------------------------
    async def flush(self) -> None:
        """Write events recorded from synchronous code (inbox splices) to the store."""
        await self._port.flush()

    # ---- stopping and notices ------------------------------------------------------------
    def request_stop(self, reason: str) -> None:
        """End the current run at its next step boundary, with ``reason`` for the user.

        Calls not yet dispatched are settled as not executed; the turn ends ``rejected`` with
        ``reason`` in its ``TurnEnd.detail`` and in ``RunRecord.stop_reason`` -- never in
        front of the model.  A hook's ``continue: false`` uses this.  Without a run in
        progress the request is dropped (there is nothing to stop).
        """
        driver = self._driver
        if driver.current is not None and driver.stop_request is None:
            driver.stop_request = reason

    @property
    def stop_requested(self) -> str | None:
        """The pending :meth:`request_stop` reason of the current run (``None``: none)."""
        return self._driver.stop_request

    async def note(self, text: str, *, source: str, kind: NoticeKind = "message") -> None:
        """Tell the user something the model must not see: a :class:`Notice` in the log,
        and in the current run's ``RunRecord.notices``."""
        await self._port.log(Notice(source=source, kind=kind, text=text))
        if self._driver.current is not None:
            self._driver.notices.append(f"{source}: {text}" if source else text)

    # ---- system prompt --------------------------------------------------------------------
    @property
    def system_prompt(self) -> str | None:
        return self._port.system_prompt

    async def set_system_prompt(self, text: str) -> None:
        """Replace the live system prompt; the very next request carries it."""
        self._port.system_prompt = text
        await self._port.log(build_event(SystemPrompt, {"text": text}))

    # ---- delivery ---------------------------------------------------------------------------
    def followup(self, text: str | UserMessage, *, source: str = "followup") -> str:
        """Queue a new turn for this input; returns its message id."""
        self._port.ensure_alive()
        message = user_message(text, source)
        self.inbox.append("next-turn", message)
        self._driver.schedule_drain()
        return message.id

    def steer(self, text: str | UserMessage, *, source: str = "steer") -> str:
        """Enter the current turn at its next step (or start a turn when idle)."""
        self._port.ensure_alive()
        message = user_message(text, source)
        self.inbox.append("next-step", message)
        self._driver.add_waker(message.id)
        if self._port.status == "idle":
            self._driver.schedule_drain()
        return message.id

    def inject(self, text: str | UserMessage, *, source: str = "inject") -> str:
        """Seed context for the next request without starting a turn."""
        self._port.ensure_alive()
        message = user_message(text, source)
        self.inbox.append("next-step", message)
        return message.id

    # ---- status ---------------------------------------------------------------------------
    @asynccontextmanager
    async def continue_run(self, signal: CancelSignal) -> AsyncIterator[Continuation]:
        """Hold this agent's run slot to continue an interrupted turn (what a journal does).

        Waits behind running and queued runs, like :meth:`run`; ``signal`` is the run's cancel
        signal (``current_signal`` while held).  See :class:`~agentrig.agent.Continuation`.
        """
        self._port.ensure_alive()
        async with self._driver.continue_run(signal) as continuation:
            yield continuation

    async def when_idle(self) -> None:
        """Wait until no run or queued turn is left."""
        port = self._port
        while port.status != "idle":
            if port.idle is None:
                port.idle = anyio.Event()
            await port.idle.wait()

    # ---- cancellation -------------------------------------------------------------------------
    def cancel(self, reason: object = "cancelled", *, keep_queued: bool = False) -> bool:
        """Abort the current turn; queued input is discarded unless ``keep_queued``."""
        if not keep_queued:
            self.inbox.clear()
        current = self._driver.current
        return current.cancel(reason) if current is not None else False

    # ---- runs -------------------------------------------------------------------------------
    @overload
    async def run(
        self,
        prompt: str | UserMessage,
        *,
        output_type: None = None,
        signal: CancelSignal | None = None,
        max_rounds: int | None = None,
        tool_choice: str | None = None,
        tool_only_completion: bool | None = None,
        output_retries: int | None = None,
        deadline: float | str | None = None,
    ) -> RunResult[str]: ...

    @overload
    async def run(
        self,
        prompt: str | UserMessage,
        *,
        output_type: type[T],
        signal: CancelSignal | None = None,
        max_rounds: int | None = None,
        tool_choice: str | None = None,
        tool_only_completion: bool | None = None,
        output_retries: int | None = None,
        deadline: float | str | None = None,
    ) -> RunResult[T]: ...

    async def run(
        self,
        prompt: str | UserMessage,
        *,
        output_type: type[T] | None = None,
        signal: CancelSignal | None = None,
        max_rounds: int | None = None,
        tool_choice: str | None = None,
        tool_only_completion: bool | None = None,
        output_retries: int | None = None,
        deadline: float | str | None = None,
    ) -> RunResult[str] | RunResult[T]:
        """Run one turn for ``prompt`` and return its result (see :class:`RunResult`).

        Runs on one agent are serialised FIFO.  A run whose ``signal`` is already set fails
        at once with :class:`~agentrig.errors.AbortError`, touching neither the provider nor
        the history; cancelling it while it runs returns an ``interrupted`` result.

        ``deadline`` (seconds, or ``"30s"``; default: the agent's ``deadline`` config) ends
        the run ``interrupted`` once it has run that long, with the reason in
        ``invocation.stop_reason`` and the session's ``turn/end``.
        """
        options = self._driver.options(
            max_rounds, tool_choice, tool_only_completion, output_type, output_retries, deadline
        )
        result: RunResult[str] | RunResult[T] = await self._driver.run(
            prompt, options, signal or CancelSignal(), None
        )
        return result

    def stream(
        self,
        prompt: str | UserMessage,
        *,
        signal: CancelSignal | None = None,
        max_rounds: int | None = None,
        tool_choice: str | None = None,
        tool_only_completion: bool | None = None,
        output_type: type[BaseModel] | None = None,
        deadline: float | str | None = None,
    ) -> RunStream[Any]:
        """Stream a run: iterate the chunks; ``stream.result`` holds the RunResult after.

        The run starts (and takes the agent's slot) only when iteration begins; leaving the
        iteration early cancels the run.
        """
        options = self._driver.options(
            max_rounds, tool_choice, tool_only_completion, output_type, None, deadline
        )
        return RunStream[Any](self._driver, prompt, options, signal or CancelSignal())

    async def submit(
        self, prompt: str, *, queue: str | None = None, run_id: str | None = None
    ) -> str:
        """Queue a run of this agent on ``prompt`` for a worker and return the run's id.

        The run is handed to the runtime's run queue (:data:`~agentrig.agent.RUN_QUEUE`,
        provided by a plugin such as ``agentrig-dbos``); without one this is refused with
        ``agent.no_run_queue`` rather than run here.
        """
        self._port.ensure_alive()
        runs = self.runtime.services.get(RUN_QUEUE)
        if runs is None:
            raise AgentrigError(
                f"agent {self._id!r} cannot submit a run: this runtime has no run queue; "
                "install agentrig-dbos and add a [dbos] table to the config",
                code="agent.no_run_queue",
                category="user",
            )
        return await runs.submit(self._id, prompt, queue=queue, run_id=run_id)

    # ---- delegation ---------------------------------------------------------------------------
    async def delegate(
        self, subagent: str, prompt: str, *, signal: CancelSignal | None = None
    ) -> RunResult[str]:
        """Hand ``prompt`` to a fresh ``subagent`` (one of ``[agents.<id>] subagents``), run
        it to completion and return its result; the child is disposed after.

        The child is a separate agent with its own session, whose :attr:`lineage` names this
        agent.  ``signal`` (default: this agent's running turn, if any) cancels the child.
        A :class:`~agentrig.agent.DelegationError` refuses an unknown sub-agent or one past
        the ``[delegation]`` limits.
        """
        self._port.ensure_alive()
        return await run_delegation(self, self._port.delegations, subagent, prompt, signal)

    # ---- disposal -----------------------------------------------------------------------------
    async def aclose(self, *, cancel_running: bool = False) -> None:
        """Let the running turn and the runs already waiting for the slot settle (or cancel
        the running one when ``cancel_running``), then release the session writer.
        New work is refused from the first call on. Idempotent.

        Pending inbox input is kept, not discarded: it is in the session log, so a resumed
        session finds it queued again (disposal is not a user's cancellation).
        """
        port = self._port
        if port.disposed:
            return
        port.disposed = True
        await self._driver.settle(cancel_running=cancel_running)
        await port.flush()
        if port.writer is not None:
            writer, port.writer = port.writer, None
            await writer.aclose()
