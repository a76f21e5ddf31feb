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
    tally = _Tally()
    for outcome in items:
        tally.add(outcome)
    enforced = enforces(event)
    if tally.blocking_errors and enforced:
        tally.deny.extend(f"hook gave no verdict ({e})" for e in tally.blocking_errors)
    distinct = {json.dumps(dict(r), sort_keys=True, default=str) for r in tally.rewrites}
    if len(distinct) > 1 and enforced:
        tally.deny.append(
            f"{len(tally.rewrites)} hooks returned different updatedInput values; "
            "refusing to pick one"
        )
    permission, reason = tally.verdict()
    rewrites = tally.rewrites
    updated = rewrites[0] if rewrites and len(distinct) == 1 and permission != "deny" else None
    return CombinedOutcome(
        event=event,
        permission=permission,
        reason=reason,
        updated_input=updated,
        additional_context=tuple(tally.contexts),
        outputs=tuple(tally.outputs),
        system_messages=tuple(tally.messages),
        errors=tuple(tally.errors),
        stop=tally.stop,
        stop_reason=tally.stop_reason,
        outcomes=items,
    )


@attrs.define
class _Tally:
    """What the outcomes of one event said, gathered in order before they are weighed."""

    deny: list[str] = attrs.Factory(list)
    ask: list[str] = attrs.Factory(list)
    defer: list[str] = attrs.Factory(list)
    allow: list[str] = attrs.Factory(list)
    errors: list[str] = attrs.Factory(list)
    blocking_errors: list[str] = attrs.Factory(list)  # hooks not configured on_error="proceed"
    contexts: list[str] = attrs.Factory(list)
    outputs: list[str] = attrs.Factory(list)
    messages: list[str] = attrs.Factory(list)
    rewrites: list[Mapping[str, Any]] = attrs.Factory(list)
    stop: bool = False
    stop_reason: str | None = None

    def add(self, outcome: HookOutcome) -> None:
        if isinstance(outcome, Deny):
            self.deny.append(_label(outcome) + outcome.reason)
            if outcome.decision is not None:
                self.note(outcome.decision)
        elif isinstance(outcome, HookErrorOutcome):
            self.errors.append(_label(outcome) + outcome.reason)
            if not outcome.proceed:
                self.blocking_errors.append(_label(outcome) + outcome.reason)
        elif isinstance(outcome, Allow):
            self.add_allow(outcome)

    def add_allow(self, outcome: Allow) -> None:
        decision = outcome.decision
        suppressed = decision is not None and decision.suppress_output
        if outcome.output.strip() and not suppressed:
            self.outputs.append(outcome.output)
        if decision is None:
            return
        self.note(decision)
        if decision.refuses:  # a third-party strategy that kept a block inside an Allow
            self.deny.append(_label(outcome) + decision.refusal_reason)
            return
        wanted = decision.permission
        why = decision.permission_reason or ""
        if wanted == "ask":
            self.ask.append(_label(outcome) + why if why else "")
        elif wanted == "allow" and outcome.steering:
            self.allow.append(why)
        elif wanted == "defer" and outcome.steering:
            self.defer.append(why)
        if decision.updated_input is not None and outcome.steering:
            self.rewrites.append(decision.updated_input)

    def note(self, decision: Decision) -> None:
        if decision.additional_context:
            self.contexts.append(decision.additional_context)
        if decision.system_message:
            self.messages.append(decision.system_message)
        if decision.continue_ is False:
            self.stop = True
            self.stop_reason = self.stop_reason or decision.stop_reason or "a hook asked to stop"

    def verdict(self) -> tuple[Permission | None, str]:
        """The strongest permission any hook gave (deny > ask > defer > allow) and why."""
        ranked: tuple[tuple[Permission, list[str]], ...] = (
            ("deny", self.deny),
            ("ask", self.ask),
            ("defer", self.defer),
            ("allow", self.allow),
        )
        for permission, reasons in ranked:
            if reasons:
                reason = "; ".join(r for r in reasons if r)
                if permission == "deny" and not reason:
                    reason = "denied by hook"
                return permission, reason
        return None, ""
