"""Resolving an ``ask``: a person answers where an approver is attached, a denial where not.

An attended caller and a detached one share the evaluation order and differ only here, in
who answers.  An approver is any async callable taking the decision; the runtime wires it to
a first-result hook.  Only an :class:`Approval` value counts as an answer: anything else it
returns (``True``, ``"yes"``, ``None``) denies, so a sloppy approver cannot approve by
truthiness.  An approver that raises denies as well, and the exception is kept on the
resolution; cancellation is never caught.

An answer is bound to the call it answers: when the call carries an id, the
:class:`Approval` must carry the same ``call_id``.  An approver that answers several
questions at once (a UI, a queue, another process) can otherwise hand the answer meant for
one call to another; such an answer -- or one that names no call -- is refused
(``approver-mismatched``).

"Allow and remember" records an allow rule in a :class:`ConsentMemory` (the one mutable
object of this package).  The rule is parsed with the allow grammar, and it is not recorded
when the decision was one of the always-ask cases, because a remembered scope would be wide
enough to answer the next such call too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Literal

import attrs

from agentrig.ids import CallId
from agentrig.lifecycle import ExecutionControlError
from agentrig.permissions._rules import PermissionRule, parse_rule
from agentrig.permissions._types import PermissionContext, PermissionDecision

__all__ = [
    "Approval",
    "Approver",
    "ConsentMemory",
    "Resolution",
    "ResolutionReason",
    "resolve",
]

ResolutionReason = Literal[
    "decided",
    "no-approver",
    "approver-allowed",
    "approver-denied",
    "approver-invalid",
    "approver-mismatched",
    "approver-failed",
]


@attrs.frozen(slots=True)
class Approval:
    """An approver's explicit answer: :meth:`allow`, :meth:`deny` or :meth:`allow_and_remember`.

    ``call_id`` names the call the answer is for (``decision.call.call_id``); it must equal
    the id of the call being resolved.
    """

    verdict: Literal["allow", "deny"] = attrs.field(
        validator=attrs.validators.in_(("allow", "deny"))
    )
    remember: PermissionRule | None = None
    message: str = ""
    call_id: CallId | None = attrs.field(default=None, kw_only=True)

    @classmethod
    def allow(cls, message: str = "", *, call_id: CallId | None = None) -> Approval:
        """Allow this one call."""
        return cls("allow", None, message, call_id=call_id)

    @classmethod
    def deny(cls, message: str = "", *, call_id: CallId | None = None) -> Approval:
        """Deny this call."""
        return cls("deny", None, message, call_id=call_id)

    @classmethod
    def allow_and_remember(
        cls, rule: str | PermissionRule, message: str = "", *, call_id: CallId | None = None
    ) -> Approval:
        """Allow this call and remember ``rule`` (parsed with the allow grammar) for later ones."""
        parsed = rule if isinstance(rule, PermissionRule) else parse_rule(rule, "remembered")
        if parsed.list_name not in ("allow", "remembered"):
            parsed = parse_rule(parsed.text, "remembered")
        return cls("allow", parsed, message, call_id=call_id)


Approver = Callable[[PermissionDecision], Awaitable[object]]
"""An async callable that answers an ``ask`` decision with an :class:`Approval`."""


class ConsentMemory:
    """The allow rules a person asked to remember, in the order they were granted."""

    __slots__ = ("_rules",)

    def __init__(self, rules: Iterable[PermissionRule] = ()) -> None:
        self._rules: list[PermissionRule] = list(rules)

    @property
    def rules(self) -> tuple[PermissionRule, ...]:
        return tuple(self._rules)

    def remember(self, rule: PermissionRule) -> None:
        """Add ``rule`` (once) to the remembered set."""
        if rule not in self._rules:
            self._rules.append(rule)

    def apply(self, ctx: PermissionContext) -> PermissionContext:
        """``ctx`` with this memory as its remembered consent."""
        if not self._rules and not ctx.remembered:
            return ctx  # nothing remembered: the context as it is (the common case)
        return attrs.evolve(ctx, remembered=self.rules)


@attrs.frozen(slots=True)
class Resolution:
    """The final answer for a call: ``allow`` or ``deny``, why, and any rule remembered."""

    verdict: Literal["allow", "deny"]
    reason: ResolutionReason
    decision: PermissionDecision
    remembered: PermissionRule | None = None
    message: str = ""
    error: BaseException | None = attrs.field(default=None, eq=False)

    @property
    def allowed(self) -> bool:
        return self.verdict == "allow"


async def resolve(
    decision: PermissionDecision,
    approver: Approver | None,
    *,
    memory: ConsentMemory | None = None,
) -> Resolution:
    """Turn a decision into allow/deny, asking ``approver`` when the decision is ``ask``.

    Without an approver an ask is denied (reason ``no-approver``), as is an approver that
    fails (``approver-failed``) -- except an :class:`~agentrig.errors.ExecutionControlError`,
    which propagates (spec: a saved pre-effect wait suspends the execution, it is no tool
    failure); an answer that does not name ``decision.call``'s id is refused
    (``approver-mismatched``).  ``memory``, when
    given, records an "allow and remember" answer unless the decision was an always-ask case.
    """
    if decision.verdict != "ask":
        return Resolution(decision.verdict, "decided", decision, None, decision.message)
    if approver is None:
        return Resolution("deny", "no-approver", decision, None, "no approver is attached")
    try:
        answer = await approver(decision)
    except ExecutionControlError:
        raise  # control flow (a durable run suspending for its answer), not a failed approver
    except Exception as exc:  # fail closed; the error stays on the resolution
        return Resolution("deny", "approver-failed", decision, None, str(exc), exc)
    if not isinstance(answer, Approval):
        return Resolution(
            "deny",
            "approver-invalid",
            decision,
            None,
            f"the approver returned {type(answer).__name__}, not an Approval",
        )
    expected = decision.call.call_id
    if answer.call_id != expected:
        why = (
            f"the answer names no call; it must name call {expected!r}"
            if answer.call_id is None
            else f"the answer is for call {answer.call_id!r}, not {expected!r}"
        )
        return Resolution("deny", "approver-mismatched", decision, None, why)
    if answer.verdict == "deny":
        return Resolution("deny", "approver-denied", decision, None, answer.message)
    remembered = None if decision.always_ask else answer.remember
    if remembered is not None and memory is not None:
        memory.remember(remembered)
    return Resolution("allow", "approver-allowed", decision, remembered, answer.message)
