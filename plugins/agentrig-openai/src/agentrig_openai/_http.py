"""OpenAI's part of the HTTP handling: which failed requests are worth sending again.

The machinery (client, retries, SSE framing) is :mod:`agentrig.llm.http`.
"""

from __future__ import annotations

from agentrig.llm import ProviderError

__all__ = ["retryable"]


def retryable(error: ProviderError) -> bool:
    """The taxonomy's ``retryable``, except for an exhausted quota."""
    # An exhausted quota answers 429 too, but waiting will not refill it.
    if error.vendor_code == "insufficient_quota" or error.vendor_type == "insufficient_quota":
        return False
    return error.retryable
