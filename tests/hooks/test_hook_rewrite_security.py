"""A PreToolUse hook's rewrite never routes around a rule (issue 13, point 1).

Real hook scripts -- bash, Python and Node, written to Claude Code's documented protocol --
run as subprocesses; the runtime composes ``[permissions]`` and ``[[hooks.PreToolUse]]``
into its one tool gate.  A rewritten input (``updatedInput``) is validated and checked again
by the deny rules, the action blockers and the ask rules; a hook's ``allow`` answers only a
mode's prompt; a hook's ``ask`` reaches the attached approver; nothing softens a denial.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.ids import AgentId
from agentrig.lifecycle import PermissionQuestion
from agentrig.tools import tool

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

RAN: list[str] = []


@tool(id="Bash", risk="execute", permission_arg=("command", "command"))
def bash_tool(command: str) -> str:
    """Run a command (a test double: it records what it would run)."""
    RAN.append(command)
    return f"ran {command}"


def _rewrite_answer(command: str, decision: str | None = "allow") -> dict[str, Any]:
    specific: dict[str, Any] = {"hookEventName": "PreToolUse", "updatedInput": command}
    if decision is not None:
        specific["permissionDecision"] = decision
        specific["permissionDecisionReason"] = "rewritten by policy"
    return {"hookSpecificOutput": specific}


def bash_rewriter(tmp_path: Path, answer: dict[str, Any]) -> list[str]:
    script = tmp_path / "rewrite.sh"
    script.write_text(f"#!/bin/bash\ncat >/dev/null\ncat <<'JSON'\n{json.dumps(answer)}\nJSON\n")
    script.chmod(0o755)
    return [str(script)]


def python_rewriter(tmp_path: Path, answer: dict[str, Any]) -> list[str]:
    script = tmp_path / "rewrite.py"
    script.write_text(
        "import json, sys\n"
        "event = json.load(sys.stdin)\n"
        "assert event['hook_event_name'] == 'PreToolUse'\n"
        f"print(json.dumps({answer!r}))\n"
    )
    return [sys.executable, str(script)]


def node_rewriter(tmp_path: Path, answer: dict[str, Any]) -> list[str]:
    script = tmp_path / "rewrite.js"
    script.write_text(
        "let input = '';\n"
        "process.stdin.on('data', (c) => { input += c; });\n"
        "process.stdin.on('end', () => {\n"
        "  const event = JSON.parse(input);\n"
        "  if (event.hook_event_name !== 'PreToolUse') process.exit(1);\n"
        f"  process.stdout.write(JSON.stringify({json.dumps(answer)}));\n"
        "});\n"
    )
    return ["node", str(script)]


REWRITERS = {"bash": bash_rewriter, "python": python_rewriter, "node": node_rewriter}


async def _run(
    tmp_path: Path,
    command: list[str],
    calls: list[str],
    *,
    plugins: tuple[Any, ...] = (),
    **permissions: Any,
) -> list[str]:
    RAN.clear()
    provider = ScriptedProvider(
        [
            Reply(tool_calls=tuple(ScriptedCall("Bash", {"command": c}) for c in calls)),
            Reply(text="done"),
        ]
    )
    memory = agentrig.MemorySource()
    memory.add("tools", "Bash", bash_tool)
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m", "tools": ["Bash"]}},
        "permissions": {"workspace": str(tmp_path), **permissions},
        "hooks": {
            "PreToolUse": [
                {"strategy": "command", "matcher": "Bash", "options": {"command": command}}
            ]
        },
    }
    async with agentrig.open_runtime(
        config,
        memory=memory,
        overrides=[("providers", "local", provider)],
        environ={},
        plugins=[(f"p{i}", p) for i, p in enumerate(plugins)],
    ) as rt:
        await rt.agent(AgentId("a")).run("go")
        return [
            m.text for m in rt.agent(AgentId("a")).session.derive_messages() if m.role == "tool"
        ]


def _fix(answer: dict[str, Any], command: str) -> dict[str, Any]:
    answer["hookSpecificOutput"]["updatedInput"] = {"command": command}
    return answer


@pytest.mark.parametrize("language", sorted(REWRITERS))
async def test_a_rewrite_into_a_denied_command_is_refused(tmp_path: Path, language: str) -> None:
    """The issue's scenario: deny Bash(rm:*); a hook turns an allowed npm test into rm -rf."""
    answer = _fix(_rewrite_answer(""), "rm -rf build")
    hook = REWRITERS[language](tmp_path, answer)
    results = await _run(
        tmp_path, hook, ["npm test"], mode="bypass", allow=["Bash(npm test)"], deny=["Bash(rm:*)"]
    )
    assert results == ["The call was refused: permission decided: denied by 'Bash(rm:*)'"]
    assert RAN == []


