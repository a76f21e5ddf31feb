"""``PreToolUse`` hooks as the agent's tool-call gate.

This module is the one place the hooks package meets the agent layer; ``agentrig.hooks``
loads it only when :func:`make_hook_gate` or :class:`HookGateDecision` is first used, so
importing the contract does not import the agent loop.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import attrs

from agentrig.cancel import CancelSignal, is_abort
from agentrig.hooks._combine import CombinedOutcome
from agentrig.hooks._events import HookEvent
from agentrig.hooks._runner import HookRunner
from agentrig.llm import ToolCallBlock
from agentrig.tools import GateDecision, Tool

__all__ = [
    "ApprovalRequest",
    "HookApprover",
    "HookGate",
    "HookGateDecision",
    "invalid_input",
    "make_hook_gate",
]


@attrs.frozen(slots=True)
class HookGateDecision(GateDecision):
    """A :class:`GateDecision` that also carries the hooks' combined answer.

    ``updated_arguments`` (inherited) is set when a command hook rewrote the call's input;
    the call then runs with those arguments instead of the model's.
    """

    outcome: CombinedOutcome | None = None


@attrs.frozen(slots=True)
class ApprovalRequest:
    """What an approver is shown when a hook asked for a person."""

    tool: Tool
    call: ToolCallBlock
    agent: Any
    outcome: CombinedOutcome

    @property
    def arguments(self) -> Mapping[str, Any]:
        """The arguments the call would run with (a hook's rewrite, if any)."""
        updated = self.outcome.updated_input
        return updated if updated is not None else self.call.arguments


HookApprover = Callable[[ApprovalRequest], Awaitable[object]]
"""Answers a hook's ``ask``: only ``True`` itself approves; anything else -- a truthy string,
``None``, an exception -- refuses the call."""


def _run_signal(agent: Any) -> CancelSignal:
    # The Gate type passes no signal; the agent's current run signal is what cancels the run.
    candidate = getattr(agent, "current_signal", None)
    return candidate if isinstance(candidate, CancelSignal) else CancelSignal()


def invalid_input(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    """Why ``arguments`` do not validate against ``tool``'s input schema (``None``: they do).

    A hook's ``updatedInput`` is checked before anything else looks at it, so a rewrite can
    never reach the permission rules, the blockers or the tool in a shape the tool refuses.
    """
    try:
        tool.input_schema.parse(dict(arguments))
    except Exception as exc:
        if is_abort(exc):
            raise
        return f"{type(exc).__name__}: {exc}"
    return None


class HookGate:
    """The agent :class:`~agentrig.agent.Gate` running ``PreToolUse`` hooks.

    Built by :func:`make_hook_gate`.
    """

    def __init__(
        self,
        runner: HookRunner,
        *,
        approver: HookApprover | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        self.runner = runner
        self.approver = approver
        self.cwd = os.fspath(cwd) if cwd is not None else None

    def denied_tools(self, tools: Sequence[Tool]) -> set[str]:
        """None: a hook judges each call, so no tool is withheld from the model up front."""
        return set()

    async def consult(self, tool: Tool, call: ToolCallBlock, agent: Any) -> CombinedOutcome:
        """Run the ``PreToolUse`` hooks matching ``call`` and combine their answers."""
        event = HookEvent.pre_tool_use(
            tool.id,
            call.arguments,
            session_id=str(agent.session_id),
            cwd=self.cwd,
            tool_use_id=call.id,
            agent_id=str(agent.id),
        )
        return await self.runner.run(event, signal=_run_signal(agent))

    async def __call__(self, tool: Tool, call: ToolCallBlock, agent: Any) -> GateDecision:
        combined = await self.consult(tool, call, agent)

        def refuse(reason: str) -> HookGateDecision:
            return HookGateDecision(False, reason, outcome=combined)

        if combined.denied:
            return refuse(combined.reason)
        if combined.stop:
            return refuse(f"a hook stopped the run: {combined.stop_reason}")
        if combined.updated_input is not None:
            problem = invalid_input(tool, combined.updated_input)
            if problem is not None:
                return refuse(f"the hook's updatedInput does not validate: {problem}")
        if combined.needs_approval:
            why = combined.reason or "a hook asked for a person to approve this call"
            if self.approver is None:
                return refuse(f"needs approval: {why} (no approver is attached)")
            try:
                answer = await self.approver(ApprovalRequest(tool, call, agent, combined))
            except Exception as exc:
                if is_abort(exc):
                    raise
                return refuse(f"needs approval: the approver failed ({type(exc).__name__})")
            if answer is not True:
                return refuse(f"needs approval: not approved ({why})")
        return HookGateDecision(
            True, "", updated_arguments=combined.updated_input, outcome=combined
        )


def make_hook_gate(
    runner: HookRunner,
    *,
    approver: HookApprover | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> HookGate:
    """The :class:`~agentrig.agent.Gate` that runs ``PreToolUse`` hooks before each tool call.

    * deny (exit 2, a JSON block or deny) -> refused with the hook's reason;
    * a hook that gave no verdict -> refused, naming why (``PreToolUse`` fails closed);
    * ``continue: false`` -> refused with the stop reason;
    * ask -> refused as "needs approval" unless ``approver`` returns ``True``;
    * otherwise allowed, with a command hook's ``updatedInput`` in
      :attr:`HookGateDecision.updated_arguments`.

    ``cwd`` is the ``cwd`` hooks are told (default: this process's working directory).
    """
    return HookGate(runner, approver=approver, cwd=cwd)
