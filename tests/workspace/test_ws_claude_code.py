"""Claude Code's permission rules and hook scripts act on the workspace tools unchanged.

The project holds a ``.claude/settings.json`` as Claude Code reads it -- rules
``Bash(git diff:*)``, ``Read(./.env)``, ``Edit(src/**)`` and two PreToolUse hooks from
Claude Code's hooks guide (the Bash command validator, the file-protection one-liner) --
and the agent runs with the real toolset, Bash in bubblewrap.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.cli import main
from agentrig.errors import ConfigError
from agentrig.ids import AgentId

HERE = Path(__file__).resolve().parent

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed"),
]

#: the file-protection hook of Claude Code's hooks guide, verbatim
PROTECT = (
    'python3 -c "import json, sys; data=json.load(sys.stdin); '
    "path=data.get('tool_input',{}).get('file_path',''); "
    "sys.exit(2 if any(p in path for p in ['.env', 'package-lock.json', '.git/']) else 0)\""
)


def _project(tmp_path: Path, mode: str = "default") -> Path:
    project = tmp_path / "project"
    (project / ".claude" / "hooks").mkdir(parents=True)
    (project / "src").mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "src" / "app.py").write_text("DEBUG = True\n")
    (project / "src" / ".env").write_text("TOKEN=1\n")
    (project / "other.py").write_text("x = 1\n")
    (project / ".env").write_text("SECRET=hunter2\n")
    shutil.copy(HERE / "claude_hooks" / "bash_command_validator.py", project / ".claude/hooks")
    validator = 'python3 "$CLAUDE_PROJECT_DIR"/.claude/hooks/bash_command_validator.py'
    settings = {
        "permissions": {
            "allow": ["Bash(git diff:*)", "Edit(src/**)"],
            "deny": ["Read(./.env)", "Grep(./.env)"],
        },
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": validator}]},
                {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": PROTECT}]},
            ]
        },
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    (project / "agentrig.toml").write_text(
        textwrap.dedent(
            f"""\
            [providers.local]
            kind = "scripted"

            [agents.a]
            provider = "local"
            model = "m"
            tools = ["workspace"]

            [permissions]
            mode = "{mode}"

            [claude_code]
            settings = [".claude/settings.json"]

            [workspace.sandbox]
            backend = "bubblewrap"
            """
        )
    )
    return project


async def _run(project: Path, calls: list[ScriptedCall]) -> list[str]:
    provider = ScriptedProvider([Reply(tool_calls=tuple(calls)), "done"])
    async with agentrig.open_runtime(
        project / "agentrig.toml", overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        agent = rt.agent(AgentId("a"))
        await agent.run("go")
        return [m.text for m in agent.session.derive_messages() if m.role == "tool"]


@pytest.mark.anyio
@pytest.mark.slow
async def test_rules_and_hooks_written_for_claude_code_decide_the_calls(tmp_path: Path) -> None:
    project = _project(tmp_path)
    edit = {"old_string": "True", "new_string": "False"}
    results = await _run(
        project,
        [
            ScriptedCall("Bash", {"command": "git diff --stat"}, id="1"),
            ScriptedCall("Read", {"file_path": str(project / ".env")}, id="2"),
            ScriptedCall("Edit", {"file_path": str(project / "src/app.py"), **edit}, id="3"),
            ScriptedCall("Edit", {"file_path": str(project / "other.py"), **edit}, id="4"),
            ScriptedCall("Bash", {"command": "grep -r DEBUG src"}, id="5"),
            ScriptedCall("Edit", {"file_path": str(project / "src/.env"), **edit}, id="6"),
            ScriptedCall("Bash", {"command": "curl -s https://example.com"}, id="7"),
            ScriptedCall("Grep", {"pattern": "SECRET", "path": ".env"}, id="8"),
            ScriptedCall("Write", {"file_path": "src/new.py", "content": "x = 1\n"}, id="9"),
            ScriptedCall("Write", {"file_path": "top.py", "content": "x = 1\n"}, id="10"),
        ],
    )
    assert results[0] == "[no output]"  # allowed by Bash(git diff:*), ran in the sandbox
    assert "denied by 'Read(./.env)'" in results[1]
    assert results[2].startswith("Replaced 1 occurrence")  # allowed by Edit(src/**)
    assert (project / "src/app.py").read_text() == "DEBUG = False\n"
    assert "no-approver" in results[3]  # no rule grants it: asks, nobody to answer
    assert (project / "other.py").read_text() == "x = 1\n"
    assert "Use 'rg' (ripgrep) instead of 'grep'" in results[4]  # the validator's exit 2
    assert results[5].startswith("The call was refused: hook PreToolUse")  # the one-liner
    assert (project / "src/.env").read_text() == "TOKEN=1\n"
    assert "no-approver" in results[6]
    # Claude Code's family: Edit rules reach Write (Read rules do not reach Grep: see docs)
    assert "denied by 'Grep(./.env)'" in results[7]
    assert results[8].startswith("Created")  # allowed by Edit(src/**)
    assert "no-approver" in results[9]
    assert not (project / "top.py").exists()


@pytest.mark.anyio
async def test_bash_offered_without_a_sandbox_is_a_config_error(tmp_path: Path) -> None:
    project = _project(tmp_path)
    toml = project / "agentrig.toml"
    toml.write_text(toml.read_text().replace('[workspace.sandbox]\nbackend = "bubblewrap"\n', ""))
    with pytest.raises(ConfigError, match="no sandbox is configured"):
        await _run(project, [])
    toml.write_text(toml.read_text() + '\n[workspace.sandbox]\nbackend = "off"\n')
    with pytest.raises(ConfigError, match=r"workspace\.sandbox\.backend"):
        await _run(project, [])


#: explicit allow rules for every change the plan-mode runs below attempt
PLAN_ALLOW = '"Bash(git diff:*)", "Edit(src/**)", "Write", "Bash(touch:*)", "Bash(sh:*)"'
#: every kind of change the toolset could make, each one allowed by a rule above
PLAN_CHANGES = [
    ("Write", {"file_path": "new.txt", "content": "x"}),
    ("Write", {"file_path": "src/new.py", "content": "x"}),
    ("Edit", {"file_path": "src/app.py", "old_string": "True", "new_string": "False"}),
    ("Bash", {"command": "touch made.txt"}),
    ("Bash", {"command": "sh -c 'echo x > src/app.py'"}),
]
PLAN_READS = [
    ("Read", {"file_path": "src/app.py"}),
    ("Grep", {"pattern": "DEBUG", "path": "src"}),
    ("Bash", {"command": "ls src"}),
]


def _plan_project(
    tmp_path: Path, mode: str = "default", allow: str = ""
) -> tuple[Path, dict[Path, bytes]]:
    """The project with ``allow`` as its only allow rules (none by default)."""
    project = _project(tmp_path, mode)
    settings = project / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace('"Bash(git diff:*)", "Edit(src/**)"', allow))
    return project, _files(project)


def _files(project: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in project.rglob("*") if p.is_file() and ".git/" not in str(p)}


@pytest.mark.slow
def test_run_in_plan_mode_is_read_only_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # without an allow rule naming it, no change the toolset can make happens in plan mode
    project, before = _plan_project(tmp_path)
    calls = [{"name": n, "arguments": a} for n, a in PLAN_READS + PLAN_CHANGES]
    script = project / "script.json"
    script.write_text(json.dumps([{"tool_calls": calls}, {"text": "planned"}]))
    before[script] = script.read_bytes()
    toml = project / "agentrig.toml"
    toml.write_text(
        toml.read_text().replace(
            '[providers.local]\nkind = "scripted"\n',
            f'[providers.local]\nkind = "scripted"\noptions.script_file = "{script}"\n',
        )
    )
    before[toml] = toml.read_bytes()
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # not a terminal: nobody to ask
    code = main(["run", "-c", str(toml), "--mode", "plan", "plan it"])
    out, err = capsys.readouterr()
    assert (code, out) == (0, "planned\n"), err
    assert f"{len(PLAN_CHANGES)} tool call(s) were refused" in err
    assert err.count("-> error: The call was refused: permission decided: plan mode") == len(
        PLAN_CHANGES
    ), err
    assert _files(project) == before


@pytest.mark.anyio
@pytest.mark.slow
@pytest.mark.parametrize("allowed", [False, True], ids=["no-allow-rules", "allow-rules"])
async def test_plan_mode_through_the_python_api(tmp_path: Path, allowed: bool) -> None:
    # plan mode asks about no change: it refuses each one, unless an explicit allow rule
    # names the call -- then that change goes ahead (spec 000, docs/permissions.md)
    project, before = _plan_project(tmp_path, mode="plan", allow=PLAN_ALLOW if allowed else "")
    calls = [
        ScriptedCall(name, args, id=str(i))
        for i, (name, args) in enumerate(PLAN_READS + PLAN_CHANGES)
    ]
    provider = ScriptedProvider([Reply(tool_calls=tuple(calls)), "done"])
    async with agentrig.open_runtime(
        project / "agentrig.toml", overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        agent = rt.agent("a")
        result = await agent.run("plan it")
        texts = [m.text for m in agent.session.derive_messages() if m.role == "tool"]
    reads, changes = texts[: len(PLAN_READS)], texts[len(PLAN_READS) :]
    assert "DEBUG = True" in reads[0]
    assert reads[1].endswith("src/app.py")
    assert reads[2] == "app.py\n"
    if not allowed:
        assert all("plan mode refuses" in text for text in changes), changes
        assert len(result.refused) == len(PLAN_CHANGES)
        assert _files(project) == before
        return
    # each change a rule names goes ahead; ``sh -c '...'`` is judged by the command it wraps,
    # which no rule names, so it is still refused
    assert not any("plan mode refuses" in text for text in changes[:-1]), changes
    assert "plan mode refuses" in changes[-1]
    assert len(result.refused) == 1
    assert (project / "src" / "app.py").read_text() == before[
        project / "src" / "app.py"
    ].decode().replace("True", "False")
    assert (project / "new.txt").read_text() == "x"
    assert (project / "src" / "new.py").read_text() == "x"
    assert (project / "made.txt").is_file()


@pytest.mark.anyio
async def test_recoverable_tool_errors_go_back_to_the_model(tmp_path: Path) -> None:
    project = _project(tmp_path, mode="bypass")
    (project / "src" / "dup.py").write_text("x = 1\nx = 1\n")
    provider = ScriptedProvider(
        [
            Reply(
                tool_calls=(
                    ScriptedCall(
                        "Edit",
                        {"file_path": "src/dup.py", "old_string": "x = 1", "new_string": "x = 2"},
                        id="e",
                    ),
                    ScriptedCall("Read", {"file_path": "../outside.txt"}, id="r"),
                    ScriptedCall("Bash", {"command": "exit 4"}, id="b"),
                )
            ),
            "I will add context to the edit.",
        ]
    )
    async with agentrig.open_runtime(
        project / "agentrig.toml", overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        agent = rt.agent(AgentId("a"))
        result = await agent.run("go")
        tools = [m for m in agent.session.derive_messages() if m.role == "tool"]
    assert result.value == "I will add context to the edit."  # the turn went on
    assert [m.status for m in tools] == ["error", "error", "error"]
    assert "matches 2 places" in tools[0].text
    assert "outside" in tools[1].text
    assert tools[2].text == "[exit code 4]"
    # the model saw every error in its next request
    sent = [m for m in provider.requests[1].messages if m.role == "tool"]
    assert [m.text for m in sent] == [m.text for m in tools]
