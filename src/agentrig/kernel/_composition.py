"""Composition as a plugin point: the ``compose`` hook, its phases and its payload.

A runtime is built by the ``compose`` implementations, awaited one after the other: by
phase (the order of :data:`PHASES`), pluggy's order within a phase.  The core's own steps
are ordinary ``agentrig.plugins`` entries, listed, disabled and replaced like any other;
a plain ``@hookimpl def compose(payload)`` runs in the ``"tools"`` phase.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar, final, get_args

import attrs

from agentrig._markers import hookimpl

if TYPE_CHECKING:
    from agentrig.kernel._runtime import Runtime

__all__ = ["DEFAULT_PHASE", "PHASES", "Composition", "Phase", "compose_step", "phase_of"]

Phase = Literal["check", "security", "providers", "stores", "tools", "agents", "finish"]
"""A composition phase.

``check``      validate the config against the installed plugins (nothing is built yet)
``security``   credential stores and sealers (providers and stores resolve through them)
``providers``  model providers and the model registry (``rt.models``)
``stores``     session stores
``tools``      tools and toolsets (the default phase of a third-party step)
``agents``     the agent registry (``rt.agents``) and the agents declared in config
``finish``     after everything is built, before the catalogs are sealed
"""

PHASES: tuple[Phase, ...] = get_args(Phase)
DEFAULT_PHASE: Phase = "tools"

_PHASE_ATTR = "agentrig_compose_phase"
_F = TypeVar("_F", bound=Callable[..., Any])


@final
@attrs.frozen(slots=True)
class Composition:
    """Payload of ``compose``: the runtime being built (catalogs and services still open)."""

    runtime: Runtime


def compose_step(
    phase: Phase = DEFAULT_PHASE, *, tryfirst: bool = False, trylast: bool = False
) -> Callable[[_F], _F]:
    """Mark ``fn(payload: Composition)`` (sync or async) as a ``compose`` step of ``phase``."""
    if phase not in PHASES:
        raise ValueError(f"unknown composition phase {phase!r} (phases: {', '.join(PHASES)})")

    def mark(fn: _F) -> _F:
        setattr(fn, _PHASE_ATTR, phase)
        marked: _F = hookimpl(specname="compose", tryfirst=tryfirst, trylast=trylast)(fn)
        return marked

    return mark


def phase_of(fn: Callable[..., Any]) -> Phase:
    """The phase a ``compose`` implementation runs in (:data:`DEFAULT_PHASE` when unmarked)."""
    phase: Phase = getattr(fn, _PHASE_ATTR, DEFAULT_PHASE)
    return phase
