"""The gate's answer for one tool call: the vocabulary the agent's dispatch and the gates
(permissions, hooks) share, so neither imports the other."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["GateDecision"]


@attrs.frozen(slots=True)
class GateDecision:
    """The gate's answer for one call: allowed, or refused with a reason."""

    allowed: bool
    reason: str = ""
    #: a hook rewrote the call's input: the call runs with these arguments instead
    updated_arguments: Mapping[str, Any] | None = None
