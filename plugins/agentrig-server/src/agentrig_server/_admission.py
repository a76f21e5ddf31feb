"""Who may call and how much: API-key checks, the rate limit and the concurrency slots.

Keys are compared in constant time (every configured key is compared, each through
:func:`hmac.compare_digest` on its SHA-256 digest, so neither the match position nor a
prefix leaks through timing).  The rate limit and the per-caller slots are keyed by the
*verified* identity -- the matched key's fingerprint -- or, without authentication, by the
client address; never by a header value the caller chose.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from collections.abc import Callable, Sequence

import attrs

from agentrig_server._errors import ApiError

__all__ = ["Caller", "KeyChecker", "RateLimiter", "Slots"]


@attrs.frozen(slots=True)
class Caller:
    """A verified caller: ``identity`` keys its limits (``key:<fingerprint>`` or ``addr:<ip>``)."""

    identity: str
    authenticated: bool


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8")).digest()


class KeyChecker:
    """Checks a presented key against the configured ones in constant time."""

    def __init__(self, keys: Sequence[str]) -> None:
        self._digests = tuple(_digest(k) for k in keys)

    @property
    def enabled(self) -> bool:
        return bool(self._digests)

    def verify(self, presented: str | None, client: str) -> Caller:
        """The caller for ``presented``; raises a 401 when keys are configured and it fails."""
        if not self._digests:
            return Caller(f"addr:{client}", authenticated=False)
        if not presented:
            raise ApiError(
                401,
                "missing API key (send 'Authorization: Bearer <key>' or 'x-api-key: <key>')",
                code="invalid_api_key",
            )
        candidate = _digest(presented)
        matched: bytes | None = None
        for digest in self._digests:  # no early exit: the time does not depend on the match
            if hmac.compare_digest(candidate, digest):
                matched = digest
        if matched is None:
            raise ApiError(401, "invalid API key", code="invalid_api_key")
        return Caller(f"key:{matched.hex()[:16]}", authenticated=True)


class RateLimiter:
    """A token bucket per identity: ``per_minute`` requests, refilled continuously."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._capacity = float(per_minute)
        self._rate = per_minute / 60.0
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, identity: str) -> None:
        """Spend one request of ``identity``'s budget, or raise a 429 with ``Retry-After``."""
        now = self._clock()
        tokens, stamp = self._buckets.get(identity, (self._capacity, now))
        tokens = min(self._capacity, tokens + (now - stamp) * self._rate)
        if tokens < 1.0:
            self._buckets[identity] = (tokens, now)
            wait = max(1, math.ceil((1.0 - tokens) / self._rate))
            raise ApiError(
                429,
                f"rate limit reached ({int(self._capacity)} requests per minute); retry in {wait}s",
                code="rate_limit_exceeded",
                retry_after=wait,
            )
        self._buckets[identity] = (tokens - 1.0, now)
        if len(self._buckets) > 10_000:  # forget full buckets: they hold no state worth keeping
            self._prune(now)

    def _prune(self, now: float) -> None:
        full = [
            key
            for key, (tokens, stamp) in self._buckets.items()
            if tokens + (now - stamp) * self._rate >= self._capacity
        ]
        for key in full:
            del self._buckets[key]


class Slots:
    """At most ``limit`` holders per key at once; a caller over it gets a 429, never a queue."""

    def __init__(self, limit: int, what: str) -> None:
        self._limit = limit
        self._what = what
        self._held: dict[str, int] = {}

    def acquire(self, key: str) -> None:
        held = self._held.get(key, 0)
        if held >= self._limit:
            raise ApiError(
                429,
                f"{self._what} {key!r} is at its limit of {self._limit} concurrent requests; "
                "retry shortly",
                code="concurrency_limit",
                retry_after=1,
            )
        self._held[key] = held + 1

    def release(self, key: str) -> None:
        held = self._held.get(key, 0) - 1
        if held > 0:
            self._held[key] = held
        else:
            self._held.pop(key, None)

    def held(self, key: str) -> int:
        return self._held.get(key, 0)
