"""Class: writes to what agentrig itself reads always reach a person (issue 28, point 6).

The default trust-widening locations include agentrig's own config spellings, ``.mcp.json``,
Claude Code settings and every skills folder; a composition adds its own config file, the
Claude Code settings and plugin folders it imports, and the scripts its hooks run.  A write
to any of them asks in every mode (bypass included) and without a person is refused.
"""

from __future__ import annotations

import json
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.ids import AgentId
from agentrig.lifecycle import PermissionQuestion
from agentrig.permissions import (
    Mode,
    PermissionArg,
    PermissionCall,
    PermissionContext,
    PermissionRules,
    ToolPermissions,
    evaluate_permission,
)
from agentrig.tools import tool

WRITE = ToolPermissions("Write", "modify", PermissionArg("path", "path"), {"path", "text"})

TRUSTED = [
    "agentrig.toml", "agentrig.yaml", "agentrig.yml", "agentrig.json", "sub/agentrig.toml",
    ".mcp.json", "pkg/.mcp.json", ".claude/settings.json", ".claude/settings.local.json",
    ".claude/skills/x/SKILL.md", ".claude/agents/a.md", ".agents/skills/x/SKILL.md",
    "pkg/.agents/skills/y/run.sh", ".codex/skills/x/SKILL.md", "a/b/.codex/skills/z",
    ".agentrig/skills/x/SKILL.md", ".agentrig/state", "~/.claude/settings.json",
    "~/.claude/skills/x/SKILL.md", "~/.agents/skills/x/SKILL.md", "~/.codex/skills/k",
    "~/.agentrig/config.toml", ".git/hooks/pre-commit", ".githooks/x", "~/.bashrc",
]  # fmt: skip
ORDINARY = [
    "src/main.py", "docs/skills.md", ".agents/notes.md", "skills/x/SKILL.md", "mcp.json",
    "agentrig.toml.bak", "README.md", ".codex/config.toml", "claude/settings.json",
]  # fmt: skip


@pytest.mark.parametrize("mode", ["default", "accept-edits", "bypass"])
def test_the_default_trust_widening_locations(mode: Mode) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ctx = PermissionContext(
            workspace_root=f"{tmp}/ws", rules=PermissionRules(), mode=mode, home=f"{tmp}/home"
        )
        for path in TRUSTED:
            d = evaluate_permission(PermissionCall(WRITE, {"path": path, "text": ""}), ctx)
            assert (d.verdict, d.reason) == ("ask", "trust-widening-write"), path
            assert d.always_ask
        for path in ORDINARY:
            d = evaluate_permission(PermissionCall(WRITE, {"path": path, "text": ""}), ctx)
            assert d.reason != "trust-widening-write", path


WRITTEN: list[str] = []


@tool(id="Write", risk="modify", permission_arg=("path", "path"))
def write_tool(path: str, text: str) -> str:
    """Write a file (a test double: records the path)."""
    WRITTEN.append(path)
    return f"wrote {path}"


class Person:
    def __init__(self) -> None:
        self.asked: list[PermissionQuestion] = []

    @agentrig.hookimpl
    def permission_approver(self, payload: PermissionQuestion) -> str:
        self.asked.append(payload)
        return "deny"


def _composition(tmp_path: Path) -> tuple[Path, list[str], list[str]]:
    """A project whose config names a hook script, Claude Code settings and a plugin, all
    outside the default locations (the project dir has a glob character in its name)."""
    project = tmp_path / "proj[1]"
    (project / "ops").mkdir(parents=True)
    (project / "ops" / "guard.py").write_text("print('{}')\n")
    (project / "cc").mkdir()
    (project / "cc" / "team.json").write_text(json.dumps({"permissions": {"allow": []}}))
    plugin = project / "vendor" / "plugin"
    (plugin / "hooks").mkdir(parents=True)
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {}}))
    (plugin / "hooks" / "check.sh").write_text("exit 0\n")
    config = project / "team-config.toml"
    config.write_text(
        textwrap.dedent(
            """\
            [providers.local]
            kind = "scripted"
            [agents.a]
            provider = "local"
            model = "m"
            tools = ["Write"]
            [permissions]
            mode = "bypass"
            [[hooks.Stop]]
            strategy = "command"
            options.command = "python3 ops/guard.py"
            [[hooks.Notification]]
            strategy = "command"
            options.command = ["sh", "${PLUGIN}/hooks/check.sh"]
            options.env = { PLUGIN = "vendor/plugin" }
            [claude_code]
            settings = ["cc/team.json"]
            plugins = ["vendor/plugin"]
            """
        )
    )
    own = [
        str(config),
        "team-config.toml",
        "ops/guard.py",
        str(project / "cc" / "team.json"),
        "vendor/plugin/hooks/hooks.json",
        "vendor/plugin/hooks/check.sh",
    ]
    ordinary = ["ops/other.py", "cc/readme.md", "src/app.py"]
    return config, own, ordinary


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_a_compositions_own_files_are_trust_widening(tmp_path: Path) -> None:
    config, own, ordinary = _composition(tmp_path)
    calls = [ScriptedCall("Write", {"path": p, "text": "x"}, id=f"w{i}") for i, p in enumerate(own)]
    calls += [
        ScriptedCall("Write", {"path": p, "text": "x"}, id=f"o{i}") for i, p in enumerate(ordinary)
    ]
    provider = ScriptedProvider([Reply(tool_calls=tuple(calls)), Reply(text="done")])
    memory = agentrig.MemorySource()
    memory.add("tools", "Write", write_tool)
    person = Person()
    WRITTEN.clear()
    loaded = agentrig.load_config(config)
    async with agentrig.open_runtime(
        loaded,
        memory=memory,
        overrides=[("providers", "local", provider)],
        environ={},
        plugins=[("person", person)],
    ) as rt:
        await rt.agent(AgentId("a")).run("go")
    assert ordinary == WRITTEN  # bypass mode: only the ordinary files were written
    asked: Any = [q.arguments["path"] for q in person.asked]
    assert asked == own
    assert all(q.always_ask for q in person.asked)
