"""The tool-call gate a runtime composes from ``[permissions]`` and ``PreToolUse`` hooks.

For every tool call, in order:

1. the permission evaluator and the action blockers on the model's input -- a denial ends
   here, before any hook runs;
2. the ``PreToolUse`` hooks (when configured): a deny or ``continue: false`` refuses;
3. a hook's ``updatedInput`` is validated against the tool's schema and goes through the
   evaluator and the blockers again -- a rewrite never routes around a rule;
4. what is left to ask goes to the ``PermissionRequest`` hooks, then to the
   ``permission_approver`` hook (a denial when nobody answers): the evaluator's ask, unless
   a hook's ``allow`` answered a mode's prompt, and a hook's ``ask``.  No hook answers a
   call that always reaches a person (an ask *rule*, an unevaluable rule, a catastrophic
   removal, a trust-widening write): only the approver does (a hook may still refuse).

Nothing a hook says softens a denial.  Tools the rules deny outright are withheld from the
model.  A decision that cannot be evaluated never allows.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from agentrig.agent import agent_configs
from agentrig.builtins._rule_targets import check_rule_targets
from agentrig.builtins._trust import composition_trust_paths
from agentrig.builtins.workspace._base import WorkspaceTool
from agentrig.ids import AgentId, CallId
from agentrig.lifecycle import PermissionQuestion
from agentrig.llm import ToolCallBlock
from agentrig.permissions import (
    DEFAULT_BLOCK_RULES,
    ActionBlocker,
    Approval,
    BlockRule,
    ConsentMemory,
    PermissionCall,
    PermissionContext,
    PermissionDecision,
    PermissionRules,
    RuleBasedActionBlocker,
    evaluate_permission,
    first_block,
    permissions_config,
    resolve,
    withheld_tools,
)
from agentrig.tools import (
    TOOLS,
    FunctionTool,
    GateDecision,
    Tool,
    ToolPermissions,
    read_permissions,
)

if TYPE_CHECKING:
    from agentrig.agent import Agent, Gate
    from agentrig.hooks import CombinedOutcome, HookLifecycle
    from agentrig.kernel import Runtime

__all__ = ["ChainedGate", "PermissionGate", "compose_gate", "tool_permissions"]


def tool_permissions(tool: Tool) -> ToolPermissions:
    """What the evaluator needs to know about ``tool``, from its own declaration.

    A function tool or a workspace tool holds it, read once (its declaration never
    changes); any other tool is read as it is now.  Never a table of tools: a replaced tool
    is judged by its own.
    """
    if isinstance(tool, FunctionTool):  # first and alone: the ABC check below costs more
        return tool.permissions
    if isinstance(tool, WorkspaceTool):
        return tool.permissions
    return read_permissions(tool)


#: the answer for a call allowed as the model sent it (frozen: one for every such call)
_ALLOWED = GateDecision(True)


def _as_approval(answer: Any, call_id: CallId | None) -> Approval | None:
    # A plain answer was returned for this one question, so it is bound to its call; an
    # Approval names its call itself, and resolve() refuses it when that is another call.
    if isinstance(answer, Approval):
        return answer
    if answer == "allow":
        return Approval.allow(call_id=call_id)
    if answer == "deny":
        return Approval.deny(call_id=call_id)
    if isinstance(answer, tuple) and len(answer) == 3 and answer[:2] == ("allow", "remember"):
        return Approval.allow_and_remember(answer[2], call_id=call_id)
    return None  # anything else is not an answer: resolve() denies


class PermissionGate:
    """Permission evaluation + ``PreToolUse`` hooks + approver + blockers for one runtime."""

    def __init__(
        self,
        runtime: Runtime,
        context: PermissionContext,
        blockers: Sequence[ActionBlocker],
        *,
        hooks: HookLifecycle | None = None,
    ) -> None:
        self.runtime = runtime
        self.context = context
        self.blockers = tuple(blockers)
        self.hooks = hooks
        self.memory = ConsentMemory()

    def denied_tools(self, tools: Sequence[Tool]) -> set[str]:
        return set(withheld_tools([t.id for t in tools], self.context))

    async def _approver(self, decision: PermissionDecision, agent_id: AgentId) -> Approval | None:
        hooks = self.runtime.hooks
        if not hooks.has_listeners("permission_approver"):
            return None
        question = PermissionQuestion(
            agent_id=agent_id,
            tool=decision.call.tool_id,
            arguments=dict(decision.call.arguments),
            reason=decision.message or decision.reason,
            rule=str(decision.rule) if decision.rule is not None else None,
            call_id=decision.call.call_id,
            always_ask=decision.always_ask,
        )
        answer = await hooks.first_result("permission_approver", question)
        return _as_approval(answer, decision.call.call_id)

    def _check(
        self, tool: Tool, arguments: Any, ctx: PermissionContext, call_id: CallId
    ) -> tuple[PermissionDecision, GateDecision | None]:
        """Evaluate ``arguments``; a denial or an action block is returned as a refusal.

        The tool's permission class is read from ``tool`` itself on every call, never from
        a table: a tool that replaced another (``replace_tools``, a reloaded plugin) must be
        judged by its own declaration (a function tool holds its own, read once).
        """
        declared = tool_permissions(tool)
        decision = evaluate_permission(PermissionCall(declared, arguments, call_id=call_id), ctx)
        if decision.verdict == "deny":
            why = decision.message or decision.reason
            return decision, GateDecision(False, f"permission decided: {why}")
        blocked = first_block(self.blockers, declared.tool_id, arguments)
        if blocked is not None:
            reason = f"blocked by action rule {blocked.rule}: {blocked.reason}"
            return decision, GateDecision(False, reason)
        return decision, None

    def _rewrite(
        self, tool: Tool, updated: Any, ctx: PermissionContext, call_id: CallId, who: str
    ) -> tuple[PermissionDecision | None, GateDecision | None]:
        """Check a hook's ``updatedInput`` as if the model had sent it."""
        from agentrig.hooks import invalid_input

        problem = invalid_input(tool, updated)
        if problem is not None:
            return None, GateDecision(
                False, f"the {who} hook's updatedInput does not validate: {problem}"
            )
        return self._check(tool, updated, ctx, call_id)

    async def __call__(self, tool: Tool, call: ToolCallBlock, agent: Agent) -> GateDecision:
        ctx = self.memory.apply(self.context)
        call_id = CallId(call.id)  # the provider's token, branded where it enters the gate
        decision, refused = self._check(tool, call.arguments, ctx, call_id)
        if refused is not None:
            return refused
        hooks = self.hooks
        hooked: CombinedOutcome | None = None
        updated: Any = None
        if hooks is not None and hooks.has("PreToolUse"):
            hooked = await hooks.pre_tool_use(tool.id, call, agent)
            if hooked.denied:
                return GateDecision(False, hooked.reason)
            if hooked.stop:
                return GateDecision(False, f"a hook stopped the run: {hooked.stop_reason}")
            if hooked.updated_input is not None:
                updated = hooked.updated_input
                checked, refused = self._rewrite(tool, updated, ctx, call_id, "PreToolUse")
                if refused is not None or checked is None:
                    return refused or GateDecision(False, "the rewrite could not be checked")
                decision = checked
        if hooked is not None:
            decision = _with_hook_answer(decision, hooked)
        if decision.verdict == "allow":
            # decided: nobody is asked (what resolve() answers for it, without its records)
            return _ALLOWED if updated is None else GateDecision(True, updated_arguments=updated)
        if decision.verdict == "ask" and hooks is not None:
            answered = await self._permission_request(tool, call, decision, agent, ctx)
            if isinstance(answered, PermissionDecision):
                # the hook's rewrite is a call that always reaches a person: ask about it
                decision, updated = answered, answered.call.arguments
            elif answered is not None:
                if answered.allowed and answered.updated_arguments is None and updated is not None:
                    return attrs.evolve(answered, updated_arguments=updated)
                return answered
        approver = (
            functools.partial(self._approver, agent_id=agent.id)
            if self.runtime.hooks.has_listeners("permission_approver")
            else None
        )
        if decision.verdict == "ask" and approver is not None and hooks is not None:
            await hooks.notify(
                agent, f"The agent needs your permission to use {tool.id}", "permission_prompt"
            )
        resolution = await resolve(decision, approver, memory=self.memory)
        if not resolution.allowed:
            why = resolution.message or decision.message or decision.reason
            return GateDecision(False, f"permission {resolution.reason}: {why}")
        return GateDecision(True, updated_arguments=updated)

    async def _permission_request(
        self,
        tool: Tool,
        call: ToolCallBlock,
        decision: PermissionDecision,
        agent: Agent,
        ctx: PermissionContext,
    ) -> GateDecision | PermissionDecision | None:
        """``PermissionRequest`` hooks answer an ask for the user (``None``: they did not).

        A hook may refuse any call, but it never answers one that always reaches a person
        (an ask rule, a rule that cannot be evaluated, a catastrophic removal, a
        trust-widening write): its ``allow`` is not an answer there, and a rewrite that
        turns into such a call comes back as the decision to ask the approver about.
        """
        assert self.hooks is not None
        asked = await self.hooks.permission_request(tool.id, call, decision.call.arguments, agent)
        if asked is None:
            return None
        if asked.denied:
            return GateDecision(False, f"denied by a PermissionRequest hook: {asked.reason}")
        if asked.stop:
            return GateDecision(False, f"a hook stopped the run: {asked.stop_reason}")
        if asked.permission != "allow" or decision.always_ask:
            return None
        if asked.updated_input is None:
            return GateDecision(True)
        checked, refused = self._rewrite(
            tool, asked.updated_input, ctx, CallId(call.id), "PermissionRequest"
        )
        if refused is not None or checked is None:
            return refused or GateDecision(False, "the rewrite could not be checked")
        if checked.verdict == "ask" and checked.always_ask:
            return checked
        return GateDecision(True, updated_arguments=asked.updated_input)


