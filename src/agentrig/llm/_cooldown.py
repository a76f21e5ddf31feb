"""Cooldowns per concrete model: after a rate limit with a reset deadline, wait -- by failing.

A provider's 429 that says when to come back (``Retry-After``) puts that concrete deployment
-- provider kind, endpoint and model (:class:`ModelDeployment`) -- in a cooldown shared by the
whole process until then: every run that would send to it meanwhile fails at once with
:class:`ModelCooldownError` (or a fallback provider moves on to its next deployment) instead
of each hitting the limit again.  The HTTP layer starts it the moment the 429 arrives, before
its own retry waits, so other runs do not queue behind one that is waiting.  Two configured
provider ids that reach the same endpoint and model share one cooldown; one id's two models
do not.  A rate limit without a deadline starts no cooldown -- there is nothing to wait for
that would not be a guess.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol, final, runtime_checkable

import attrs

from agentrig.llm._errors import RateLimitError

__all__ = ["COOLDOWNS", "ModelCooldownError", "ModelCooldowns", "ModelDeployment", "ServedFrom"]


@runtime_checkable
class ServedFrom(Protocol):
    """A provider that says which endpoint it sends to (its ``base_url``): rate limits, and
    so cooldowns, belong to the endpoint and model, not to a configured name."""

    @property
    def base_url(self) -> str: ...


@final
@attrs.frozen(slots=True)
class ModelDeployment:
    """What a rate limit is about: a provider kind, the endpoint it sends to, and a model.

    ``endpoint`` is the provider's ``base_url`` (:class:`ServedFrom`); a provider without
    one is told apart by its configured id (``"provider:<id>"``).
    """

    kind: str
    endpoint: str
    model: str

    @classmethod
    def of(cls, provider: object, provider_id: str, model: str) -> ModelDeployment:
        """The deployment ``model`` of the configured ``provider_id`` is sent to."""
        kind = getattr(provider, "kind", None)
        # read as ``ServedFrom`` says, without isinstance on the runtime-checkable protocol:
        # that walks the protocol's members each time (tens of microseconds per model call)
        base_url: object = getattr(provider, "base_url", None)
        endpoint = base_url.rstrip("/") if isinstance(base_url, str) else f"provider:{provider_id}"
        return cls(kind if isinstance(kind, str) else provider_id, endpoint, model)


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
            f"another {remaining:.1f}s (at its endpoint, whichever provider id sent there); "
            "the request was not sent",
            retry_after=remaining,
            provider=provider,
        )
        self.model = model


@final
class ModelCooldowns:
    """The cooldown deadlines of deployments (:class:`ModelDeployment`); thread-safe.

    ``clock`` is a monotonic clock in seconds (``time.monotonic``).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until: dict[ModelDeployment, float] = {}
        self._lock = threading.Lock()

    @property
    def cooling(self) -> bool:
        """Does any deployment cool down now (or did one, not asked about since it ended)?
        False in the common case: a caller has no deployment to build and check."""
        return bool(self._until)

    def remaining(self, deployment: ModelDeployment) -> float | None:
        """Seconds the deployment still cools down (None: it may be sent to)."""
        key = deployment
        with self._lock:
            until = self._until.get(key)
            if until is None:
                return None
            left = until - self._clock()
            if left <= 0:
                del self._until[key]  # expired: forgotten
                return None
            return left

    def check(self, deployment: ModelDeployment, *, provider: str | None = None) -> None:
        """Raise :class:`ModelCooldownError` while the deployment cools down (the error
        names ``provider``, the configured id the caller sends through, when given)."""
        left = self.remaining(deployment)
        if left is not None:
            raise ModelCooldownError(provider or deployment.kind, deployment.model, left)

    def note(self, deployment: ModelDeployment, error: BaseException) -> bool:
        """Start (or extend) the deployment's cooldown when ``error`` is a rate limit with a
        reset deadline; True when it did.

        An error that already started one (a ``fallback`` provider noted it for its
        deployment, the concrete pair) starts no other for the same failure.
        """
        if not isinstance(error, RateLimitError) or isinstance(error, ModelCooldownError):
            return False
        wait = error.retry_after
        if wait is None or wait <= 0 or error.cooldown_started:
            return False
        key = deployment
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