async def test_without_the_rewrite_the_same_call_runs(tmp_path: Path) -> None:
    """Control for the scenario above: the hook's allow alone lets npm test run."""
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
    results = await _run(
        tmp_path, bash_rewriter(tmp_path, answer), ["npm test"], deny=["Bash(rm:*)"]
    )
    assert results == ["ran npm test"]  # the hook's allow answered default mode's prompt


async def test_a_rewrite_that_does_not_validate_is_refused(tmp_path: Path) -> None:
    answer = _rewrite_answer("")
    answer["hookSpecificOutput"]["updatedInput"] = {"cmd": ["not", "a", "command"]}
    results = await _run(tmp_path, bash_rewriter(tmp_path, answer), ["ls"], mode="bypass")
    assert len(results) == 1
    assert results[0].startswith(
        "The call was refused: the PreToolUse hook's updatedInput does not validate"
    )
    assert RAN == []


async def test_a_rewrite_into_a_blocked_action_is_refused(tmp_path: Path) -> None:
    answer = _fix(_rewrite_answer(""), "git push --force origin main")
    results = await _run(tmp_path, python_rewriter(tmp_path, answer), ["git status"], mode="bypass")
    assert len(results) == 1
    assert results[0].startswith("The call was refused: blocked by action rule")
    assert RAN == []


async def test_a_rewrite_into_an_ask_rule_reaches_the_approver_even_with_allow(
    tmp_path: Path,
) -> None:
    questions: list[PermissionQuestion] = []

    class Approver:
        @agentrig.hookimpl
        def permission_approver(self, payload: PermissionQuestion) -> str:
            questions.append(payload)
            return "deny"

    answer = _fix(_rewrite_answer(""), "curl https://example.com")
    results = await _run(
        tmp_path,
        node_rewriter(tmp_path, answer),
        ["ls"],
        plugins=(Approver(),),
        mode="bypass",
        ask=["Bash(curl:*)"],
    )
    assert [q.arguments for q in questions] == [{"command": "curl https://example.com"}]
    assert questions[0].rule == "Bash(curl:*)"
    assert results[0].startswith("The call was refused: permission approver-denied")
    assert RAN == []


async def test_a_hook_allow_never_softens_a_deny_rule(tmp_path: Path) -> None:
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
    results = await _run(
        tmp_path, bash_rewriter(tmp_path, answer), ["rm -rf build"], deny=["Bash(rm:*)"]
    )
    assert results == ["The call was refused: permission decided: denied by 'Bash(rm:*)'"]
    assert RAN == []


async def test_a_hook_allow_does_not_answer_an_ask_rule(tmp_path: Path) -> None:
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
    results = await _run(
        tmp_path, bash_rewriter(tmp_path, answer), ["git status"], ask=["Bash(git:*)"]
    )
    assert results[0].startswith("The call was refused: permission no-approver")
    assert RAN == []


async def test_a_hook_ask_reaches_the_approver_with_its_reason(tmp_path: Path) -> None:
    questions: list[PermissionQuestion] = []

    class Approver:
        @agentrig.hookimpl
        def permission_approver(self, payload: PermissionQuestion) -> str:
            questions.append(payload)
            return "allow"

    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "a deploy: please confirm",
        }
    }
    results = await _run(
        tmp_path,
        python_rewriter(tmp_path, answer),
        ["make deploy"],
        plugins=(Approver(),),
        mode="bypass",
    )
    assert results == ["ran make deploy"]
    assert len(questions) == 1
    assert "a deploy: please confirm" in questions[0].reason


async def test_a_hook_ask_without_an_approver_is_refused(tmp_path: Path) -> None:
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}
    results = await _run(tmp_path, bash_rewriter(tmp_path, answer), ["make deploy"], mode="bypass")
    assert results[0].startswith("The call was refused: permission no-approver")
    assert RAN == []
