"""The one token-usage shape.

Every layer that reports or stores token counts uses :class:`Usage`; nothing re-declares the
prompt / completion / total triple.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agentrig.messages._build import build

__all__ = ["Usage"]


def _add_optional(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return a + b


class Usage(BaseModel):
    """Token counts of one provider response (or a sum of several).

    ``prompt``, ``completion`` and ``total`` are the triple.  ``total`` is the provider's own
    total when it reported one, otherwise ``prompt + completion``.  The breakdowns refine the
    triple and are never added to it: ``cache_read`` and ``cache_write`` are parts of
    ``prompt`` (``uncached_input`` is what remains), and ``reasoning`` is a part of
    ``completion``.  ``None`` means "not reported".  ``partial`` marks counts the adapter could
    not attest as a consistent whole; they are kept rather than dropped.

    A response whose provider reported nothing has no ``Usage`` at all (``None``) -- zeros are
    never made up.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: int
    completion: int
    total: int
    cache_read: int | None = None
    cache_write: int | None = None
    uncached_input: int | None = None
    reasoning: int | None = None
    partial: bool = False

    @classmethod
    def of(
        cls,
        prompt: int,
        completion: int,
        *,
        total: int | None = None,
        cache_read: int | None = None,
        cache_write: int | None = None,
        uncached_input: int | None = None,
        reasoning: int | None = None,
        partial: bool = False,
    ) -> Usage:
        """Build a usage; ``total`` defaults to ``prompt + completion``."""
        total = prompt + completion if total is None else total
        values = {
            "prompt": prompt,
            "completion": completion,
            "total": total,
            "cache_read": cache_read,
            "cache_write": cache_write,
            "uncached_input": uncached_input,
            "reasoning": reasoning,
            "partial": partial,
        }
        return build(cls, values)

    def add(self, other: Usage | None) -> Usage:
        """Sum two usages (for run totals).

        A breakdown missing on one side counts as absent, not zero (``None + x == x``); the sum
        is partial when either side is.  Adding ``None`` returns this usage unchanged.
        """
        if other is None:
            return self
        return Usage(
            prompt=self.prompt + other.prompt,
            completion=self.completion + other.completion,
            total=self.total + other.total,
            cache_read=_add_optional(self.cache_read, other.cache_read),
            cache_write=_add_optional(self.cache_write, other.cache_write),
            uncached_input=_add_optional(self.uncached_input, other.uncached_input),
            reasoning=_add_optional(self.reasoning, other.reasoning),
            partial=self.partial or other.partial,
        )
