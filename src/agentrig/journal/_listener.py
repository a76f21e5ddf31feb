"""The journal's listener plugin: binds model calls to runs and journals every effect."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agentrig._markers import hookimpl
from agentrig.cancel import is_abort
from agentrig.errors import AgentrigError
from agentrig.ids import CallId, InvocationId, RunId
from agentrig.journal._binding import (
    BINDING,
    COMPACTING,
    RESUMED_CALL,
    Binding,
    RunTracker,
    ensure_execution,
)
from agentrig.journal._errors import JournalError
from agentrig.journal._guard import durable
from agentrig.journal._port import ExecutionJournal
from agentrig.journal._records import ToolIntent, ToolSettlement, arguments_of
from agentrig.kernel import Composition, ServiceKey, compose_step
from agentrig.lifecycle import (
    CompactionPlan,
    CompactionRequest,
    ExecutionControlError,
    RequestConfig,
    SessionStart,
    ToolExecution,
)
from agentrig.llm import ToolMessage
from agentrig.tools import is_idempotent

__all__ = ["JOURNAL", "JournalListener"]

JOURNAL: ServiceKey[JournalListener] = ServiceKey("journal")
"""The runtime service under which the attached listener is found (``rt.services``)."""


def _error_text(error: BaseException) -> str:
    # the same rendering the loop gives a failed call
    if isinstance(error, AgentrigError):
        return f"{error.code}: {error}"
    return f"{type(error).__name__}: {error}"


def _attempt_id(state: Any, invocation_id: InvocationId, resumed: bool, tool: Any) -> InvocationId:
    """The id the effect's intent is journaled under: its own, or -- when continuation runs
    again an idempotent tool's effect a crash cut off -- ``<id>#<attempt>``."""
    effect = state.effects.get(invocation_id) if resumed else None
    if effect is None or effect.result is not None or tool is None or not is_idempotent(tool):
        return invocation_id  # a second start of anything else is refused by the journal
    return InvocationId(f"{invocation_id}#{effect.attempt + 1}")


