"""The server's lifecycle listener: the token budget before each model call (and after a
compaction's summary call), and approvals.

Registered on the runtime by :func:`~agentrig_server.create_app`.  It acts only on agents the
server is running a request for; every other agent of the runtime is left alone (its
questions get no answer from here).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

import agentrig
from agentrig.permissions import Approval
from agentrig.plugin import CompactionPlan, CompactionRequest, PermissionQuestion, RequestConfig
from agentrig_server._approvals import Approvals
from agentrig_server._errors import ApiError
from agentrig_server._events import ApprovalRequested
from agentrig_server._runs import RunService

__all__ = ["ServerHooks"]


class ServerHooks:
    """Hook implementations for served runs."""

    def __init__(self, runs: RunService, approvals: Approvals) -> None:
        self.runs = runs
        self.approvals = approvals

    @agentrig.hookimpl
    async def request_config(
        self, payload: RequestConfig, next: Callable[[RequestConfig], Awaitable[RequestConfig]]
    ) -> RequestConfig:
        run = self.runs.active_run(payload.agent.id)
        if run is not None:
            run.check_token_budget()  # spent: the signal is cancelled, no request goes out
        return await next(payload)

    @agentrig.hookimpl
    async def compaction(
        self,
        payload: CompactionRequest,
        next: Callable[[CompactionRequest], Awaitable[CompactionPlan | None]],
    ) -> CompactionPlan | None:
        plan = await next(payload)
        run = self.runs.active_run(payload.agent.id)
        if run is not None and plan is not None and plan.usage is not None:
            # the summary call spent tokens of the run's budget before its round is sent
            run.check_token_budget(plan.usage.total)
        return plan

    @agentrig.hookimpl
    async def permission_approver(self, payload: PermissionQuestion) -> Approval | None:
        run = self.runs.active_run(payload.agent_id)
        if run is None:
            return None
        exposed = run.exposed
        if exposed.approvals == "refuse":
            message = (
                f"the tool call {payload.tool!r} needs a person's approval, and model "
                f"{run.prompt.model!r} is served non-interactively "
                f'(server.agents.{run.prompt.model}.approvals = "refuse")'
            )
            run.refuse(ApiError(403, message, code="approval_required"))
            return Approval.deny(message, call_id=payload.call_id)
        pending = self.approvals.open(
            model=run.prompt.model,
            owner=run.caller.identity,
            session_id=run.session_id,
            tool=payload.tool,
            arguments=payload.arguments,
            reason=payload.reason,
            response_id=run.response_id,
        )
        try:
            await run.emit(
                ApprovalRequested(
                    pending.id, pending.tool, pending.arguments, pending.reason, payload.call_id
                )
            )
            # no answer in time -- or the run stopped (a disconnect, a budget) -- denies
            with anyio.move_on_after(exposed.approval_timeout), run.signal.scope():
                await pending.answered.wait()
        finally:
            self.approvals.close(pending.id)
        if pending.answer == "allow":
            return Approval.allow(pending.message, call_id=payload.call_id)
        if pending.answer == "deny":
            return Approval.deny(
                pending.message or "denied by a person through the API", call_id=payload.call_id
            )
        return Approval.deny(
            f"no answer within {exposed.approval_timeout:g}s", call_id=payload.call_id
        )
