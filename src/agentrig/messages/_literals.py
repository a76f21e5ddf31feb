"""The small closed vocabularies shared by messages, requests and capabilities.

Kept apart from :mod:`agentrig.llm._request` so that messages (which name a stop reason) and
requests (which hold messages) do not import each other.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

__all__ = ["ReasoningEffort", "StopReason"]

StopReason: TypeAlias = Literal[
    "end", "tool_calls", "length", "stop_sequence", "refusal", "content_filter", "error", "other"
]
"""Why a model stopped, normalised across providers.

``"length"`` means the output hit its token limit: the reply is truncated, which is a normal
result to report, not a failure.  The vendor's own value travels alongside, unmapped.
"""

ReasoningEffort: TypeAlias = Literal["none", "minimal", "low", "medium", "high", "max", "auto"]
"""Provider-neutral reasoning effort.

``"auto"`` is a selection state (let the adapter pick the model's own default), not a native
control of any provider; adapters resolve every value against their own per-model tables.
"""
