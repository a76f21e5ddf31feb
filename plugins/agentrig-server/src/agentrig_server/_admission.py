"""Who may call and how much: API-key checks, the rate limit and the concurrency slots.

Keys are compared in constant time (every configured key is compared, each through
:func:`hmac.compare_digest` on its SHA-256 digest, so neither the match position nor a
prefix leaks through timing).  The rate limit and the per-caller slots are keyed by the
*verified* identity -- the matched key's id -- or, without authentication, by the
client address; never by a header value the caller chose.
"""

from __future__ import annotations

import hmac
import math
import time
from collections.abc import Callable, Sequence

import attrs

from agentrig_server._errors import ApiError, internal_error
from agentrig_server._keys import KeyFile, KeyPolicy, digest

__all__ = ["Caller", "KeyChecker", "RateLimiter", "Slots"]


@attrs.frozen(slots=True)
class Caller:
    """A verified caller: ``identity`` keys its limits (``key:<id>`` or ``addr:<ip>``);
    ``key`` is the key's id and limits (None without keys)."""

    identity: str
    authenticated: bool
    key: KeyPolicy | None = None


def _api_key_id(value: bytes) -> str:
    return f"key-{value.hex()[:12]}"


class KeyChecker:
    """Checks a presented key against every known one in constant time: ``server.api_keys``
    (no limits of their own), ``[server.keys.<id>]`` and the keys ``agentrig serve keys``
    keeps in ``key_file`` (re-read when the file changes; a revoked one no longer matches)."""

    def __init__(
        self,
        keys: Sequence[str],
        named: Sequence[tuple[str, KeyPolicy]] = (),
        key_file: KeyFile | None = None,
    ) -> None:
        fixed = [(digest(k), KeyPolicy(_api_key_id(digest(k)), "api_keys")) for k in keys]
        fixed += [(digest(secret), policy) for secret, policy in named]
        self._fixed = tuple(fixed)
        self._file = key_file
        self._signature: tuple[int, int, int] | None = None
        self._stored: tuple[tuple[bytes, KeyPolicy], ...] = ()
        self.refresh()

    def refresh(self) -> None:
        """Re-read the key file when it changed (a stat per call: cheap)."""
        if self._file is None:
            return
        signature = self._file.signature()
        if signature == self._signature:
            return
        try:
            stored = self._file.load() if signature is not None else {}
        except Exception as exc:
            # fail closed: no request is served on a key file that cannot be read (never as
            # if it had no keys); the log has why under the error id, and the next request
            # reads it again
            raise internal_error(exc) from None
        self._signature = signature
        self._stored = tuple(
            (bytes.fromhex(key.sha256), KeyPolicy(key.key_id, "cli", key.limits, key.created_at))
            for key in stored.values()
            if key.revoked_at is None
        )

    @property
    def enabled(self) -> bool:
        return bool(self._fixed or self._stored)

    def verify(self, presented: str | None, client: str) -> Caller:
        """The caller for ``presented``; raises a 401 when keys are configured and it fails
        (call :meth:`refresh` first)."""
        if not self.enabled:
            return Caller(f"addr:{client}", authenticated=False)
        if not presented:
            raise ApiError(
                401,
                "missing API key (send 'Authorization: Bearer <key>' or 'x-api-key: <key>')",
                code="invalid_api_key",
            )
        candidate = digest(presented)
        matched: KeyPolicy | None = None
        for known, policy in (*self._fixed, *self._stored):
            # no early exit: the time does not depend on which key matched
            if hmac.compare_digest(candidate, known):
                matched = policy
        if matched is None:
            raise ApiError(401, "invalid API key", code="invalid_api_key")
        return Caller(f"key:{matched.key_id}", authenticated=True, key=matched)


class RateLimiter:
    """A token bucket per identity: ``per_minute`` requests, refilled continuously."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._capacity = float(per_minute)
        self._rate = per_minute / 60.0
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, identity: str, per_minute: int | None = None) -> None:
        """Spend one request of ``identity``'s budget (``per_minute`` when the caller's key
        has its own), or raise a 429 with ``Retry-After``."""
        now = self._clock()
        capacity, rate = self._capacity, self._rate
        if per_minute is not None:
            capacity, rate = float(per_minute), per_minute / 60.0
        tokens, stamp = self._buckets.get(identity, (capacity, now))
        tokens = min(capacity, tokens + (now - stamp) * rate)
        if tokens < 1.0:
            self._buckets[identity] = (tokens, now)
            wait = max(1, math.ceil((1.0 - tokens) / rate))
            raise ApiError(
                429,
                f"rate limit reached ({int(capacity)} requests per minute); retry in {wait}s",
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

    def acquire(self, key: str, limit: int | None = None) -> None:
        """Take one of ``key``'s slots (``limit`` when it has its own), or raise a 429."""
        limit = self._limit if limit is None else limit
        held = self._held.get(key, 0)
        if held >= limit:
            raise ApiError(
                429,
                f"{self._what} {key!r} is at its limit of {limit} concurrent requests; "
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
