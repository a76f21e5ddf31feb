"""Claude Code settings.json and a plugin's hooks/hooks.json, read verbatim (points 5, 6).

``claude_project/.claude/settings.json`` is the example of Claude Code's settings page,
copied in full.  ``claude_plugin/`` is a Claude Code plugin with a ``hooks/hooks.json`` whose
command uses ``${CLAUDE_PLUGIN_ROOT}``.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from lifecycle_support import hook, records

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.errors import ConfigError
from agentrig.hooks import hooks_config
from agentrig.ids import AgentId
from agentrig.kernel import load_config
from agentrig.permissions import (
    PermissionCall,
    PermissionContext,
    PermissionRules,
    ToolPermissions,
    evaluate_permission,
    permissions_config,
)
from agentrig.tools import tool

HERE = Path(__file__).resolve().parent
RAN: list[str] = []


@tool(id="Bash", risk="execute", permission_arg=("command", "command"))
def bash_tool(command: str) -> str:
    """Run a command (a test double)."""
    RAN.append(command)
    return f"ran {command}"


@tool(id="Read", risk="inspect", permission_arg=("file_path", "path"))
def read_tool(file_path: str) -> str:
    """Read a file (a test double)."""
    RAN.append(f"read {file_path}")
    return "contents"


@tool(id="mcp__github__create_issue", risk="modify")
def create_issue(title: str) -> str:
    """Open an issue (a test double of an MCP tool)."""
    RAN.append(f"issue {title}")
    return "opened"


def _project(tmp_path: Path, toml: str, settings: Path | None = None) -> Path:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    shutil.copy(settings or HERE / "claude_project/.claude/settings.json", project / ".claude")
    (project / "agentrig.toml").write_text(
        textwrap.dedent(
            """\
            [providers.local]
            kind = "scripted"

            [agents.a]
            provider = "local"
            model = "m"
            tools = ["Bash", "Read"]
            """
        )
        + textwrap.dedent(toml)
    )
    return project / "agentrig.toml"


async def _run(config: Path, calls: list[ScriptedCall]) -> list[str]:
    RAN.clear()
    provider = ScriptedProvider([Reply(tool_calls=tuple(calls)), "done"])
    memory = agentrig.MemorySource()
    for t in (bash_tool, read_tool):
        memory.add("tools", t.id, t)
    async with agentrig.open_runtime(
        config, memory=memory, overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        # the MCP-named test double joins by hand: a config naming mcp__github__* asks the
        # MCP plugin for a server called github
        agent = rt.agent(AgentId("a"))
        agent.replace_tools([bash_tool, read_tool, create_issue])
        await agent.run("go")
        return [m.text for m in agent.session.derive_messages() if m.role == "tool"]


# ---- the documented settings.json, verbatim ------------------------------------------------------


def test_the_documented_settings_json_loads_into_permissions(tmp_path: Path) -> None:
    config = _project(tmp_path, '[claude_code]\nsettings = [".claude/settings.json"]\n')
    permissions = permissions_config(load_config(config))
    assert list(permissions.allow) == [
        "Bash(npm run lint)",
        "Bash(npm run test *)",
        "Read(~/.zshrc)",
    ]
    assert list(permissions.deny) == [
        "Bash(curl *)",
        "Read(./.env)",
        "Read(./.env.*)",
        "Read(./secrets/**)",
    ]


@pytest.mark.anyio
async def test_the_documented_settings_json_decides_calls(tmp_path: Path) -> None:
    config = _project(tmp_path, '[claude_code]\nsettings = [".claude/settings.json"]\n')
    project = config.parent
    results = await _run(
        config,
        [
            ScriptedCall("Bash", {"command": "npm run test unit"}, id="a"),
            ScriptedCall("Bash", {"command": "curl https://example.com"}, id="b"),
            ScriptedCall("Read", {"file_path": str(project / ".env")}, id="c"),
            ScriptedCall("Read", {"file_path": str(project / "secrets/key.pem")}, id="d"),
            ScriptedCall("Bash", {"command": "make deploy"}, id="e"),
        ],
    )
    assert results[0] == "ran npm run test unit"  # allowed by the settings
    assert results[1] == "The call was refused: permission decided: denied by 'Bash(curl *)'"
    assert "denied by 'Read(./.env)'" in results[2]
    assert "denied by 'Read(./secrets/**)'" in results[3]
    assert results[4].startswith("The call was refused: permission no-approver")  # asks
    assert RAN == ["npm run test unit"]


# ---- hooks, defaultMode, additionalDirectories, env ---------------------------------------------


def _settings(tmp_path: Path, body: dict[str, Any]) -> Path:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(body))
    return path


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_hooks_from_settings_run_in_the_project_with_its_env(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    recorder = hook(log, "node")["options"]["command"]
    settings = _settings(
        tmp_path,
        {
            "permissions": {"defaultMode": "bypassPermissions"},
            "env": {"HOOK_LOG": str(log), "TEAM": "payments"},
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [{"type": "command", "command": " ".join(recorder)}],
                    }
                ],
                "Stop": [{"hooks": [{"type": "command", "command": " ".join(recorder)}]}],
            },
        },
    )
    config = _project(tmp_path, '[claude_code]\nsettings = [".claude/settings.json"]\n', settings)
    results = await _run(config, [ScriptedCall("Bash", {"command": "make build"})])
    assert results == ["ran make build"]  # bypassPermissions from defaultMode
    seen = records(log)
    assert [r["input"]["hook_event_name"] for r in seen] == ["PreToolUse", "Stop"]
    assert seen[0]["project_dir"] == str(config.parent)
    assert seen[0]["input"]["permission_mode"] == "bypassPermissions"


def test_default_mode_does_not_override_the_toml_and_additional_directories_resolve(
    tmp_path: Path,
) -> None:
    settings = _settings(
        tmp_path,
        {"permissions": {"defaultMode": "plan", "additionalDirectories": ["../shared", "/opt/x"]}},
    )
    config = _project(
        tmp_path,
        '[permissions]\nmode = "accept-edits"\n'
        '[claude_code]\nsettings = [".claude/settings.json"]\n',
        settings,
    )
    permissions = permissions_config(load_config(config))
    assert permissions.mode == "accept-edits"
    assert list(permissions.additional_directories) == [
        str(config.parent / "../shared"),
        "/opt/x",
    ]


@pytest.mark.anyio
async def test_additional_directories_count_as_workspace_for_read_only_commands(
    tmp_path: Path,
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    settings = _settings(tmp_path, {"permissions": {"additionalDirectories": [str(shared)]}})
    config = _project(tmp_path, '[claude_code]\nsettings = [".claude/settings.json"]\n', settings)
    results = await _run(config, [ScriptedCall("Bash", {"command": f"ls {shared}"})])
    assert results == [f"ran ls {shared}"]  # inspect: allowed in default mode
    plain = _project(tmp_path / "other", "")
    results = await _run(plain, [ScriptedCall("Bash", {"command": f"ls {shared}"})])
    assert results[0].startswith("The call was refused")  # outside the workspace: asks


def test_disable_bypass_refuses_bypass_mode(tmp_path: Path) -> None:
    settings = _settings(tmp_path, {"permissions": {"disableBypassPermissionsMode": "disable"}})
    config = _project(
        tmp_path,
        '[permissions]\nmode = "bypass"\n[claude_code]\nsettings = [".claude/settings.json"]\n',
        settings,
    )
    with pytest.raises(ConfigError, match="bypass"):
        load_config(config)


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"permissions": {"defaultMode": "dontAsk"}}, "defaultMode 'dontAsk' is not supported"),
        ({"permissions": {"allowManagedRules": True}}, "'allowManagedRules' is not supported"),
        ({"sandbox": {"enabled": True}}, "key 'sandbox' has no agentrig equivalent"),
        (
            {"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}]}]}},
            "hook type 'prompt' is not supported",
        ),
        (
            {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "async": True}]}]}},
            "['async'] are not supported",
        ),
        (
            {"hooks": {"PostToolBatch": [{"hooks": [{"type": "command", "command": "x"}]}]}},
            "unknown hook event 'PostToolBatch'",
        ),
    ],
)
def test_what_agentrig_cannot_honour_is_refused_by_name(
    tmp_path: Path, body: dict[str, Any], fragment: str
) -> None:
    config = _project(
        tmp_path,
        '[claude_code]\nsettings = [".claude/settings.json"]\n',
        _settings(tmp_path, body),
    )
    with pytest.raises(ConfigError) as caught:
        async_free_compose(config)
    assert fragment in str(caught.value)


def async_free_compose(config: Path) -> None:
    """Load the config and check its hook events the way composition does."""
    from agentrig.hooks import event_name_problem

    loaded = load_config(config)
    for event in hooks_config(loaded):
        problem = event_name_problem(event)
        if problem is not None:
            raise ConfigError([agentrig.errors.Issue("config.hook_event", problem)])


def test_a_json_config_file_is_read_as_json(tmp_path: Path) -> None:
    path = tmp_path / "agentrig.json"
    path.write_text(json.dumps({"permissions": {"mode": "plan", "deny": ["Bash(rm:*)"]}}))
    permissions = permissions_config(load_config(path))
    assert (permissions.mode, list(permissions.deny)) == ("plan", ["Bash(rm:*)"])


# ---- a plugin's hooks/hooks.json ------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_a_plugins_hooks_json_runs_with_claude_plugin_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "guard.jsonl"
    monkeypatch.setenv("GUARD_LOG", str(log))
    plugin = HERE / "claude_plugin"
    config = _project(
        tmp_path,
        f'[permissions]\nmode = "bypass"\naction_blockers = "off"\n'
        f"[claude_code]\nplugins = [{json.dumps(str(plugin))}]\n",
    )
    results = await _run(
        config,
        [
            ScriptedCall("Bash", {"command": "git status"}, id="a"),
            ScriptedCall("Bash", {"command": "git push --force"}, id="b"),
        ],
    )
    assert results[0] == "ran git status"
    assert results[1] == (
        "The call was refused: hook PreToolUse[0] (command): "
        "force pushes are refused by the guard plugin"
    )
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert {s["plugin_root"] for s in seen} == {str(plugin)}


# ---- rule grammar: MCP servers, domains ------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "allowed"),
    [
        ({"deny": ["mcp__github"]}, False),  # a server: every tool of it
        ({"deny": ["mcp__github__create_issue"]}, False),  # one tool
        ({"deny": ["mcp__githu"]}, True),  # not a prefix of the server name
        ({"deny": ["mcp__github__list_issues"]}, True),  # another tool
    ],
)
def test_mcp_server_and_tool_rules(
    tmp_path: Path, rules: dict[str, list[str]], allowed: bool
) -> None:
    # read by the evaluator: a composition refuses a deny rule naming none of its tools
    # (tests/builtins/test_rule_targets.py), and the MCP double here joins after composition
    settings = _settings(tmp_path, {"permissions": {"defaultMode": "bypassPermissions", **rules}})
    config = _project(tmp_path, '[claude_code]\nsettings = [".claude/settings.json"]\n', settings)
    loaded = permissions_config(load_config(config))
    issue = ToolPermissions("mcp__github__create_issue", "modify", None, {"title"})
    ctx = PermissionContext(
        workspace_root=str(tmp_path),
        mode=loaded.mode,
        rules=PermissionRules.parse(deny=loaded.deny, tools={issue.tool_id: issue}),
    )
    decision = evaluate_permission(PermissionCall(issue, {"title": "bug"}), ctx)
    assert (decision.verdict == "allow") is allowed


@pytest.mark.anyio
async def test_an_mcp_server_allow_rule_grants_its_tools(tmp_path: Path) -> None:
    settings = _settings(tmp_path, {"permissions": {"allow": ["mcp__github"]}})
    config = _project(tmp_path, '[claude_code]\nsettings = [".claude/settings.json"]\n', settings)
    results = await _run(config, [ScriptedCall("mcp__github__create_issue", {"title": "bug"})])
    assert results == ["opened"]


def test_a_root_anchored_file_rule_is_anchored_at_the_project(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path, {"permissions": {"deny": ["Read(/src/**)", "Read(//etc/shadow)", "Bash(/x)"]}}
    )
    config = _project(tmp_path, '[claude_code]\nsettings = [".claude/settings.json"]\n', settings)
    deny = list(permissions_config(load_config(config)).deny)
    assert deny == [
        f"Read(/{config.parent.resolve().as_posix()}/src/**)",
        "Read(//etc/shadow)",
        "Bash(/x)",
    ]


def test_pre_and_post_compact_hooks_of_settings_are_taken(tmp_path: Path) -> None:
    entry = {"matcher": "auto", "hooks": [{"type": "command", "command": "echo keep"}]}
    body = {"hooks": {"PreCompact": [entry], "PostCompact": [entry]}}
    config = _project(
        tmp_path, '[claude_code]\nsettings = [".claude/settings.json"]\n', _settings(tmp_path, body)
    )
    async_free_compose(config)  # fired events: no problem to report
    hooks = hooks_config(load_config(config))
    assert {"PreCompact", "PostCompact"} <= set(hooks)
    assert hooks["PreCompact"][0].matcher == "auto"
