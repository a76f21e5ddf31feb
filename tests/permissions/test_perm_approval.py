"""Resolving asks through an approver, remembered consent and the always-ask cases."""

from __future__ import annotations

from pathlib import Path

import anyio
import attrs
import pytest
from perm_support import BASH, EDIT, WRITE, context

from agentrig.ids import CallId
from agentrig.lifecycle import ExecutionControlError
from agentrig.permissions import (
    Approval,
    ConsentMemory,
    PermissionCall,
    PermissionDecision,
    PermissionRuleError,
    evaluate_permission,
    parse_rules,
    resolve,
)

pytestmark = pytest.mark.anyio


def _ask(tmp_path: Path, **kwargs: object) -> PermissionDecision:
    ctx = context(tmp_path, **kwargs)  # type: ignore[arg-type]
    return evaluate_permission(PermissionCall(EDIT, {"path": "src/a.py"}), ctx)


async def test_no_approver_denies(tmp_path: Path) -> None:
    decision = _ask(tmp_path)
    assert decision.verdict == "ask"
    resolution = await resolve(decision, None)
    assert (resolution.verdict, resolution.reason) == ("deny", "no-approver")


async def test_non_ask_decisions_pass_through(tmp_path: Path) -> None:
    decision = _ask(tmp_path, mode="accept-edits")

    async def never(_: PermissionDecision) -> object:
        raise AssertionError("an allow must not reach the approver")

    resolution = await resolve(decision, never)
    assert (resolution.verdict, resolution.reason) == ("allow", "decided")


@pytest.mark.parametrize("answer", [True, "allow", 1, None, {"verdict": "allow"}, "yes"])
async def test_anything_but_an_approval_denies(tmp_path: Path, answer: object) -> None:
    async def sloppy(_: PermissionDecision) -> object:
        return answer

    resolution = await resolve(_ask(tmp_path), sloppy)
    assert (resolution.verdict, resolution.reason) == ("deny", "approver-invalid")


async def test_explicit_answers(tmp_path: Path) -> None:
    async def yes(_: PermissionDecision) -> object:
        return Approval.allow("fine")

    async def no(_: PermissionDecision) -> object:
        return Approval.deny("nope")

    assert (await resolve(_ask(tmp_path), yes)).reason == "approver-allowed"
    denied = await resolve(_ask(tmp_path), no)
    assert (denied.verdict, denied.reason, denied.message) == ("deny", "approver-denied", "nope")


async def test_failing_approver_denies_and_keeps_the_error(tmp_path: Path) -> None:
    async def broken(_: PermissionDecision) -> object:
        raise RuntimeError("ui crashed")

    resolution = await resolve(_ask(tmp_path), broken)
    assert (resolution.verdict, resolution.reason) == ("deny", "approver-failed")
    assert isinstance(resolution.error, RuntimeError)


async def test_an_execution_control_outcome_of_the_approver_propagates(tmp_path: Path) -> None:
    class Suspended(ExecutionControlError):
        code = "test.suspended"

    async def suspends(_: PermissionDecision) -> object:
        raise Suspended("waiting for a person, durably")

    with pytest.raises(Suspended):
        await resolve(_ask(tmp_path), suspends)


async def test_allow_and_remember_answers_the_next_call(tmp_path: Path) -> None:
    memory = ConsentMemory()

    async def remember(_: PermissionDecision) -> object:
        return Approval.allow_and_remember("Edit(src/**)")

    first = await resolve(_ask(tmp_path), remember, memory=memory)
    assert first.allowed
    assert [r.text for r in memory.rules] == ["Edit(src/**)"]
    ctx = memory.apply(context(tmp_path))
    again = evaluate_permission(PermissionCall(EDIT, {"path": "src/b.py"}), ctx)
    assert (again.verdict, again.reason) == ("allow", "remembered-consent")


def test_remembered_rules_use_the_allow_grammar() -> None:
    with pytest.raises(PermissionRuleError, match="remembered"):
        Approval.allow_and_remember("*")
    with pytest.raises(PermissionRuleError):
        Approval.allow_and_remember(parse_rules(["Bash*"], "deny")[0])


def test_approval_verdict_is_checked() -> None:
    with pytest.raises(ValueError, match="verdict"):
        Approval("maybe")  # type: ignore[arg-type]


ALWAYS_ASK = [
    pytest.param(WRITE, {"path": ".git/hooks/pre-push"}, [], "trust-widening-write", id="git-hook"),
    pytest.param(WRITE, {"path": "~/.bashrc"}, [], "trust-widening-write", id="bashrc"),
    pytest.param(WRITE, {"path": "agentrig.toml"}, [], "trust-widening-write", id="config"),
    pytest.param(BASH, {"command": "rm -rf ~"}, [], "catastrophic-removal", id="rm-home"),
    pytest.param(BASH, {"command": "rm -rf /"}, [], "catastrophic-removal", id="rm-root"),
    pytest.param(BASH, {"command": "git push"}, ["Bash(git push:*)"], "ask-rule", id="ask-rule"),
    pytest.param(
        BASH, {"command": "$X"}, ["Bash(git push:*)"], "unevaluable-rule", id="unevaluable"
    ),
]


