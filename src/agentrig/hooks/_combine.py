"""Combining the outcomes of several hooks of one event into one answer.

Order of strength: **deny** (a :class:`Deny`, a stated block, or -- on an enforcing event
only -- a hook that gave no verdict) beats everything; then **ask** (a person must answer);
then **defer** (leave the call to the normal flow; it must not cancel another hook's demand
for a person); then **allow**.  A hook with no opinion adds nothing.  Only a steering answer
(a command hook's) contributes ``allow``, ``defer`` or an ``updatedInput``; a non-steering
hook can still deny, and its ``ask`` is honoured because asking never loosens the gate.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from agentrig.hooks._enforcement import enforces
from agentrig.hooks._outcome import Allow, Decision, Deny, HookErrorOutcome, HookOutcome, Permission

__all__ = ["CombinedOutcome", "combine"]


@attrs.frozen(slots=True)
class CombinedOutcome:
    """The combined answer of every hook that ran for one event.

    ``permission`` is the strongest verdict stated (``None`` when no hook expressed one);
    ``reason`` explains it (the deciding hooks' reasons).  ``errors`` lists the named reasons
    of hooks that gave no verdict -- they count as a deny only where :func:`enforces` says the
    event enforces, and never for a hook configured ``on_error = "proceed"``.  ``stop`` is
    set when a hook answered ``continue: false``.
    """

    event: str
    permission: Permission | None = None
    reason: str = ""
    updated_input: Mapping[str, Any] | None = None
    additional_context: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    system_messages: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    stop: bool = False
    stop_reason: str | None = None
    outcomes: tuple[HookOutcome, ...] = ()

    @property
    def denied(self) -> bool:
        return self.permission == "deny"

    @property
    def needs_approval(self) -> bool:
        return self.permission == "ask"


def _label(outcome: HookOutcome) -> str:
    return f"{outcome.source}: " if outcome.source else ""


def combine(outcomes: Iterable[HookOutcome], *, event: str) -> CombinedOutcome:
    """Combine the outcomes of the hooks that ran for ``event`` (see the module docs)."""
    items = tuple(outcomes)
    by_permission: dict[str, list[str]] = {"deny": [], "ask": [], "defer": [], "allow": []}
    errors: list[str] = []
    blocking_errors: list[str] = []  # errors of hooks not configured on_error = "proceed"
    contexts: list[str] = []
    outputs: list[str] = []
    messages: list[str] = []
    rewrites: list[Mapping[str, Any]] = []
    stop = False
    stop_reason: str | None = None

    def note(decision: Decision) -> None:
        nonlocal stop, stop_reason
        if decision.additional_context:
            contexts.append(decision.additional_context)
        if decision.system_message:
            messages.append(decision.system_message)
        if decision.continue_ is False:
            stop = True
            stop_reason = stop_reason or decision.stop_reason or "a hook asked to stop"

    for outcome in items:
        if isinstance(outcome, Deny):
            by_permission["deny"].append(_label(outcome) + outcome.reason)
            if outcome.decision is not None:
                note(outcome.decision)
        elif isinstance(outcome, HookErrorOutcome):
            errors.append(_label(outcome) + outcome.reason)
            if not outcome.proceed:
                blocking_errors.append(_label(outcome) + outcome.reason)
        elif isinstance(outcome, Allow):
            decision = outcome.decision
            suppressed = decision is not None and decision.suppress_output
            if outcome.output.strip() and not suppressed:
                outputs.append(outcome.output)
            if decision is None:
                continue
            note(decision)
            if decision.refuses:  # a third-party strategy that kept a block inside an Allow
                by_permission["deny"].append(_label(outcome) + decision.refusal_reason)
                continue
            wanted = decision.permission
            why = decision.permission_reason or ""
            if wanted == "ask":
                by_permission["ask"].append(_label(outcome) + why if why else "")
            elif wanted in ("allow", "defer") and outcome.steering:
                by_permission[wanted].append(why)
            if decision.updated_input is not None and outcome.steering:
                rewrites.append(decision.updated_input)

    if blocking_errors and enforces(event):
        by_permission["deny"].extend(f"hook gave no verdict ({e})" for e in blocking_errors)
    distinct = {json.dumps(dict(r), sort_keys=True, default=str) for r in rewrites}
    if len(distinct) > 1 and enforces(event):
        by_permission["deny"].append(
            f"{len(rewrites)} hooks returned different updatedInput values; refusing to pick one"
        )

    permission: Permission | None = None
    for name in ("deny", "ask", "defer", "allow"):
        if by_permission[name]:
            permission = name
            break
    reasons = [r for r in by_permission[permission] if r] if permission else []
    reason = "; ".join(reasons)
    if permission == "deny" and not reason:
        reason = "denied by hook"
    updated = rewrites[0] if rewrites and len(distinct) == 1 and permission != "deny" else None
    return CombinedOutcome(
        event=event,
        permission=permission,
        reason=reason,
        updated_input=updated,
        additional_context=tuple(contexts),
        outputs=tuple(outputs),
        system_messages=tuple(messages),
        errors=tuple(errors),
        stop=stop,
        stop_reason=stop_reason,
        outcomes=items,
    )
