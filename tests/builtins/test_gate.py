"""The runtime's tool gate: permissions from config, approver hook, blockers, withholding."""

from __future__ import annotations

from typing import Any

import pytest

import agentrig
from agentrig.builtins._gate import PermissionGate
from agentrig.builtins._gate_choice import DeferredGate
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.errors import ConfigError
from agentrig.ids import AgentId, CallId
from agentrig.lifecycle import PermissionQuestion
from agentrig.permissions import Approval, PermissionRuleError
from agentrig.tools import tool


@tool(risk="inspect")
def look(path: str) -> str:
    """Read something."""
    return f"read {path}"


@tool(risk="modify", permission_arg=("path", "path"))
def write(path: str, text: str) -> str:
    """Write something."""
    return f"wrote {path}"


@tool(risk="execute", permission_arg=("command", "command"))
def shell(command: str) -> str:
    """Run a command."""
    return f"ran {command}"


class Approver:
    """Allows every question it is asked, and keeps them."""

    def __init__(self) -> None:
        self.questions: list[PermissionQuestion] = []

    @agentrig.hookimpl
    def permission_approver(self, payload: PermissionQuestion) -> str:
        self.questions.append(payload)
        return "allow"


def _config(**permissions: Any) -> dict[str, Any]:
    return {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m", "tools": ["look", "write", "shell"]}},
        "permissions": permissions,
    }


async def _run(
    config: dict[str, Any], calls: list[ScriptedCall], plugins: tuple[Any, ...] = ()
) -> tuple[list[str], ScriptedProvider]:
    provider = ScriptedProvider([Reply(tool_calls=tuple(calls)), Reply(text="done")])
    memory = agentrig.MemorySource()
    for t in (look, write, shell):
        memory.add("tools", t.id, t)
    async with agentrig.open_runtime(
        config,
        memory=memory,
        overrides=[("providers", "local", provider)],
        environ={},
        plugins=[(f"p{i}", p) for i, p in enumerate(plugins)],
    ) as rt:
        await rt.agent(AgentId("a")).run("go")
        results = [
            m.text for m in rt.agent(AgentId("a")).session.derive_messages() if m.role == "tool"
        ]
    return results, provider


@pytest.mark.anyio
async def test_inspect_runs_and_modify_without_an_approver_is_refused(tmp_path: Any) -> None:
    results, _ = await _run(
        _config(workspace=str(tmp_path)),
        [ScriptedCall("look", {"path": "a"}), ScriptedCall("write", {"path": "b", "text": "x"})],
    )
    assert results[0] == "read a"
    assert results[1].startswith("The call was refused: permission no-approver")


@pytest.mark.anyio
async def test_an_approver_hook_answers_the_ask(tmp_path: Any) -> None:
    approver = Approver()
    results, _ = await _run(
        _config(workspace=str(tmp_path)),
        [ScriptedCall("write", {"path": "b", "text": "x"})],
        plugins=(approver,),
    )
    assert results == ["wrote b"]
    assert approver.questions[0].tool == "write"


@pytest.mark.anyio
async def test_an_approver_hook_answer_is_bound_to_the_call_it_answers(tmp_path: Any) -> None:
    questions: list[PermissionQuestion] = []

    class Stale:
        """Answers every question with an Approval it made for the first call it saw."""

        first: CallId | None = None

        @agentrig.hookimpl
        def permission_approver(self, payload: PermissionQuestion) -> Approval:
            questions.append(payload)
            if self.first is None:
                self.first = payload.call_id
            return Approval.allow(call_id=self.first)

    results, _ = await _run(
        _config(workspace=str(tmp_path)),
        [
            ScriptedCall("write", {"path": "a", "text": "x"}, id="call-a"),
            ScriptedCall("write", {"path": "b", "text": "x"}, id="call-b"),
        ],
        plugins=(Stale(),),
    )
    assert [q.call_id for q in questions] == ["call-a", "call-b"]
    assert results[0] == "wrote a"
    assert results[1].startswith("The call was refused: permission approver-mismatched")
    assert "'call-a', not 'call-b'" in results[1]


@pytest.mark.anyio
async def test_permission_is_asked_only_after_the_arguments_validated(tmp_path: Any) -> None:
    approver = Approver()
    results, _ = await _run(
        _config(workspace=str(tmp_path)),
        [
            ScriptedCall("shell", {"command": 42}, id="bad"),  # fails validation
            ScriptedCall("shell", {"command": "make build"}, id="good"),
        ],
        plugins=(approver,),
    )
    assert [q.call_id for q in approver.questions] == ["good"]  # nobody approved the invalid call
    assert results[0].startswith("schema.validation")
    assert results[1] == "ran make build"


@pytest.mark.anyio
async def test_an_approver_answering_nonsense_denies(tmp_path: Any) -> None:
    class Confused:
        @agentrig.hookimpl
        def permission_approver(self, payload: PermissionQuestion) -> object:
            return True  # not an answer: fails closed

    results, _ = await _run(
        _config(workspace=str(tmp_path)),
        [ScriptedCall("write", {"path": "b", "text": "x"})],
        plugins=(Confused(),),
    )
    assert results[0].startswith("The call was refused")


@pytest.mark.anyio
async def test_a_tool_denied_outright_is_withheld_from_the_model(tmp_path: Any) -> None:
    _, provider = await _run(
        _config(workspace=str(tmp_path), deny=["shell"]), [ScriptedCall("look", {"path": "a"})]
    )
    assert [spec.name for spec in provider.requests[0].tools] == ["look", "write"]


