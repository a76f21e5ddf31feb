"""Approvals through the API: a call that needs a person waits here for an answer.

A waiting call is listed at ``GET /v1/approvals`` (to the caller whose run it is) and answered
with ``POST /v1/approvals/{id}`` and ``{"decision": "allow" | "deny"}`` -- or by an
``mcp_approval_response`` input item of a Responses request.  The first answer stands.  No
answer within the exposed model's ``approval_timeout`` denies the call.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import anyio
import attrs

from agentrig_server._errors import ApiError

__all__ = ["ApprovalAnswer", "Approvals", "PendingApproval"]


@attrs.frozen(slots=True)
class ApprovalAnswer:
    """An answer sent as a Responses ``mcp_approval_response`` input item."""

    approval_id: str
    decision: Literal["allow", "deny"]
    message: str
    #: where it stands in the request, for an error about it
    param: str


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
    #: the response whose run waits (a Responses request's ``previous_response_id``)
    response_id: str = ""
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
        response_id: str = "",
    ) -> PendingApproval:
        pending = PendingApproval(
            id=f"appr_{secrets.token_hex(10)}",
            model=model,
            owner=owner,
            session_id=session_id,
            tool=tool,
            arguments=dict(arguments),
            reason=reason,
            response_id=response_id,
        )
        self._pending[pending.id] = pending
        return pending

    def close(self, approval_id: str) -> None:
        self._pending.pop(approval_id, None)

    def owned_by(self, owner: str) -> list[PendingApproval]:
        return [p for p in self._pending.values() if p.owner == owner]

    def answer(self, approval_id: str, owner: str, body: object) -> PendingApproval:
        """Record a person's answer (``POST /v1/approvals/{id}``'s body)."""
        decision = body.get("decision") if isinstance(body, Mapping) else None
        if decision not in ("allow", "deny"):
            raise ApiError(400, 'decision: expected "allow" or "deny"', param="decision")
        message = body.get("message", "") if isinstance(body, Mapping) else ""
        return self.decide(
            approval_id, owner, decision, message if isinstance(message, str) else ""
        )

    def decide_all(
        self, owner: str, model: str, previous: str | None, answers: Sequence[ApprovalAnswer]
    ) -> None:
        """Answer waiting calls of ``model`` (of response ``previous`` when given): each is
        checked before any is recorded, so a request with one bad answer records none."""
        seen: set[str] = set()
        for answer in answers:
            pending = self._waiting(answer.approval_id, owner, answer.param)
            if answer.approval_id in seen:
                message = f"approval {answer.approval_id!r} is answered twice in this request"
                raise ApiError(400, message, param=answer.param)
            seen.add(answer.approval_id)
            if pending.model != model:
                message = f"approval {pending.id!r} waits in model {pending.model!r}, not {model!r}"
                raise ApiError(400, message, param=answer.param)
            if previous is not None and previous != pending.response_id:
                message = (
                    f"approval {pending.id!r} waits in response {pending.response_id!r}, "
                    f"not {previous!r}"
                )
                raise ApiError(400, message, param="previous_response_id")
        for answer in answers:
            self.decide(answer.approval_id, owner, answer.decision, answer.message)

    def decide(
        self,
        approval_id: str,
        owner: str,
        decision: Literal["allow", "deny"],
        message: str = "",
        *,
        param: str | None = None,
    ) -> PendingApproval:
        """Answer a waiting call: a 404 for an unknown one or another caller's (it is not
        theirs), a 400 for one answered already (the first answer stands)."""
        pending = self._waiting(approval_id, owner, param)
        pending.answer = decision
        pending.message = message
        pending.answered.set()
        return pending

    def _waiting(self, approval_id: str, owner: str, param: str | None) -> PendingApproval:
        pending = self._pending.get(approval_id)
        if pending is None or pending.owner != owner:
            raise ApiError(
                404, f"no pending approval {approval_id!r}", code="not_found", param=param
            )
        if pending.answer is not None:
            raise ApiError(
                400,
                f"approval {approval_id!r} was already answered ({pending.answer})",
                code="already_answered",
                param=param,
            )
        return pending
