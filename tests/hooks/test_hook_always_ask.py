"""Class: no hook answers a call that always reaches a person (issue 28, point 3).

A catastrophic removal, an explicit ask rule, a rule that cannot be evaluated and a
trust-widening write ask in every mode.  A ``PreToolUse`` or ``PermissionRequest`` hook
answering ``allow`` -- or rewriting a harmless call into one of them -- does not answer
them: the question still goes to the approver (the person), and without one it is refused.
A hook may still refuse such a call.  Real command hooks, one runtime per scenario.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lifecycle_support import RAN, hook, run_agent

from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.lifecycle import PermissionQuestion
from agentrig.plugin import hookimpl

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

ALWAYS_ASK = [
    "rm -rf ~",
    "rm -rf /",
    "rm -fr $HOME",
    "sudo rm -r /",
    "find ~ -delete",
    "rm -rf ..",
    "rm -rf ./*",
    "env X=1 rm --recursive --force ~/",
    "git push origin main",  # the ask rule
    "python3 <<< 'print(1)'",  # unevaluable against the deny rule (a side channel)
    "mytool --run curl x",  # unevaluable: an unknown program carrying the denied one
]
PERMISSIONS = {
    "mode": "bypass",
    "ask": ["Bash(git push:*)"],
    "deny": ["Bash(curl:*)"],
    "action_blockers": "off",  # the hooks are what is tested, not the blockers before them
}


def _specific(event: str, **fields: object) -> dict[str, object]:
    return {"hookSpecificOutput": {"hookEventName": event, **fields}}


class Person:
    """The approver: records every question it is asked and refuses."""

    def __init__(self) -> None:
        self.asked: list[PermissionQuestion] = []

    @hookimpl
    def permission_approver(self, payload: PermissionQuestion) -> str:
        self.asked.append(payload)
        return "deny"


def _calls(commands: list[str]) -> Reply:
    calls = tuple(ScriptedCall("Bash", {"command": c}, id=f"c{i}") for i, c in enumerate(commands))
    return Reply(text="", tool_calls=calls)


def _allowing(tmp_path: Path, rewrite: dict[str, Any] | None = None) -> dict[str, Any]:
    decision: dict[str, Any] = {"behavior": "allow"}
    if rewrite is not None:
        decision["updatedInput"] = rewrite
    return {
        "PreToolUse": [
            hook(tmp_path / "pre.log", answer=_specific("PreToolUse", permissionDecision="allow"))
        ],
        "PermissionRequest": [
            hook(tmp_path / "req.log", answer=_specific("PermissionRequest", decision=decision))
        ],
    }


@pytest.mark.slow
@pytest.mark.parametrize("person", [True, False], ids=["approver", "nobody"])
async def test_hooks_answering_allow_do_not_answer_the_always_ask_calls(
    tmp_path: Path, person: bool
) -> None:
    approver = Person()
    out = await run_agent(
        tmp_path,
        _allowing(tmp_path),
        [_calls([*ALWAYS_ASK, "echo ok"]), "done"],
        plugins=[approver] if person else [],
        permissions=PERMISSIONS,
    )
    assert RAN == ["echo ok"]  # only the call nothing asks about ran
    texts = out.tool_texts()
    assert len(texts) == len(ALWAYS_ASK) + 1
    if person:
        assert [q.arguments["command"] for q in approver.asked] == ALWAYS_ASK
        assert all(q.always_ask for q in approver.asked)
    else:
        assert all("no approver" in t for t in texts[:-1]), texts


@pytest.mark.slow
@pytest.mark.parametrize("target", ["rm -rf ~", "rm -rf /", "git push", "python3 - < x"])
async def test_a_permission_request_rewrite_into_an_always_ask_call_reaches_the_person(
    tmp_path: Path, target: str
) -> None:
    approver = Person()
    hooks = _allowing(tmp_path, rewrite={"command": target})
    del hooks["PreToolUse"]
    out = await run_agent(
        tmp_path,
        hooks,
        [_calls(["make build"]), "done"],
        plugins=[approver],
        permissions={**PERMISSIONS, "mode": "default"},
    )
    assert RAN == []
    (question,) = approver.asked
    assert question.arguments == {"command": target}
    assert question.always_ask
    assert "denied" in out.tool_texts()[0] or "refused" in out.tool_texts()[0]


async def test_a_permission_request_allow_still_answers_a_mode_prompt(tmp_path: Path) -> None:
    approver = Person()
    await run_agent(
        tmp_path,
        {"PermissionRequest": _allowing(tmp_path)["PermissionRequest"]},
        [_calls(["make build"]), "done"],
        plugins=[approver],
        permissions={"mode": "default"},
    )
    assert RAN == ["make build"]
    assert approver.asked == []


async def test_a_hook_may_still_refuse_an_always_ask_call(tmp_path: Path) -> None:
    approver = Person()
    deny = _specific("PermissionRequest", decision={"behavior": "deny", "message": "no"})
    out = await run_agent(
        tmp_path,
        {"PermissionRequest": [hook(tmp_path / "req.log", answer=deny)]},
        [_calls(["rm -rf ~"]), "done"],
        plugins=[approver],
        permissions=PERMISSIONS,
    )
    assert RAN == []
    assert approver.asked == []
    assert "denied by a PermissionRequest hook" in out.tool_texts()[0]