def _with_hook_answer(decision: PermissionDecision, hooked: CombinedOutcome) -> PermissionDecision:
    """The evaluator's decision after the hooks' verdict (which never softens a denial).

    A hook's ``allow`` answers the prompt a *mode* would show (Claude Code: "allow skips the
    permission prompt"), but not an ask rule or an always-ask case ("deny and ask rules are
    still evaluated regardless of what the hook returns").  A hook's ``ask`` turns an allow
    into a question for the approver, carrying the hook's reason.
    """
    wanted = hooked.permission
    if decision.verdict == "ask" and wanted == "allow" and not decision.always_ask:
        return attrs.evolve(decision, verdict="allow", message="a PreToolUse hook allowed it")
    if decision.verdict == "allow" and wanted == "ask":
        why = hooked.reason or "a PreToolUse hook asked for a person to approve this call"
        return attrs.evolve(
            decision, verdict="ask", reason="hook-ask", message=why, always_ask=True
        )
    return decision


class ChainedGate:
    """Gates asked in order; the first refusal wins, a rewrite carries to the next gate."""

    def __init__(self, gates: Sequence[Gate]) -> None:
        self.gates = tuple(gates)

    def denied_tools(self, tools: Sequence[Tool]) -> set[str]:
        denied: set[str] = set()
        for gate in self.gates:
            denied |= gate.denied_tools(tools)
        return denied

    async def __call__(self, tool: Tool, call: ToolCallBlock, agent: Agent) -> GateDecision:
        updated: Any = None
        for gate in self.gates:
            decision = await gate(tool, call, agent)
            if not decision.allowed:
                return decision
            if decision.updated_arguments is not None:
                updated = decision.updated_arguments
                call = call.model_copy(update={"arguments": dict(updated)})
        return _ALLOWED if updated is None else GateDecision(True, updated_arguments=updated)


