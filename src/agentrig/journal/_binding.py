"""Which execution a model call or an effect belongs to.

The loop hands a provider only the request and the signal, so the journal listener tells
the provider wrapper which agent and run it serves: its innermost ``request_config``
listener binds ``(agent, run)`` in the turn's context just before the provider is called.
The run is read from the session log (``turn/start`` carries the run id), tracked per
session as events are appended.
"""

from __future__ import annotations

import weakref
from contextvars import ContextVar
from typing import Any

import attrs

from agentrig.ids import CallId, InvocationId, RunId
from agentrig.journal._port import ExecutionJournal
from agentrig.journal._records import ExecutionLimits, ExecutionRecord, ExecutionState
from agentrig.session import SessionEvent, TurnEnd, TurnStart

__all__ = ["Binding", "RunTracker", "ensure_execution", "execution_record"]


@attrs.frozen(slots=True)
class Binding:
    """The execution a model call in this context belongs to."""

    agent: Any
    run_id: RunId
    provider: str
    model: str


BINDING: ContextVar[Binding | None] = ContextVar("agentrig_journal_binding", default=None)
RESUMED_CALL: ContextVar[tuple[InvocationId, CallId] | None] = ContextVar(
    "agentrig_journal_resumed_call", default=None
)
"""During continuation: ``(model call id, original tool call id)`` of the call being run."""
COMPACTING: ContextVar[bool] = ContextVar("agentrig_journal_compacting", default=False)
"""Inside the ``compaction`` waterfall: a model call is a summary call (``c<n>``), reused
from the journal when a restarted run asks the same again."""


class RunTracker:
    """The open run of each session (``turn/start`` opens it, ``turn/end`` closes it)."""

    def __init__(self) -> None:
        self._runs: weakref.WeakKeyDictionary[Any, RunId | None] = weakref.WeakKeyDictionary()
        self._pinned: weakref.WeakKeyDictionary[Any, RunId] = weakref.WeakKeyDictionary()

    def watch(self, session: Any) -> None:
        if session in self._runs:
            return
        self._runs[session] = _scan(session)
        ref = weakref.ref(session)

        def on_event(event: SessionEvent) -> None:
            owner = ref()
            if owner is None:
                return
            data = event.data
            if isinstance(data, TurnStart):
                self._runs[owner] = _branded(data.run_id)
            elif isinstance(data, TurnEnd):
                self._runs[owner] = None

        session.subscribe(on_event)

    def pin(self, session: Any, run_id: RunId | None) -> None:
        """Continuation: the session's calls belong to ``run_id`` until unpinned (None)."""
        if run_id is None:
            self._pinned.pop(session, None)
        else:
            self._pinned[session] = run_id

    def current(self, session: Any) -> RunId | None:
        pinned = self._pinned.get(session)
        if pinned is not None:
            return pinned
        if session not in self._runs:
            return _scan(session)
        return self._runs[session]


def _branded(run_id: str | None) -> RunId | None:
    # the session log keeps plain strings; a run id is branded where it enters the journal
    return RunId(run_id) if run_id is not None else None


def _scan(session: Any) -> RunId | None:
    for event in reversed(session.events):
        data = event.data
        if isinstance(data, TurnEnd):
            return None
        if isinstance(data, TurnStart):
            return _branded(data.run_id)
    return None


def execution_record(agent: Any, run_id: RunId, provider: str, model: str) -> ExecutionRecord:
    config = agent.config
    return ExecutionRecord(
        run_id=run_id,
        agent_id=agent.id,
        session_id=agent.session_id,
        provider=provider,
        model=model,
        limits=ExecutionLimits(
            max_rounds=config.max_rounds,
            identical_input_limit=config.identical_input_limit,
            tool_only_completion=config.tool_only_completion,
        ),
        tools=tuple(sorted(t.id for t in agent.all_tools())),
        resident=tuple(sorted(t.id for t in agent.offered_tools())),
    )


async def ensure_execution(journal: ExecutionJournal, binding: Binding) -> ExecutionState:
    """The bound execution's state, recording the execution first when it is new."""
    state = await journal.load(binding.run_id)
    if state is None:
        await journal.begin_execution(
            execution_record(binding.agent, binding.run_id, binding.provider, binding.model)
        )
        state = await journal.load(binding.run_id)
        assert state is not None
    return state
