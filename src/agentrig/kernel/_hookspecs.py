# mypy: disable-error-code="empty-body"
# (hook specifications are signatures with docstrings; pluggy never calls their bodies)
"""The agentrig lifecycle hooks: one function per hook, each with its dispatch mode.

Implement any of them in a plugin with ``@agentrig.hookimpl`` (sync or ``async def``);
``tryfirst=True`` / ``trylast=True`` order an implementation as in pluggy.  What each
:class:`Mode` does with the implementations (``notify``, ``waterfall``, ``awaited``,
``first_result``, ``ordered``) is the table of ``docs/hooks.md`` and of DESIGN §4.4; the
kernel drives them in :mod:`agentrig.kernel._dispatch`.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from agentrig._markers import PROJECT, hookimpl, hookspec
from agentrig.kernel._payloads import (
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
    RegistrationReview,
    RequestConfig,
    RequestError,
    Retry,
    RuntimeStarted,
    SessionStart,
    ToolExecution,
    TurnStopping,
)

if TYPE_CHECKING:
    from agentrig.kernel._commands import Commands
    from agentrig.kernel._composition import Composition
    from agentrig.messages import ToolMessage

__all__ = ["PROJECT", "Mode", "hookimpl", "hookspec", "mode_of"]


class Mode(enum.Enum):
    """How the kernel dispatches a hook."""

    NOTIFY = "notify"
    WATERFALL = "waterfall"
    AWAITED = "awaited"
    FIRST_RESULT = "first_result"
    ORDERED = "ordered"


_F = TypeVar("_F", bound=Callable[..., Any])
_MODE_ATTR = "agentrig_mode"


def _spec(mode: Mode, *, firstresult: bool = False) -> Callable[[_F], _F]:
    """Declare a hook: its dispatch mode is data on the spec function (as pluggy keeps its
    ``agentrig_spec`` options there)."""

    def mark(function: _F) -> _F:
        setattr(function, _MODE_ATTR, mode)
        return hookspec(firstresult=firstresult)(function)

    return mark


def mode_of(hook: str) -> Mode | None:
    """The dispatch mode of agentrig hook ``hook`` (None: no such hook)."""
    spec = globals().get(hook)
    mode: Mode | None = getattr(spec, _MODE_ATTR, None)
    return mode


# ---- composition and the command line ------------------------------------------------------


@_spec(Mode.ORDERED)
def compose(payload: Composition) -> Awaitable[None] | None:
    """Build part of a runtime: register catalog entries, provide services, add listeners.

    Ordered: implementations run by phase (:data:`agentrig.kernel._composition.PHASES`; mark
    one with ``@compose_step(phase)``, default ``"tools"``), then in pluggy's order.  A step's
    exception fails the composition: the runtime is disposed and the error re-raised.
    """


@_spec(Mode.NOTIFY)
def register_commands(payload: Commands) -> None:
    """Add ``agentrig`` subcommands with ``payload.add(name, help=..., handler=...)``.

    Called when the command line is built, with the installed listener plugins loaded
    (the environment's plugin switches apply).  Notify: a failing plugin is reported on
    stderr and its commands are left out; the others still register.
    """


# ---- notify --------------------------------------------------------------------------------


@_spec(Mode.NOTIFY)
def runtime_started(payload: RuntimeStarted) -> None:
    """The runtime finished composing and sealed its catalogs. Notify; failures reported."""


@_spec(Mode.NOTIFY)
def agent_created(payload: AgentCreated) -> None:
    """An agent is fully set up and about to be published.

    Notify, with one exception: a *synchronous* listener's exception vetoes the publication
    (the agent is rolled back and the creation fails); an async listener's failure is only
    reported.  Use ``agent.inject()`` in ``session_start`` to seed context, not here.
    """


@_spec(Mode.NOTIFY)
def agent_disposed(payload: AgentDisposed) -> None:
    """An agent left the registry after its runs settled. Notify."""


@_spec(Mode.NOTIFY)
def agent_status(payload: AgentStatusChanged) -> None:
    """An agent went ``idle`` ⇄ ``running``. Notify."""


@_spec(Mode.NOTIFY)
def session_start(payload: SessionStart) -> None:
    """The agent's session began, once before its first turn. Notify (not a veto).

    The payload carries the ``agent`` and its ``runtime``.
    """


@_spec(Mode.NOTIFY)
def observe(payload: Observation) -> None:
    """Out-of-band observations. Notify.

    The loop emits ``model_call``, ``tool_call`` and ``turn`` when each finished (ids,
    provider, model, usage, timings, outcome and error type; never content), and ``inbox.*``.
    """


# ---- waterfall -----------------------------------------------------------------------------


@_spec(Mode.WATERFALL)
def pre_step(
    payload: PreStep, next: Callable[[PreStep], Awaitable[PreStepDecision]]
) -> PreStepDecision | Awaitable[PreStepDecision]:
    """Decide the proposed step: return ``Enter(messages)`` to open it, ``Reject()`` to not.

    Waterfall; the default enters the claimed messages unchanged.  The only serial chain
    before the request is derived.
    """


@_spec(Mode.WATERFALL)
def request_config(
    payload: RequestConfig, next: Callable[[RequestConfig], Awaitable[RequestConfig]]
) -> RequestConfig | Awaitable[RequestConfig]:
    """Replace the call configuration of a model request (model, limits, options).

    Waterfall; ``await next(payload)`` yields what the loop would use.  Model-visible content
    cannot be changed here.
    """


@_spec(Mode.WATERFALL)
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


@_spec(Mode.WATERFALL)
def request_error(
    payload: RequestError, next: Callable[[RequestError], Awaitable[Retry | None]]
) -> Retry | Awaitable[Retry | None] | None:
    """A model request failed: return ``Retry()`` to try again; the default (None) is terminal.

    Waterfall; runs while the failed turn's signal is still live.
    """


@_spec(Mode.WATERFALL)
def tool_execution(
    payload: ToolExecution, next: Callable[[ToolExecution], Awaitable[ToolMessage]]
) -> ToolMessage | Awaitable[ToolMessage]:
    """Around each tool call: rewrite its arguments, short-circuit a result, or observe.

    Waterfall; the default validates and runs the tool.  Runs after permission checks.
    """


# ---- awaited -------------------------------------------------------------------------------


@_spec(Mode.AWAITED)
def turn_stopping(payload: TurnStopping) -> Awaitable[None] | None:
    """The turn is about to close. Awaited, in order; steer the agent to keep the turn going.

    After every listener returned, the loop re-reads the inbox: fresh steering runs another
    step, none closes the turn.  Failures are recorded and reported.
    """


# ---- first result --------------------------------------------------------------------------


@_spec(Mode.FIRST_RESULT, firstresult=True)
def permission_approver(payload: PermissionQuestion) -> Any:
    """Answer a permission question: ``"allow"``, ``"deny"`` or ``("allow", "remember")``.

    First result: the first non-None answer wins; no answer at all means deny.
    """


@_spec(Mode.FIRST_RESULT, firstresult=True)
def elicitation(payload: ElicitationQuestion) -> Any:
    """Ask the person for the input an MCP server (or another source) requests.

    First result: the first :class:`ElicitationAnswer` wins.  No answer at all -- no person
    to ask (a script, a served request) -- is a ``decline``; the asker validates an accepted
    form against its schema before it uses it.  The ``run`` and ``chat`` commands answer on
    a terminal.
    """


@_spec(Mode.FIRST_RESULT, firstresult=True)
def registration_guard(payload: RegistrationReview) -> Any:
    """Judge a skill installed from the filesystem, after the deterministic scanner passed it.

    First result: the first :class:`agentrig.skills.Verdict` wins.  No answer at all, a
    raised error or anything but a verdict blocks the skill -- the guard fails closed.  The
    built-in ``skill-guard`` plugin answers with a model when ``[skills.guard]`` names one.
    """