class JournalListener:
    """Listener plugin of one journal (register it with ``plugins=[("journal", it)]``).

    * ``request_config`` (innermost): binds the coming model call to its agent and run, so
      the :class:`~agentrig.journal.JournaledProvider` knows what it journals;
    * ``tool_execution`` (innermost, so it sees the arguments other listeners rewrote): the
      ``tool/intent`` is durable before the tool starts, the ``tool/result`` after it settled.
      A failing tool's result is settled here as the error result the model sees, so the
      journal holds exactly that message.  Continuation running again an idempotent tool's
      effect a crash cut off journals it as the next attempt (``<id>#<n>``), settled under
      the effect's own id.  A failed write raises
      :class:`~agentrig.journal.JournalWriteError` and fails the run.

    * ``compaction`` (outermost): a model call made while the history is compacted is the
      run's summary call (``c<n>``); one a restarted run asks again with the same request is
      answered from the journal, never sent twice.

    A direct ``agent.call_tool`` or ``agent.compact()`` outside any run is not journaled (no
    execution owns it).
    """

    def __init__(self, journal: ExecutionJournal) -> None:
        self.journal = journal
        self.tracker = RunTracker()

    def __repr__(self) -> str:
        return f"<JournalListener {self.journal!r}>"

    # ---- lifecycle -----------------------------------------------------------------------------
    @compose_step("finish")
    def compose(self, payload: Composition) -> None:
        services = payload.runtime.services
        if services.has(JOURNAL):
            raise JournalError("a runtime takes one journal; another is already attached")
        services.provide(JOURNAL, self, source="journal")

    @hookimpl
    def session_start(self, payload: SessionStart) -> None:
        session = getattr(payload.agent, "session", None)
        if session is not None:
            self.tracker.watch(session)

    # ---- binding model calls ------------------------------------------------------------------
    @hookimpl(trylast=True)
    async def request_config(
        self, payload: RequestConfig, next: Callable[[RequestConfig], Awaitable[RequestConfig]]
    ) -> RequestConfig:
        agent: Any = payload.agent
        run_id = self.tracker.current(agent.session)
        BINDING.set(
            None
            if run_id is None
            else Binding(agent=agent, run_id=run_id, provider=payload.provider, model=payload.model)
        )
        return await next(payload)

    @hookimpl(tryfirst=True)
    async def compaction(
        self,
        payload: CompactionRequest,
        next: Callable[[CompactionRequest], Awaitable[CompactionPlan | None]],
    ) -> CompactionPlan | None:
        agent: Any = payload.agent
        run_id = self.tracker.current(agent.session)
        config = agent.config
        binding = None
        if run_id is not None:
            binding = Binding(
                agent=agent, run_id=run_id, provider=config.provider, model=config.model
            )
        bound = BINDING.set(binding)
        token = COMPACTING.set(True)
        try:
            return await next(payload)
        finally:
            COMPACTING.reset(token)
            BINDING.reset(bound)

    # ---- journaling effects -------------------------------------------------------------------
    @hookimpl(trylast=True)
    async def tool_execution(
        self, payload: ToolExecution, next: Callable[[ToolExecution], Awaitable[ToolMessage]]
    ) -> ToolMessage:
        agent: Any = payload.agent
        run_id = self.tracker.current(agent.session)
        if run_id is None:
            return await next(payload)
        config = agent.config
        binding = Binding(agent=agent, run_id=run_id, provider=config.provider, model=config.model)
        state = await durable(ensure_execution(self.journal, binding), f"execution {run_id}")
        resumed = RESUMED_CALL.get()
        if resumed is not None:
            model_call_id: InvocationId | None
            model_call_id, call_id = resumed
        else:
            call_id = CallId(payload.call.id)
            latest = state.latest_settled()
            model_call_id = None
            answer = latest.result.message if latest and latest.result else None
            if answer is not None and any(c.id == call_id for c in answer.tool_calls):
                model_call_id = latest.call_id if latest else None
        invocation_id = InvocationId(
            f"{model_call_id}/{call_id}" if model_call_id else f"direct/{call_id}"
        )
        name = payload.call.name
        intent = ToolIntent(
            run_id=run_id,
            invocation_id=_attempt_id(state, invocation_id, resumed is not None, payload.tool),
            model_call_id=model_call_id,
            call_id=call_id,
            tool=name,
            arguments=arguments_of(payload.arguments),
        )
        await durable(self.journal.tool_intent(intent), f"tool/intent:{run_id}/{invocation_id}")
        # the resumed call is this one: a call the tool makes in turn (a delegated child's)
        # is journaled as its own, never under this call's identity
        consumed = RESUMED_CALL.set(None) if resumed is not None else None
        try:
            message = await next(payload)
        except ExecutionControlError:
            raise  # the effect's outcome is unknown to the journal: reconciliation decides
        except Exception as exc:
            if is_abort(exc, payload.signal):
                text = f"interrupted while running: {_error_text(exc)}"
            else:
                text = _error_text(exc)
            message = ToolMessage.of(call_id, name, text, status="error")
        except BaseException as exc:  # backend cancellation: settle, then let it through
            message = ToolMessage.of(
                call_id, name, f"interrupted while running: {_error_text(exc)}", status="error"
            )
            await self._settle(run_id, invocation_id, message)
            raise
        finally:
            if consumed is not None:
                RESUMED_CALL.reset(consumed)
        if not isinstance(message, ToolMessage):
            return message  # type: ignore[unreachable]  # the loop reports the broken contract
        message = message.model_copy(update={"call_id": call_id, "name": name})
        await self._settle(run_id, invocation_id, message)
        return message

    async def _settle(
        self, run_id: RunId, invocation_id: InvocationId, message: ToolMessage
    ) -> None:
        settlement = ToolSettlement(run_id=run_id, invocation_id=invocation_id, message=message)
        await durable(self.journal.tool_result(settlement), f"tool/result:{run_id}/{invocation_id}")