@pytest.mark.anyio
async def test_bypass_mode_still_honours_blockers_and_deny_rules(tmp_path: Any) -> None:
    results, _ = await _run(
        _config(workspace=str(tmp_path), mode="bypass", deny=["write"]),
        [
            ScriptedCall("shell", {"command": "cd x && git push origin"}),
            ScriptedCall("shell", {"command": "echo git push"}),
        ],
    )
    assert "blocked by action rule" in results[0]
    assert results[1] == "ran echo git push"


@pytest.mark.anyio
async def test_blockers_can_be_switched_off(tmp_path: Any) -> None:
    results, _ = await _run(
        _config(workspace=str(tmp_path), mode="bypass", action_blockers="off"),
        [ScriptedCall("shell", {"command": "git push"})],
    )
    assert results == ["ran git push"]


def _hook_script(tmp_path: Any, name: str, body: str) -> str:
    script = tmp_path / name
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o700)
    return str(script)


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_a_pretooluse_command_hook_from_config_denies(tmp_path: Any) -> None:
    deny = _hook_script(tmp_path, "deny.sh", "cat >/dev/null\necho 'no shell today' >&2\nexit 2\n")
    config = _config(workspace=str(tmp_path), mode="bypass", action_blockers="off")
    config["hooks"] = {
        "PreToolUse": [{"strategy": "command", "matcher": "shell", "options": {"command": deny}}]
    }
    results, _ = await _run(
        config,
        [ScriptedCall("shell", {"command": "ls"}), ScriptedCall("look", {"path": "a"})],
    )
    assert "no shell today" in results[0]
    assert results[1] == "read a"  # the matcher names only the shell tool


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_a_command_hook_rewrites_the_input_the_tool_runs_with(tmp_path: Any) -> None:
    answer = (
        '{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
        '"permissionDecision": "allow", "updatedInput": {"command": "ls -la"}}}'
    )
    rewrite = _hook_script(tmp_path, "rewrite.sh", f"cat >/dev/null\necho '{answer}'\n")
    config = _config(workspace=str(tmp_path), mode="bypass", action_blockers="off")
    config["hooks"] = {"PreToolUse": [{"strategy": "command", "options": {"command": rewrite}}]}
    results, _ = await _run(config, [ScriptedCall("shell", {"command": "ls"})])
    assert results == ["ran ls -la"]


@pytest.mark.anyio
async def test_an_http_hook_to_a_metadata_address_is_refused_when_the_runtime_is_built(
    tmp_path: Any,
) -> None:
    config = _config(workspace=str(tmp_path), mode="bypass", action_blockers="off")
    config["hooks"] = {
        "PreToolUse": [
            {"strategy": "http", "options": {"url": "http://169.254.169.254/hook", "timeout": 2}}
        ]
    }
    with pytest.raises(ConfigError) as caught:
        await _run(config, [ScriptedCall("look", {"path": "a"})])
    assert "cloud-metadata" in str(caught.value)


# Without [permissions], [hooks] or [claude_code] the gate holds only the defaults and is
# built on first use (whether the permission layer then stays unimported for an agent with
# no tool is checked in a fresh interpreter, tests/cli/test_cli_run_imports.py).


def _no_gate_tables() -> dict[str, Any]:
    config = _config()
    del config["permissions"]
    return config


async def _gate_of(config: dict[str, Any]) -> object:
    memory = agentrig.MemorySource()
    for t in (look, write, shell):
        memory.add("tools", t.id, t)
    async with agentrig.open_runtime(config, memory=memory, environ={}) as rt:
        return rt.agents.gate


@pytest.mark.anyio
async def test_without_gate_tables_the_defaults_decide_each_call() -> None:
    approver = Approver()
    calls = [
        ScriptedCall("look", {"path": "a"}),
        ScriptedCall("write", {"path": "b", "text": "x"}),
        ScriptedCall("shell", {"command": "git push"}),
    ]
    results, provider = await _run(_no_gate_tables(), calls, plugins=(approver,))
    assert [spec.name for spec in provider.requests[0].tools] == ["look", "write", "shell"]
    assert results[:2] == ["read a", "wrote b"]
    assert [q.tool for q in approver.questions] == ["write"]  # the default mode asks
    assert results[2].startswith("The call was refused: blocked by action rule git push")


@pytest.mark.anyio
async def test_without_gate_tables_or_an_approver_an_ask_is_refused() -> None:
    results, _ = await _run(_no_gate_tables(), [ScriptedCall("write", {"path": "b", "text": "x"})])
    assert results[0].startswith("The call was refused: permission no-approver")


@pytest.mark.anyio
@pytest.mark.parametrize("table", [None, "permissions", "hooks", "claude_code"])
async def test_a_gate_table_builds_the_gate_at_composition(table: str | None) -> None:
    config = _no_gate_tables() if table is None else {**_no_gate_tables(), table: {}}
    gate = await _gate_of(config)
    assert isinstance(gate, DeferredGate if table is None else PermissionGate)


@pytest.mark.anyio
async def test_a_bad_rule_still_fails_the_composition() -> None:
    with pytest.raises(PermissionRuleError, match="'look\\('"):
        await _gate_of(_config(deny=["look("]))
