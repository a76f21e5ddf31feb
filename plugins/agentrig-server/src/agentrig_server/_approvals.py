"""Approvals through the API: a call that needs a person waits here for an answer.

A waiting call is listed at ``GET /v1/approvals`` (to the caller whose run it is) and answered
with ``POST /v1/approvals/{id}`` and ``{"decision": "allow" | "deny"}``.  No answer within the
exposed model's ``approval_timeout`` denies the call.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from typing import Any, Literal

import anyio
import attrs

from agentrig_server._errors import ApiError

__all__ = ["Approvals", "PendingApproval"]


@attrs.define(slots=True, eq=False)
class PendingApproval:
    """A tool call waiting for a person's answer."""

    id: str
    model: str
    owner: str
    session_id: str
    tool: str
    arguments: dict[str, Any]
    reason: str
    created: float = attrs.Factory(time.time)
    answer: Literal["allow", "deny"] | None = None
    message: str = ""
    answered: anyio.Event = attrs.Factory(anyio.Event)

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "model": self.model,
            "session_id": self.session_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "reason": self.reason,
            "created": int(self.created),
        }


class Approvals:
    """The calls waiting for an answer, by approval id."""

    def __init__(self) -> None:
        self._pending: dict[str, PendingApproval] = {}

    def open(
        self,
        *,
        model: str,
        owner: str,
        session_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        reason: str,
    ) -> PendingApproval:
        pending = PendingApproval(
            id=f"appr_{secrets.token_hex(10)}",
            model=model,
            owner=owner,
            session_id=session_id,
            tool=tool,
            arguments=dict(arguments),
            reason=reason,
        )
        self._pending[pending.id] = pending
        return pending

    def close(self, approval_id: str) -> None:
        self._pending.pop(approval_id, None)

    def owned_by(self, owner: str) -> list[PendingApproval]:
        return [p for p in self._pending.values() if p.owner == owner]

    def answer(self, approval_id: str, owner: str, body: object) -> PendingApproval:
        """Record a person's answer (a 404 for another caller's approval: it is not theirs)."""
        pending = self._pending.get(approval_id)
        if pending is None or pending.owner != owner:
            raise ApiError(404, f"no pending approval {approval_id!r}", code="not_found")
        decision = body.get("decision") if isinstance(body, Mapping) else None
        if decision not in ("allow", "deny"):
            raise ApiError(400, 'decision: expected "allow" or "deny"', param="decision")
        message = body.get("message", "") if isinstance(body, Mapping) else ""
        pending.answer = decision
        pending.message = message if isinstance(message, str) else ""
        pending.answered.set()
        return pending