def compose_gate(rt: Runtime) -> Gate:
    """Build the runtime's gate: ``[permissions]`` and ``PreToolUse`` hooks as one decision."""
    hooks: HookLifecycle | None = None
    if any((rt.loaded.sections.get("hooks") or {}).values()):  # the layer only when used
        from agentrig.hooks import HookLifecycle, HookRunner

        runner = HookRunner.from_runtime(rt)
        hooks = HookLifecycle(
            runner,
            project_dir=rt.loaded.base_dir,
            permission_mode=permissions_config(rt.loaded).mode,
            dispatcher=rt.hooks,
        )
        rt.hooks.register(hooks, HookLifecycle.PLUGIN_NAME)
        rt.on_close("hooks", hooks.aclose)
    return _permission_gate(rt, hooks)


def _permission_gate(rt: Runtime, hooks: HookLifecycle | None = None) -> PermissionGate:
    config = permissions_config(rt.loaded)
    tools: dict[str, ToolPermissions] = {
        # a test override may put a non-tool in the catalog: it declares no permissions
        tid: tool_permissions(t)
        for tid, t in rt.catalog(TOOLS).entries()
        if isinstance(t, Tool)
    }
    rules = PermissionRules.parse(allow=config.allow, deny=config.deny, ask=config.ask, tools=tools)
    rules.check_anchors(str(rt.loaded.base_dir), tools)
    if agent_configs(rt.loaded):
        # the config declares its agents, so it names every tool a rule can mean; a runtime
        # whose agents are created in code gets their tools there, after composition
        declared = {name for agent in agent_configs(rt.loaded).values() for name in agent.tools}
        check_rule_targets(
            rules, {*tools, *declared, *rt.index.names("tools")}, source=rt.loaded.source
        )
    workspace = Path(config.workspace)
    if not workspace.is_absolute():
        workspace = rt.loaded.base_dir / workspace
    extra = tuple(str(rt.loaded.base_dir / d) for d in config.additional_directories)
    context = PermissionContext(
        workspace_root=str(workspace),
        rules=rules,
        mode=config.mode,
        additional_roots=extra,
        rules_root=str(rt.loaded.base_dir),
        trust_paths=composition_trust_paths(rt),
    )
    if config.action_blockers == "off":
        blockers: list[ActionBlocker] = []
    elif config.action_blockers == "default":
        blockers = [RuleBasedActionBlocker(DEFAULT_BLOCK_RULES)]
    else:
        blockers = [RuleBasedActionBlocker(tuple(BlockRule(r) for r in config.action_blockers))]
    return PermissionGate(rt, context, blockers, hooks=hooks)
