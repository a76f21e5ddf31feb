"""The one permission order, as a pure function of a call and its context.

Every caller (the interactive loop, a background task, a subagent, a direct invocation)
goes through :func:`evaluate_permission`; they differ only in the context they pass, so the
same call can never be decided two ways depending on who made it.  The order:

1. **Denials.**  A call outside the caller's ceiling, or matched by a deny rule, is denied.
   Nothing later softens this, bypass included.
2. **Always ask.**  A deny or ask rule that cannot be evaluated, a matching ask rule, a
   catastrophic removal and a write into a trust-widening location ask in every mode
   (bypass too); remembered consent never answers them.  In plan mode an ask about a call
   that is not ``inspect`` becomes a denial, these included.
3. **Mode by risk class.**  A command call that only runs read-only commands inside the
   workspace counts as ``inspect``.  ``default`` allows inspect, ``accept-edits`` also
   modify, ``bypass`` everything left; ``plan`` allows inspect and denies the rest, unless
   an allow rule names the call (remembered consent does not count there): without one,
   plan mode is read-only end to end.  A tool with no declared risk class asks (is denied
   in plan).
4. **Allow rules, then remembered consent,** turn a remaining ask into an allow.

The function reads nothing but its arguments: paths are canonicalised only through the
context's ``resolve_path`` port (a :data:`PathResolver`, the host's symlink walk unless the
caller binds another), so a symlink cannot carry a call around a rule and this module does
no filesystem I/O of its own.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentrig.permissions._match import Direction, match_rule
from agentrig.permissions._risk import (
    canonical_root,
    catastrophic_command,
    catastrophic_path,
    is_read_only_command,
    trust_widening_path,
)
from agentrig.permissions._rules import PermissionRule
from agentrig.permissions._shell import ParsedCommand, split_command
from agentrig.permissions._types import (
    MatchOutcome,
    Mode,
    PermissionCall,
    PermissionContext,
    PermissionDecision,
    ReasonCode,
)
from agentrig.tools import RiskClass

__all__ = ["evaluate_permission", "withheld_tools"]


_NO_RULE: tuple[None, None] = (None, None)


def _first(
    rules: tuple[PermissionRule, ...],
    call: PermissionCall,
    ctx: PermissionContext,
    direction: Direction,
) -> tuple[PermissionRule | None, PermissionRule | None]:
    """The first matching rule and the first unevaluable one."""
    if not rules:  # most lists are empty
        return _NO_RULE
    resolve = ctx.resolve_path
    root = canonical_root(ctx.workspace_root, resolve)
    settings = canonical_root(ctx.rules_root, resolve) if ctx.rules_root is not None else None
    unevaluable: PermissionRule | None = None
    for rule in rules:
        outcome: MatchOutcome = match_rule(
            rule,
            call,
            root=root,
            home=ctx.home,
            direction=direction,
            resolve=resolve,
            settings=settings,
        )
        if outcome == "match":
            return rule, unevaluable
        if outcome == "unevaluable" and unevaluable is None:
            unevaluable = rule
    return None, unevaluable


def _parsed_command(call: PermissionCall) -> ParsedCommand | None:
    arg = call.tool.arg
    if arg is None or arg.kind != "command":
        return None
    value = call.arguments.get(arg.key)
    if isinstance(value, str):
        return split_command(value)
    if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
        return split_command([str(v) for v in value])
    return None


def _always_ask_case(
    call: PermissionCall, ctx: PermissionContext, parsed: ParsedCommand | None
) -> tuple[ReasonCode, str] | None:
    arg = call.tool.arg
    if arg is None:
        return None
    home, resolve = ctx.home, ctx.resolve_path
    root = canonical_root(ctx.workspace_root, resolve)
    roots = (root, *(canonical_root(r, resolve) for r in ctx.additional_roots))
    if parsed is not None and any(
        catastrophic_command(parsed, root=r, home=home, resolve=resolve) for r in roots
    ):
        return "catastrophic-removal", "the command removes the root, home or workspace"
    if arg.kind != "path" or call.tool.risk == "inspect":
        return None
    value = call.arguments.get(arg.key)
    values = [value] if isinstance(value, str) else value if isinstance(value, list) else None
    if values is None or not all(isinstance(v, str) for v in values):
        return "trust-widening-write", (
            f"argument {arg.key!r} cannot be read, so a write into a trust-widening "
            "location cannot be ruled out"
        )
    for item in values:
        assert isinstance(item, str)
        if any(catastrophic_path(item, root=r, home=home, resolve=resolve) for r in roots):
            return "catastrophic-removal", f"{item!r} is the root, home, workspace or above"
        if trust_widening_path(
            item, root=root, home=home, patterns=ctx.trust_paths, resolve=resolve
        ):
            return "trust-widening-write", f"{item!r} is a trust-widening location"
    return None


def evaluate_permission(call: PermissionCall, ctx: PermissionContext) -> PermissionDecision:
    """Decide one call: ``allow``, ``deny`` or ``ask``, with a reason code and the deciding rule.

    The workspace root is canonicalised where a rule, a command or a path argument needs it
    (a call with none of them, the common case, needs no path at all).
    """

    # 1. the ceiling and deny rules: nothing later softens a denial
    if ctx.ceiling is not None and _first(ctx.ceiling, call, ctx, "grant")[0] is None:
        return PermissionDecision(
            "deny", "outside-ceiling", call, None, "the call is outside the caller's ceiling"
        )
    denied, unevaluable_deny = _first(ctx.rules.deny, call, ctx, "restrict")
    if denied is not None:
        return PermissionDecision("deny", "deny-rule", call, denied, f"denied by {denied.text!r}")

    # 2. the cases that always reach a person
    parsed = _parsed_command(call)
    read_only = parsed is not None and _read_only(parsed, ctx)
    risk: RiskClass | None = "inspect" if read_only else call.tool.risk
    asked, unevaluable_ask = _first(ctx.rules.ask, call, ctx, "restrict")
    always = _always_ask(call, ctx, parsed, (unevaluable_deny, asked, unevaluable_ask))
    if always is not None:
        reason, rule, message = always
        if ctx.mode == "plan" and risk != "inspect":
            return PermissionDecision("deny", "plan-mode", call, rule, f"plan mode: {message}")
        return PermissionDecision("ask", reason, call, rule, message, always_ask=True)

    # 3. the mode, by risk class; 4. allow rules and remembered consent answer what is left
    by_mode = _by_mode(call, ctx.mode, risk, read_only)
    if by_mode is not None:
        return by_mode
    allowed, _ = _first(ctx.rules.allow, call, ctx, "grant")
    if allowed is not None:
        return PermissionDecision(
            "allow", "allow-rule", call, allowed, f"allowed by {allowed.text!r}"
        )
    if ctx.mode == "plan":
        return _plan_refusal(call, risk)
    remembered, _ = _first(ctx.remembered, call, ctx, "grant")
    if remembered is not None:
        return PermissionDecision(
            "allow", "remembered-consent", call, remembered, f"remembered {remembered.text!r}"
        )
    if risk is None:
        return PermissionDecision(
            "ask", "undeclared-risk", call, None, "the tool declares no risk class"
        )
    return PermissionDecision(
        "ask", "mode-requires-approval", call, None, f"{ctx.mode} mode asks before {risk} calls"
    )


def _read_only(parsed: ParsedCommand, ctx: PermissionContext) -> bool:
    """Whether the command only runs read-only commands inside the workspace roots."""
    resolve = ctx.resolve_path
    return is_read_only_command(
        parsed,
        root=canonical_root(ctx.workspace_root, resolve),
        home=ctx.home,
        resolve=resolve,
        roots=tuple(canonical_root(extra, resolve) for extra in ctx.additional_roots),
        expand=ctx.expand_glob,
    )


def _always_ask(
    call: PermissionCall,
    ctx: PermissionContext,
    parsed: ParsedCommand | None,
    rules: tuple[PermissionRule | None, PermissionRule | None, PermissionRule | None],
) -> tuple[ReasonCode, PermissionRule | None, str] | None:
    """Why the call must reach a person whatever the mode (None: it need not)."""
    unevaluable_deny, asked, unevaluable_ask = rules
    if unevaluable_deny is not None:
        return "unevaluable-rule", unevaluable_deny, "a deny rule cannot be evaluated"
    if asked is not None:
        return "ask-rule", asked, f"asked by {asked.text!r}"
    if unevaluable_ask is not None:
        return "unevaluable-rule", unevaluable_ask, "an ask rule cannot be evaluated"
    case = _always_ask_case(call, ctx, parsed)
    return None if case is None else (case[0], None, case[1])


def _by_mode(
    call: PermissionCall, mode: Mode, risk: RiskClass | None, read_only: bool
) -> PermissionDecision | None:
    """What the mode alone decides for the call's risk class (None: the allow rules decide)."""
    if risk == "inspect" and mode != "bypass":
        why: ReasonCode = "read-only-command" if read_only else "mode-allows"
        return PermissionDecision("allow", why, call, None, f"{mode} mode allows inspect calls")
    if mode == "bypass":
        return PermissionDecision("allow", "bypass", call, None, "bypass mode")
    if mode == "accept-edits" and risk == "modify":
        return PermissionDecision(
            "allow", "mode-allows", call, None, "accept-edits mode allows modify"
        )
    return None


def _plan_refusal(call: PermissionCall, risk: RiskClass | None) -> PermissionDecision:
    """Plan mode asks about no change: what no allow rule named is refused outright."""
    if risk is None:
        return PermissionDecision(
            "deny", "plan-undeclared-risk", call, None, "plan mode refuses undeclared risk"
        )
    return PermissionDecision("deny", "plan-mode", call, None, f"plan mode refuses {risk} calls")


def withheld_tools(tool_ids: Iterable[str], ctx: PermissionContext) -> tuple[str, ...]:
    """The tools to withhold from the model: denied outright by a rule or outside the ceiling.

    A tool is denied outright by a deny rule covering every call (``Tool``, ``Tool(*)``,
    ``mcp__srv__*``...), and is outside the ceiling when no ceiling rule names it at all.
    """
    out: list[str] = []
    for tool_id in tool_ids:
        denied = any(
            r.matches_every_call and r.names_tool(tool_id, loose=True) for r in ctx.rules.deny
        )
        outside = ctx.ceiling is not None and not any(
            r.names_tool(tool_id, loose=False) for r in ctx.ceiling
        )
        if denied or outside:
            out.append(tool_id)
    return tuple(out)
