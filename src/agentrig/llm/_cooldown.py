"""Cooldowns per concrete model: after a rate limit with a reset deadline, wait -- by failing.

A provider's 429 that says when to come back (``Retry-After``) puts that (provider, model)
pair in a cooldown shared by the whole process until then: every run that would send to it
meanwhile fails at once with :class:`ModelCooldownError` (or a fallback provider moves on to
its next deployment) instead of each hitting the limit again.  Nobody sleeps while holding a
worker: the wait is the caller's to schedule.  A rate limit without a deadline starts no
cooldown -- there is nothing to wait for that would not be a guess.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import final

from agentrig.llm._errors import RateLimitError

__all__ = ["COOLDOWNS", "ModelCooldownError", "ModelCooldowns"]


class ModelCooldownError(RateLimitError):
    """The model is cooling down after a rate limit; the request was not sent.

    ``retry_after`` is the time left.  Not retryable as it is (the same request would wait
    out the same deadline) but another deployment may serve it (``can_fallback``).
    """

    code = "provider.cooldown"
    _retryable = False

    def __init__(self, provider: str, model: str, remaining: float) -> None:
        super().__init__(
            f"provider {provider!r}, model {model!r} is cooling down after a rate limit for "
            f"another {remaining:.1f}s; the request was not sent",
            retry_after=remaining,
            provider=provider,
        )
        self.model = model


@final
class ModelCooldowns:
    """The cooldown deadlines of (provider id, model) pairs; thread-safe.

    ``clock`` is a monotonic clock in seconds (``time.monotonic``).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def remaining(self, provider: str, model: str) -> float | None:
        """Seconds the pair still cools down (None: it may be sent to)."""
        key = (provider, model)
        with self._lock:
            until = self._until.get(key)
            if until is None:
                return None
            left = until - self._clock()
            if left <= 0:
                del self._until[key]  # expired: forgotten
                return None
            return left

    def check(self, provider: str, model: str) -> None:
        """Raise :class:`ModelCooldownError` while the pair cools down."""
        left = self.remaining(provider, model)
        if left is not None:
            raise ModelCooldownError(provider, model, left)

    def note(self, provider: str, model: str, error: BaseException) -> bool:
        """Start (or extend) the pair's cooldown when ``error`` is a rate limit with a reset
        deadline; True when it did.

        An error that already started one (a ``fallback`` provider noted it for its
        deployment, the concrete pair) starts no other for the same failure.
        """
        if not isinstance(error, RateLimitError) or isinstance(error, ModelCooldownError):
            return False
        wait = error.retry_after
        if wait is None or wait <= 0 or error.cooldown_started:
            return False
        key = (provider, model)
        with self._lock:
            until = self._clock() + wait
            self._until[key] = max(until, self._until.get(key, until))
        error.cooldown_started = True
        return True

    def clear(self) -> None:
        """Forget every cooldown (a process that knows the limits were lifted)."""
        with self._lock:
            self._until.clear()


COOLDOWNS = ModelCooldowns()
"""The process-wide cooldowns the agent loop and the ``fallback`` provider consult."""
