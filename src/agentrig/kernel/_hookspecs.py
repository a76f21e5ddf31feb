# mypy: disable-error-code="empty-body"
# (hook specifications are signatures with docstrings; pluggy never calls their bodies)
"""The hook mechanism's vocabulary, and the hooks about building and running the runtime.

A hook is a pluggy hookspec whose dispatch mode is data on the spec function
(:func:`declare_hook`).  What each :class:`Mode` does with the implementations (``notify``,
``waterfall``, ``awaited``, ``first_result``, ``ordered``) is the table of ``docs/hooks.md``;
:mod:`agentrig.kernel._dispatch` drives them.  The kernel declares only the hooks of its own
job here; the agent lifecycle's hooks (``agent_created`` ... ``elicitation``) are declared by
the layer that fires them, :mod:`agentrig.lifecycle`, and reach pluggy through the core
distribution's ``agentrig.seams`` entry point (see :func:`~agentrig.kernel._dispatch.spec_modules`).
"""

from __future__ import annotations

import enum
import types
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar, final

import attrs

from agentrig._markers import hookimpl, hookspec

if TYPE_CHECKING:
    from agentrig.kernel._commands import Commands
    from agentrig.kernel._composition import Composition

__all__ = ["Mode", "RegistrationReview", "RuntimeStarted", "declare_hook", "hookimpl", "modes_in"]


class Mode(enum.Enum):
    """How the kernel dispatches a hook."""

    NOTIFY = "notify"
    WATERFALL = "waterfall"
    AWAITED = "awaited"
    FIRST_RESULT = "first_result"
    ORDERED = "ordered"


_F = TypeVar("_F", bound=Callable[..., Any])
_MODE_ATTR: Final = "agentrig_mode"


def declare_hook(mode: Mode) -> Callable[[_F], _F]:
    """Declare a hook dispatched in ``mode``: the mode is data on the spec function (as pluggy
    keeps its own options there), and a first-result hook is pluggy's ``firstresult``."""

    def mark(function: _F) -> _F:
        setattr(function, _MODE_ATTR, mode)
        return hookspec(firstresult=mode is Mode.FIRST_RESULT)(function)

    return mark


def modes_in(module: types.ModuleType) -> dict[str, Mode]:
    """The hooks ``module`` declares with :func:`declare_hook`, by name, with their modes."""
    found = {name: getattr(value, _MODE_ATTR, None) for name, value in vars(module).items()}
    return {name: mode for name, mode in found.items() if isinstance(mode, Mode)}


# ---- payloads ------------------------------------------------------------------------------


@final
@attrs.frozen(slots=True)
class RuntimeStarted:
    """The runtime finished composing; its catalogs are sealed."""

    runtime: Any


@final
@attrs.frozen(slots=True)
class RegistrationReview:
    """Something about to be registered from outside the code (a skill folder): judge it.

    ``registration`` is an :class:`agentrig.skills.Registration` (kind, name, every text field
    a model would read, the SHA-256 of a skill's files); ``runtime`` is the runtime being
    composed (its providers are built).  Answer an :class:`agentrig.skills.Verdict`.
    """

    registration: Any
    runtime: Any


# ---- the hooks -----------------------------------------------------------------------------


@declare_hook(Mode.ORDERED)
def compose(payload: Composition) -> Awaitable[None] | None:
    """Build part of a runtime: register catalog entries, provide services, add listeners.

    Ordered: implementations run by phase (:data:`agentrig.kernel._composition.PHASES`; mark
    one with ``@compose_step(phase)``, default ``"tools"``), then in pluggy's order.  A step's
    exception fails the composition: the runtime is disposed and the error re-raised.
    """


@declare_hook(Mode.NOTIFY)
def register_commands(payload: Commands) -> None:
    """Add ``agentrig`` subcommands with ``payload.add(name, help=..., handler=...)``.

    Called when the command line is built, with the installed listener plugins loaded
    (the environment's plugin switches apply).  Notify: a failing plugin is reported on
    stderr and its commands are left out; the others still register.
    """


@declare_hook(Mode.NOTIFY)
def runtime_started(payload: RuntimeStarted) -> None:
    """The runtime finished composing and sealed its catalogs. Notify; failures reported."""


@declare_hook(Mode.FIRST_RESULT)
def registration_guard(payload: RegistrationReview) -> Any:
    """Judge a skill installed from the filesystem, after the deterministic scanner passed it.

    First result: the first :class:`agentrig.skills.Verdict` wins.  No answer at all, a
    raised error or anything but a verdict blocks the skill -- the guard fails closed.  The
    built-in ``skill-guard`` plugin answers with a model when ``[skills.guard]`` names one.
    """
