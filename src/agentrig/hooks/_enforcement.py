"""The per-event enforcement posture and its one predicate, :func:`enforces`.

Whether a hook's *error* outcome (no verdict) blocks the operation is decided per event, and
recorded together with what that event's fire site can do: does it await the hooks' result,
and does it inspect it?  An event may enforce only when its fire site does both -- marking
an event "enforcing" whose fire site cannot act on the result would change nothing while
reading as though a gate had been switched on.  In agentrig only tool-use gating
(``PreToolUse``) fails closed on an error; every other event is advisory.

Consumers ask :func:`enforces`; nobody re-derives the rule from the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import attrs

__all__ = ["ENFORCEMENT", "EventPosture", "enforces", "posture"]


@attrs.frozen(slots=True)
class EventPosture:
    """What an event's fire site does with the hooks' combined result."""

    awaits: bool  # the fire site waits for the hooks to finish
    inspects: bool  # ... and reads what they decided
    enforces: bool  # ... and an error outcome (no verdict) blocks the operation

    def __attrs_post_init__(self) -> None:
        if self.enforces and not (self.awaits and self.inspects):
            raise ValueError("an event can enforce only if its fire site awaits and inspects")


_ADVISORY_AWAITED = EventPosture(awaits=True, inspects=True, enforces=False)
_FIRE_AND_FORGET = EventPosture(awaits=False, inspects=False, enforces=False)

ENFORCEMENT: Mapping[str, EventPosture] = MappingProxyType(
    {
        # the tool-use gate: awaits, inspects, and refuses the call when no verdict decodes
        "PreToolUse": EventPosture(awaits=True, inspects=True, enforces=True),
        # the tool already ran: a block or additionalContext is fed back, nothing to refuse
        "PostToolUse": _ADVISORY_AWAITED,
        "PostToolUseFailure": _ADVISORY_AWAITED,
        # a stated block is honoured (prompt refused / stop refused); an error is not one
        "UserPromptSubmit": _ADVISORY_AWAITED,
        "Stop": _ADVISORY_AWAITED,
        "SubagentStop": _ADVISORY_AWAITED,
        # additionalContext is read; nothing to refuse
        "SessionStart": _ADVISORY_AWAITED,
        "SubagentStart": _ADVISORY_AWAITED,
        # notifications only
        "SessionEnd": _FIRE_AND_FORGET,
        "Notification": _FIRE_AND_FORGET,
        # a stated block leaves the history as it is; an error is not one
        "PreCompact": _ADVISORY_AWAITED,
        # awaited (it runs before the compaction is logged), read for its notices only
        "PostCompact": EventPosture(awaits=True, inspects=False, enforces=False),
    }
)
"""Event name -> posture.  An event missing here is advisory and not awaited."""


def posture(event: str) -> EventPosture:
    """The posture of ``event`` (fire-and-forget for an event the table does not list)."""
    return ENFORCEMENT.get(event, _FIRE_AND_FORGET)


def enforces(event: str) -> bool:
    """Does an error outcome (a hook that gave no verdict) block ``event``'s operation?

    True only for ``PreToolUse`` (tool-use gating fails closed); every other event is
    advisory.
    """
    return posture(event).enforces