@pytest.mark.parametrize(("tool", "arguments", "ask", "reason"), ALWAYS_ASK)
@pytest.mark.parametrize("mode", ["default", "accept-edits", "bypass"])
async def test_always_ask_cases_ignore_consent(
    tmp_path: Path,
    tool: object,
    arguments: dict[str, object],
    ask: list[str],
    reason: str,
    mode: str,
) -> None:
    remembered = [f"{tool.tool_id}"]  # type: ignore[attr-defined]
    ctx = context(tmp_path, mode=mode, ask=ask, allow=remembered, remembered=remembered)  # type: ignore[arg-type]
    call = PermissionCall(tool, arguments)  # type: ignore[arg-type]
    decision = evaluate_permission(call, ctx)
    assert (decision.verdict, decision.reason, decision.always_ask) == ("ask", reason, True)

    memory = ConsentMemory()

    async def remember(_: PermissionDecision) -> object:
        return Approval.allow_and_remember(tool.tool_id)  # type: ignore[attr-defined]

    resolution = await resolve(decision, remember, memory=memory)
    assert resolution.allowed  # the person said yes to this one call
    assert resolution.remembered is None
    assert memory.rules == ()
    # and the same call asks again next time
    assert evaluate_permission(call, memory.apply(ctx)).verdict == "ask"


def test_plan_mode_denies_always_ask_changes(tmp_path: Path) -> None:
    ctx = context(tmp_path, mode="plan", allow=["Write"])
    decision = evaluate_permission(PermissionCall(WRITE, {"path": ".git/config"}), ctx)
    assert (decision.verdict, decision.reason) == ("deny", "plan-mode")


def test_decision_is_frozen(tmp_path: Path) -> None:
    decision = _ask(tmp_path)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        decision.verdict = "allow"  # type: ignore[misc]


# ---- answers are bound to the call they answer ---------------------------------------------


def _ask_call(tmp_path: Path, call_id: str | None, path: str = "src/a.py") -> PermissionDecision:
    branded = CallId(call_id) if call_id is not None else None
    call = PermissionCall(EDIT, {"path": path}, call_id=branded)
    return evaluate_permission(call, context(tmp_path))


@pytest.mark.parametrize(
    ("asked", "answered"),
    [("call-1", "call-2"), ("call-1", None), (None, "call-1"), ("call-1", "CALL-1")],
)
@pytest.mark.parametrize("verdict", ["allow", "remember"])
async def test_an_answer_for_another_call_is_refused(
    tmp_path: Path, asked: str | None, answered: str | None, verdict: str
) -> None:
    memory = ConsentMemory()
    named = CallId(answered) if answered is not None else None

    async def confused(_: PermissionDecision) -> object:
        if verdict == "remember":
            return Approval.allow_and_remember("Edit", call_id=named)
        return Approval.allow(call_id=named)

    resolution = await resolve(_ask_call(tmp_path, asked), confused, memory=memory)
    assert (resolution.verdict, resolution.reason) == ("deny", "approver-mismatched")
    assert memory.rules == ()  # nothing remembered from an answer meant for another call
    assert (answered is None) == ("names no call" in resolution.message)


async def test_an_answer_naming_its_call_is_taken(tmp_path: Path) -> None:
    async def careful(decision: PermissionDecision) -> object:
        return Approval.allow("ok", call_id=decision.call.call_id)

    resolution = await resolve(_ask_call(tmp_path, "call-7"), careful)
    assert (resolution.verdict, resolution.reason) == ("allow", "approver-allowed")


async def test_a_queue_approver_that_swaps_answers_allows_nothing(tmp_path: Path) -> None:
    # Fault injection: an approver serving two questions at once hands each the answer
    # prepared for the other (allow for the harmless edit, deny for the other).  Bound
    # answers turn the swap into two refusals instead of one wrong allow.
    prepared = {
        "c-safe": Approval.allow(call_id=CallId("c-safe")),
        "c-risky": Approval.deny(call_id=CallId("c-risky")),
    }
    swapped = {"c-safe": "c-risky", "c-risky": "c-safe"}
    both_asked = anyio.Event()
    asked: list[str] = []

    async def swapping(decision: PermissionDecision) -> object:
        assert decision.call.call_id is not None
        asked.append(decision.call.call_id)
        if len(asked) == 2:
            both_asked.set()
        await both_asked.wait()
        return prepared[swapped[decision.call.call_id]]

    results: dict[str, str] = {}

    async def one(call_id: str, path: str) -> None:
        resolution = await resolve(_ask_call(tmp_path, call_id, path), swapping)
        results[call_id] = f"{resolution.verdict}/{resolution.reason}"

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "c-safe", "src/a.py")
        tg.start_soon(one, "c-risky", "src/b.py")
    assert results == {
        "c-safe": "deny/approver-mismatched",
        "c-risky": "deny/approver-mismatched",
    }
