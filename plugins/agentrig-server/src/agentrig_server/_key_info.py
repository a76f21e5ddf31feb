"""``GET /key/info``: the calling key's limits, spend and usage, in LiteLLM's shape.

LiteLLM answers ``/key/info`` with ``{"key": ..., "info": {...}}``; the fields a client of it
reads (``key_alias``, ``models``, ``spend``, ``max_budget``, ``budget_duration``,
``budget_reset_at``, ``rpm_limit``, ``tpm_limit``, ``max_parallel_requests``) mean the same
here.  ``spend`` is the current budget period's when the key has a ``budget_duration``;
``usage`` holds the lifetime totals.  The key itself is never in it.
"""

from __future__ import annotations

import datetime
from typing import Any

from agentrig_server._keys import KeyPolicy
from agentrig_server._usage import KeyTotals, Ledger

__all__ = ["describe_key", "key_info_body"]


def _when(stamp: float | None) -> str | None:
    if stamp is None:
        return None
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).isoformat(timespec="seconds")


def describe_key(policy: KeyPolicy, totals: KeyTotals | None) -> dict[str, Any]:
    """A key's limits and totals, as ``/key/info`` and ``agentrig serve keys show`` give them."""
    totals = totals if totals is not None else KeyTotals()
    limits = policy.limits
    periodic = limits.budget_duration is not None
    return {
        "key_alias": policy.key_id,
        "source": policy.source,
        "models": list(limits.models) if limits.models is not None else [],
        "rpm_limit": limits.rpm_limit,
        "tpm_limit": limits.tpm_limit,
        "max_parallel_requests": limits.max_parallel_requests,
        "max_budget": limits.max_budget,
        "max_budget_tokens": limits.max_budget_tokens,
        "budget_duration": limits.budget_duration,
        "budget_reset_at": _when(totals.reset_at(policy)),
        "spend": totals.period_spend if periodic else totals.spend,
        "budget_tokens_used": totals.period_tokens if periodic else totals.total_tokens,
        "created_at": _when(policy.created_at),
        "last_used_at": _when(totals.last_used_at),
        "usage": {
            "requests": totals.requests,
            "prompt_tokens": totals.prompt_tokens,
            "completion_tokens": totals.completion_tokens,
            "total_tokens": totals.total_tokens,
            "spend": totals.spend,
        },
    }


def key_info_body(policy: KeyPolicy, ledger: Ledger) -> dict[str, Any]:
    """The answer of ``GET /key/info`` for the calling key."""
    totals = ledger.totals.get(policy.key_id)
    return {"key": policy.key_id, "info": describe_key(policy, totals)}
