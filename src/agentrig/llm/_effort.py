"""Reasoning effort: how a provider resolved the requested level, and how it says so.

The level a request asks for (``ModelRequest.reasoning_effort``) is provider-neutral; each
provider resolves it against its own per-model table and puts its own native control on the
wire (OpenAI's ``reasoning_effort``, Anthropic's thinking budget ...).  What it did is data,
not a log line: the provider hands an :class:`EffortResolution` to :func:`report_effort` when
it sends the request, and the loop keeps it in the run's record.  A provider that never
reports is recorded as having applied nothing, so no audit can claim a control that was not
sent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, Literal, TypeAlias, final

import attrs

from agentrig.catalog import freeze_data
from agentrig.messages import ReasoningEffort

__all__ = [
    "EFFORT_LEVELS",
    "EffortDisposition",
    "EffortResolution",
    "capture_efforts",
    "report_effort",
    "resolve_effort_level",
]

EFFORT_LEVELS: tuple[ReasoningEffort, ...] = ("none", "minimal", "low", "medium", "high", "max")
"""The native-controllable levels, lowest first (``auto`` is a selection state, not a level)."""

EffortDisposition: TypeAlias = Literal["applied", "clamped", "fell_back", "not_applied"]
"""What became of a requested effort.

``applied``: the level went out as asked; ``clamped``: a lower level the model has went out
instead; ``fell_back``: nothing was sent, so the model's own default applies (``auto``, no
level asked for, or none at or below the request); ``not_applied``: the model or provider has
no effort control this request could use.
"""


def _frozen(value: Mapping[str, Any]) -> Mapping[str, Any]:
    frozen: Mapping[str, Any] = freeze_data(dict(value))
    return frozen


@final
@attrs.frozen(slots=True)
class EffortResolution:
    """One request's effort, resolved by its provider: what was asked, what it became, and the
    native control put on the wire (``native``: the body fields, empty when none was sent)."""

    requested: ReasoningEffort | None
    disposition: EffortDisposition
    #: the level in effect (the request's, or the one it was clamped to); None: the model's own
    effective: ReasoningEffort | None = None
    #: the request body fields that carry the control, as sent (read-only)
    native: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen)
    #: why it was not applied as asked (None when applied)
    reason: str | None = None

    def sent(self, native: Mapping[str, Any]) -> EffortResolution:
        """This resolution with the body fields the provider put on the wire for it."""
        return attrs.evolve(self, native=native)

    def dropped(self, reason: str) -> EffortResolution:
        """This resolution with nothing sent after all (``not_applied``, because ``reason``)."""
        return attrs.evolve(
            self, disposition="not_applied", effective=None, native={}, reason=reason
        )


def resolve_effort_level(
    requested: ReasoningEffort | None, supported: tuple[ReasoningEffort, ...] | None
) -> EffortResolution:
    """Resolve ``requested`` against a model's declared levels (``supported``; None: not
    declared): exact when the model has the level, otherwise clamped down to the highest level
    it has below; nothing sent for ``auto``, no request, or nothing at or below.  The native
    control is the provider's to add (:meth:`EffortResolution.sent`)."""
    if requested is None:
        return _NOT_ASKED
    if requested == "auto":
        return _AUTO
    if not supported:
        what = "declares no effort levels" if supported is None else "has no effort control"
        return EffortResolution(requested, "not_applied", reason=f"the model {what}")
    if requested in supported:
        return EffortResolution(requested, "applied", requested)
    declared = ", ".join(supported)
    for level in reversed(EFFORT_LEVELS[: EFFORT_LEVELS.index(requested)]):
        if level in supported:
            reason = f"{requested!r} is not a level of the model (it has: {declared})"
            return EffortResolution(requested, "clamped", level, reason=reason)
    reason = f"no level at or below {requested!r} (the model has: {declared})"
    return EffortResolution(requested, "fell_back", reason=reason)


# the two resolutions that depend on nothing but the request (frozen: one of each serves all)
_NOT_ASKED = EffortResolution(None, "fell_back", reason="no effort asked for")
_AUTO = EffortResolution("auto", "fell_back", reason="auto: the model's own default")

_REPORTS: ContextVar[list[EffortResolution] | None] = ContextVar(
    "agentrig_effort_reports", default=None
)


def report_effort(resolution: EffortResolution) -> None:
    """Say how the request being sent resolved its effort; call it when the body goes out.

    It is recorded by whoever is capturing in this context (the loop, around each provider
    call; :func:`capture_efforts` in a test), and costs nothing otherwise.
    """
    reports = _REPORTS.get()
    if reports is not None:
        reports.append(resolution)


def capture_efforts() -> contextlib.AbstractContextManager[list[EffortResolution]]:
    """Collect the :func:`report_effort` calls made inside the block, in order.

    A provider call reports once per request it sends (a retried request again); a provider
    that delegates (a fallback chain) reports each attempt -- the last is the one that
    answered.
    """
    return _Capture()


class _Capture:
    # A class rather than @contextmanager: the loop enters one per model call, and a
    # generator-based manager costs several times as much.
    __slots__ = ("reports", "token")

    def __enter__(self) -> list[EffortResolution]:
        self.reports: list[EffortResolution] = []
        self.token = _REPORTS.set(self.reports)
        return self.reports

    def __exit__(self, *exc: object) -> None:
        _REPORTS.reset(self.token)
