# mypy: disable-error-code="empty-body"
# (hook specifications are signatures with docstrings; pluggy never calls their bodies)
"""The agent lifecycle hooks: one function per hook, each with its dispatch mode.

Implement any of them in a plugin with ``@agentrig.hookimpl`` (sync or ``async def``);
``tryfirst=True`` / ``trylast=True`` order an implementation as in pluggy.  The agent layer
and the built-ins fire them; the kernel declares only the mechanism
(:func:`agentrig.kernel.declare_hook`, the dispatcher) and the hooks that build and run the
runtime.  This module reaches pluggy as a spec module of every plugin manager: the core
distribution names it in its ``agentrig.seams`` entry points (``lifecycle_hookspecs``), as
pytest's plugins hand theirs to ``add_hookspecs``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from agentrig.kernel import Mode, declare_hook
from agentrig.lifecycle._payloads import (
    AgentCreated,
    AgentDisposed,
    AgentStatusChanged,
    CompactionPlan,
    CompactionRequest,
    ElicitationQuestion,
    Observation,
    PermissionQuestion,
    PreStep,
    PreStepDecision,
    RequestConfig,
    RequestError,
    Retry,
    SessionStart,
    ToolExecution,
    TurnStopping,
)

if TYPE_CHECKING:
    from agentrig.messages import ToolMessage

__all__: list[str] = []  # hook specifications only: pluggy reads them, nobody imports them


# ---- notify --------------------------------------------------------------------------------


@declare_hook(Mode.NOTIFY)
def agent_created(payload: AgentCreated) -> None:
    """An agent is fully set up and about to be published.

    Notify, with one exception: a *synchronous* listener's exception vetoes the publication
    (the agent is rolled back and the creation fails); an async listener's failure is only
    reported.  Use ``agent.inject()`` in ``session_start`` to seed context, not here.
    """


@declare_hook(Mode.NOTIFY)
def agent_disposed(payload: AgentDisposed) -> None:
    """An agent left the registry after its runs settled. Notify."""


@declare_hook(Mode.NOTIFY)
def agent_status(payload: AgentStatusChanged) -> None:
    """An agent went ``idle`` ⇄ ``running``. Notify."""


@declare_hook(Mode.NOTIFY)
def session_start(payload: SessionStart) -> None:
    """The agent's session began, once before its first turn. Notify (not a veto).

    The payload carries the ``agent`` and its ``runtime``.
    """


@declare_hook(Mode.NOTIFY)
def observe(payload: Observation) -> None:
    """Out-of-band observations. Notify.

    The loop emits ``model_call``, ``tool_call`` and ``turn`` when each finished (ids,
    provider, model, usage, timings, outcome and error type; never content), and ``inbox.*``.
    """


# ---- waterfall -----------------------------------------------------------------------------


@declare_hook(Mode.WATERFALL)
def pre_step(
    payload: PreStep, next: Callable[[PreStep], Awaitable[PreStepDecision]]
) -> PreStepDecision | Awaitable[PreStepDecision]:
    """Decide the proposed step: return ``Enter(messages)`` to open it, ``Reject()`` to not.

    Waterfall; the default enters the claimed messages unchanged.  The only serial chain
    before the request is derived.
    """


@declare_hook(Mode.WATERFALL)
def request_config(
    payload: RequestConfig, next: Callable[[RequestConfig], Awaitable[RequestConfig]]
) -> RequestConfig | Awaitable[RequestConfig]:
    """Replace the call configuration of a model request (model, limits, options).

    Waterfall; ``await next(payload)`` yields what the loop would use.  Model-visible content
    cannot be changed here.
    """


@declare_hook(Mode.WATERFALL)
def compaction(
    payload: CompactionRequest,
    next: Callable[[CompactionRequest], Awaitable[CompactionPlan | None]],
) -> CompactionPlan | Awaitable[CompactionPlan | None] | None:
    """The history is to be shortened: return a ``CompactionPlan``, or ``None`` to leave it.

    Waterfall; the default is the agent's configured strategy (``[agents.<id>] compaction``:
    old tool results cleared, then older turns summarised).  A listener may plan on its own,
    call ``next`` with changed ``instructions``, or return ``None`` to refuse (a ``PreCompact``
    hook that blocks).
    """


@declare_hook(Mode.WATERFALL)
def request_error(
    payload: RequestError, next: Callable[[RequestError], Awaitable[Retry | None]]
) -> Retry | Awaitable[Retry | None] | None:
    """A model request failed: return ``Retry()`` to try again; the default (None) is terminal.

    Waterfall; runs while the failed turn's signal is still live.
    """


@declare_hook(Mode.WATERFALL)
def tool_execution(
    payload: ToolExecution, next: Callable[[ToolExecution], Awaitable[ToolMessage]]
) -> ToolMessage | Awaitable[ToolMessage]:
    """Around each tool call: rewrite its arguments, short-circuit a result, or observe.

    Waterfall; the default validates and runs the tool.  Runs after permission checks.
    """


# ---- awaited -------------------------------------------------------------------------------


@declare_hook(Mode.AWAITED)
def turn_stopping(payload: TurnStopping) -> Awaitable[None] | None:
    """The turn is about to close. Awaited, in order; steer the agent to keep the turn going.

    After every listener returned, the loop re-reads the inbox: fresh steering runs another
    step, none closes the turn.  Failures are recorded and reported.
    """


# ---- first result --------------------------------------------------------------------------


@declare_hook(Mode.FIRST_RESULT)
def permission_approver(payload: PermissionQuestion) -> Any:
    """Answer a permission question: ``"allow"``, ``"deny"`` or ``("allow", "remember")``.

    First result: the first non-None answer wins; no answer at all means deny.
    """


@declare_hook(Mode.FIRST_RESULT)
def elicitation(payload: ElicitationQuestion) -> Any:
    """Ask the person for the input an MCP server (or another source) requests.

    First result: the first :class:`ElicitationAnswer` wins.  No answer at all -- no person
    to ask (a script, a served request) -- is a ``decline``; the asker validates an accepted
    form against its schema before it uses it.  The ``run`` and ``chat`` commands answer on
    a terminal.
    """
