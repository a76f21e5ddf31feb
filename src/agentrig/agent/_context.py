"""How full the context window is: the provider's last count plus an estimate of what came since.

The number trusts the latest usage a provider reported at a completed response (its total:
the prompt it read, cache reads being a part of it, plus the reply now in the history), adds
the estimated size of every message derived after that reply, and never goes below the
estimate of the whole request.  Reports of earlier responses are never added up: each one
already counted the history before it.  Without a report (a provider that reports nothing,
a fresh session, just after a compaction) the number is the estimate alone.
"""

from __future__ import annotations

from typing import Literal

import attrs

from agentrig.session import Session

__all__ = [
    "CHARS_PER_TOKEN",
    "ContextSource",
    "ContextUsage",
    "context_tokens",
    "context_usage",
    "measure_context",
]

CHARS_PER_TOKEN = 4
"""The coarse estimate's ratio: about four characters of text per token."""

#: where the number comes from: a provider's report (plus the estimate of what came after
#: it), or the character estimate alone
ContextSource = Literal["provider", "estimate"]


@attrs.frozen
class ContextUsage:
    """How much of ``window`` (tokens) the next request would use, and where that comes from.

    ``reported`` is the latest provider-reported total it builds on (None: ``source`` is
    ``estimate``); ``estimate`` is the character estimate of the whole request, the floor.
    """

    used: int
    window: int
    source: ContextSource
    estimate: int
    reported: int | None = None

    @property
    def share(self) -> float:
        """``used / window`` (0.0 for an empty window)."""
        return self.used / self.window if self.window > 0 else 0.0

    def describe(self) -> str:
        """``12,345 / 200,000 tokens (6%, provider)``: a line for people."""
        return f"{self.used:,} / {self.window:,} tokens ({self.share:.0%}, {self.source})"


def measure_context(
    session: Session,
    window: int,
    *,
    tool_chars: int = 0,
    extra_chars: int = 0,
    floor: int = 0,
) -> ContextUsage:
    """The context usage of the next request built from ``session``.

    ``tool_chars`` is the size of the offered tools' definitions (the provider's report
    counted them already); ``extra_chars`` of what the request carries for itself only (an
    instruction).  ``floor`` is a caller's lower bound, never an addition.
    """
    history = session.derive_messages().chars  # O(1): the projection keeps the sum
    return context_usage(session, history, window, tool_chars, extra_chars, floor)


def context_usage(
    session: Session,
    history: int,
    window: int,
    tool_chars: int = 0,
    extra_chars: int = 0,
    floor: int = 0,
) -> ContextUsage:
    """:func:`measure_context` for a caller that derived the history already (``history``:
    its ``chars``): the loop sends that view, so it is not derived twice."""
    used, source, estimate, reported = context_tokens(session, history, tool_chars, extra_chars)
    return ContextUsage(max(used, floor), window, source, estimate, reported)


def context_tokens(
    session: Session, history: int, tool_chars: int = 0, extra_chars: int = 0
) -> tuple[int, ContextSource, int, int | None]:
    """:func:`context_usage`'s ``used``, ``source``, ``estimate`` and ``reported`` without
    the record: the loop reads ``used`` on every request and needs the record only to
    compact or refuse."""
    reported, since = session.context_basis()
    estimate = (history + tool_chars + extra_chars) // CHARS_PER_TOKEN
    if reported is None:
        return estimate, "estimate", estimate, None
    used = reported + (since + extra_chars) // CHARS_PER_TOKEN
    if used >= estimate:
        return used, "provider", estimate, reported
    return estimate, "estimate", estimate, reported
