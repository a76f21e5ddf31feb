# mypy: disable-error-code="empty-body"
# (hook specifications are signatures with docstrings; pluggy never calls their bodies)
"""The hook mechanism's vocabulary, and the hooks about building and running the runtime.

A hook is a pluggy hookspec whose dispatch mode is data on the spec function
(:func:`declare_hook`).  What each :class:`Mode` does with the implementations (``notify``,
``waterfall``, ``awaited``, ``first_result``, ``ordered``) is the table of ``docs/hooks.md``;
:mod:`agentrig.kernel._dispatch` drives them.  The kernel declares only the hooks of its own
job here (``compose``, ``runtime_started``); every other hook is declared by the layer that
fires it -- the agent lifecycle's by :mod:`agentrig.lifecycle`, ``registration_guard`` by
:mod:`agentrig.skills`, ``register_commands`` by :mod:`agentrig.cli` -- and reaches pluggy
through the core distribution's ``agentrig.seams`` entry points (see
:func:`~agentrig.kernel._dispatch.spec_modules`).
"""

from __future__ import annotations

import enum
import types
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar, final

import attrs

from agentrig._markers import hookimpl, hookspec

if TYPE_CHECKING:
    from agentrig.kernel._composition import Composition

__all__ = ["Mode", "RuntimeStarted", "declare_hook", "hookimpl", "modes_in"]


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


# ---- the hooks -----------------------------------------------------------------------------


@declare_hook(Mode.ORDERED)
def compose(payload: Composition) -> Awaitable[None] | None:
    """Build part of a runtime: register catalog entries, provide services, add listeners.

    Ordered: implementations run by phase (:data:`agentrig.kernel._composition.PHASES`; mark
    one with ``@compose_step(phase)``, default ``"tools"``), then in pluggy's order.  A step's
    exception fails the composition: the runtime is disposed and the error re-raised.
    """


@declare_hook(Mode.NOTIFY)
def runtime_started(payload: RuntimeStarted) -> None:
    """The runtime finished composing and sealed its catalogs. Notify; failures reported."""
