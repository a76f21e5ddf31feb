"""Spend and usage per key, and the limits that read them: tokens per minute and budgets.

Every verified request counts against its key; every finished run adds its tokens and its
cost (priced by the models' metadata).  The totals are kept in ``usage.json`` of the server's
owner-only state directory: written at most once a second while they change and when the
server stops, read back when it starts -- so a restart keeps each key's spend.  All of it
runs on the server's one event loop, so concurrent requests never interleave an update.
A request is admitted on the spend of the runs that finished; runs in flight when a budget
is reached still finish (at most ``max_parallel_requests`` of them).
"""

from __future__ import annotations

import collections
import json
import math
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import attrs

from agentrig.diagnostics import get_logger
from agentrig.host import OwnerOnlyStore
from agentrig.llm import Usage
from agentrig_server._errors import ApiError
from agentrig_server._keys import KeyPolicy
from agentrig_server._settings import period_seconds

__all__ = ["USAGE_FILE", "KeyTotals", "Ledger"]

USAGE_FILE = "usage.json"
_log = get_logger("server")


@attrs.define(slots=True)
class KeyTotals:
    """One key's totals: lifetime, and within the current budget period."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    spend: float = 0.0
    #: when the current budget period began (unix time), and what it counted so far
    period_start: float = 0.0
    period_spend: float = 0.0
    period_tokens: int = 0
    last_used_at: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def roll(self, policy: KeyPolicy, now: float) -> None:
        """Start a new budget period once the current one is over."""
        period = policy.limits.budget_duration
        if period is None:
            return
        length = period_seconds(period)
        if self.period_start <= 0:
            self.period_start = now
        elif now >= self.period_start + length:
            passed = math.floor((now - self.period_start) / length)
            self.period_start += passed * length
            self.period_spend = 0.0
            self.period_tokens = 0

    def reset_at(self, policy: KeyPolicy) -> float | None:
        period = policy.limits.budget_duration
        if period is None or self.period_start <= 0:
            return None
        return self.period_start + period_seconds(period)


class Ledger:
    """Per-key totals, the minute windows of ``tpm_limit`` and the budget checks."""

    def __init__(self, root: Path | None, *, clock: Callable[[], float] = time.time) -> None:
        self._root = root
        self._clock = clock
        self._store: OwnerOnlyStore | None = None
        self.totals: dict[str, KeyTotals] = {}
        self._minute: dict[str, collections.deque[tuple[float, int]]] = {}
        self._minute_used: dict[str, int] = {}  # the tokens in each key's window
        self._dirty = False
        if root is not None and (root / USAGE_FILE).exists():
            self._load()

    def _load(self) -> None:
        raw = self._owner_store().read_bytes(USAGE_FILE)
        try:
            data = json.loads(raw)
            for key_id, fields in dict(data["keys"]).items():
                self.totals[str(key_id)] = KeyTotals(**fields)
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{self._root}/{USAGE_FILE}: not a usage file ({exc})") from None

    def _owner_store(self) -> OwnerOnlyStore:
        if self._store is None:
            assert self._root is not None
            self._store = OwnerOnlyStore(self._root)
        return self._store

    def of(self, key_id: str) -> KeyTotals:
        totals = self.totals.get(key_id)
        if totals is None:
            totals = self.totals[key_id] = KeyTotals()
        return totals

    # ---- admission -------------------------------------------------------------------------
    def admit(self, policy: KeyPolicy, *, check: bool = True) -> None:
        """Count a request of ``policy``'s key; with ``check``, a 429 once its tokens per
        minute are used, a budget error once its budget is spent."""
        now = self._clock()
        totals = self.of(policy.key_id)
        totals.requests += 1
        totals.last_used_at = now
        self._dirty = True
        if not check:
            return
        limits = policy.limits
        if limits.tpm_limit is not None:
            self._tokens_per_minute(policy.key_id, limits.tpm_limit, now)
        if limits.max_budget is None and limits.max_budget_tokens is None:
            return
        totals.roll(policy, now)
        spend = totals.period_spend if limits.budget_duration else totals.spend
        tokens = totals.period_tokens if limits.budget_duration else totals.total_tokens
        if limits.max_budget is not None and spend >= limits.max_budget:
            what = f"spent ${spend:.6g} of its ${limits.max_budget:g} budget"
        elif limits.max_budget_tokens is not None and tokens >= limits.max_budget_tokens:
            what = f"used {tokens} of its {limits.max_budget_tokens} budget tokens"
        else:
            return
        reset = totals.reset_at(policy)
        wait = max(1, math.ceil(reset - now)) if reset is not None else None
        when = f"; it starts again in {wait}s" if wait is not None else ""
        raise ApiError(
            429,
            f"budget exceeded: key {policy.key_id!r} {what}{when}",
            code="budget_exceeded",
            retry_after=wait,
            retry=False,
        )

    def _tokens_per_minute(self, key_id: str, limit: int, now: float) -> None:
        window = self._minute.get(key_id)
        if not window:
            return
        used = self._minute_used[key_id]
        while window and window[0][0] <= now - 60:  # each run leaves the window once
            used -= window.popleft()[1]
        self._minute_used[key_id] = used
        if used < limit:
            return
        # the wait until enough of the last minute's tokens are a minute old
        over = used - limit
        wait = 1.0
        for stamp, tokens in window:
            over -= tokens
            if over < 0:
                wait = stamp + 60 - now
                break
        seconds = max(1, math.ceil(wait))
        raise ApiError(
            429,
            f"token rate limit reached: key {key_id!r} used {used} tokens in the last minute "
            f"(limit {limit}); retry in {seconds}s",
            code="rate_limit_exceeded",
            retry_after=seconds,
        )

    # ---- what runs used ----------------------------------------------------------------------
    def record(self, policy: KeyPolicy, usage: Usage | None, cost: Decimal | None) -> None:
        """Add a finished run's tokens and cost to its key."""
        if usage is None and cost is None:
            return
        now = self._clock()
        totals = self.of(policy.key_id)
        tokens = usage.total if usage is not None else 0
        if usage is not None:
            totals.prompt_tokens += usage.prompt
            totals.completion_tokens += usage.completion
        spent = float(cost) if cost is not None else 0.0
        totals.spend += spent
        totals.roll(policy, now)
        totals.period_spend += spent
        totals.period_tokens += tokens
        if policy.limits.tpm_limit is not None and tokens:
            self._minute.setdefault(policy.key_id, collections.deque()).append((now, tokens))
            self._minute_used[policy.key_id] = self._minute_used.get(policy.key_id, 0) + tokens
        self._dirty = True

    # ---- persistence -------------------------------------------------------------------------
    def flush(self) -> None:
        """Write the totals when they changed (owner-only, replaced atomically)."""
        if not self._dirty or self._root is None:
            return
        self._dirty = False
        body = {"version": 1, "keys": {k: _as_json(v) for k, v in sorted(self.totals.items())}}
        self._owner_store().write_bytes(USAGE_FILE, json.dumps(body, indent=1).encode())

    async def keep_flushed(self, every: float = 1.0) -> None:
        """Flush while the server runs, and once more when it stops."""
        try:
            while True:
                await anyio.sleep(every)
                self._flush_logged()
        finally:
            self._flush_logged()  # synchronous: a cancellation cannot cut it short

    def _flush_logged(self) -> None:
        try:
            self.flush()
        except Exception as exc:  # the server keeps serving; the log says why totals lag
            self._dirty = True
            _log.error("could not write the key usage totals: %s", exc)


def _as_json(totals: KeyTotals) -> dict[str, Any]:
    return attrs.asdict(totals)
