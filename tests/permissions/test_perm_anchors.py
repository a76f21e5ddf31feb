"""Where a ``Read``/``Edit`` path rule is anchored: Claude Code's four pattern types.

``//abs`` is the filesystem root, ``~/x`` the home directory, ``/x`` the settings source
(the directory of the config file holding the rule), ``./x`` and bare ``x/y`` the current
(workspace) directory; a bare name matches at any depth, ``name/**`` too in deny and ask
rules only.  Each form is checked where it must match and where it must not, through the
evaluator and through a runtime built from an ``agentrig.toml``.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from perm_support import EDIT, READ, TOOLS

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.ids import AgentId
from agentrig.permissions import (
    PermissionCall,
    PermissionContext,
    PermissionRuleError,
    PermissionRules,
    ToolPermissions,
    evaluate_permission,
)
from agentrig.tools import tool


def _layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A config directory, a workspace below it and a home directory."""
    config_dir = tmp_path / "cfg"
    workspace = config_dir / "ws"
    home = tmp_path / "home"
    for d in (workspace / "sub" / "deeper", home, config_dir / "private"):
        d.mkdir(parents=True, exist_ok=True)
    return config_dir, workspace, home


def _verdict(
    tmp_path: Path,
    path: str,
    *,
    deny: tuple[str, ...] = (),
    allow: tuple[str, ...] = (),
    tool: ToolPermissions = READ,
) -> str:
    config_dir, workspace, home = _layout(tmp_path)
    ctx = PermissionContext(
        workspace_root=str(workspace),
        rules=PermissionRules.parse(allow=allow, deny=deny, tools=TOOLS),
        mode="bypass" if deny else "default",
        home=str(home),
        rules_root=str(config_dir),
    )
    decision = evaluate_permission(PermissionCall(tool, {"path": path}), ctx)
    return decision.verdict


@pytest.mark.parametrize(
    ("rule", "target", "verdict"),
    [
        # //path: absolute from the filesystem root
        ("Read(//{tmp}/cfg/ws/a.txt)", "{tmp}/cfg/ws/a.txt", "deny"),
        ("Read(//{tmp}/cfg/ws/a.txt)", "{tmp}/cfg/ws/sub/a.txt", "allow"),
        # ~/path: from the home directory
        ("Read(~/.netrc)", "{tmp}/home/.netrc", "deny"),
        ("Read(~/.netrc)", "{tmp}/cfg/ws/.netrc", "allow"),
        # /path: relative to the settings source (the config file's directory) ...
        ("Read(/private/**)", "{tmp}/cfg/private/key.pem", "deny"),
        # ... not the workspace, not the filesystem root
        ("Read(/private/**)", "{tmp}/cfg/ws/private/key.pem", "allow"),
        ("Read(/sub/**)", "{tmp}/cfg/ws/sub/x", "allow"),
        # ./path: the current (workspace) directory, at its top only
        ("Read(./.env)", "{tmp}/cfg/ws/.env", "deny"),
        ("Read(./.env)", "{tmp}/cfg/ws/sub/.env", "allow"),
        ("Read(./.env)", "{tmp}/cfg/.env", "allow"),
        # a bare name: gitignore's any depth below the current directory, never above it
        ("Read(.env)", "{tmp}/cfg/ws/sub/deeper/.env", "deny"),
        ("Read(*.env)", "{tmp}/cfg/ws/sub/prod.env", "deny"),
        ("Read(.env)", "{tmp}/cfg/.env", "allow"),
        ("Read(**/.env)", "{tmp}/cfg/ws/sub/.env", "deny"),
        # one directory segment: a deny rule matches it at any depth ...
        ("Read(deeper/**)", "{tmp}/cfg/ws/sub/deeper/x", "deny"),
        # ... a longer relative pattern stays where it is anchored
        ("Read(sub/deeper/**)", "{tmp}/cfg/ws/sub/deeper/x", "deny"),
        ("Read(deeper/x/**)", "{tmp}/cfg/ws/sub/deeper/x/y", "allow"),
        # * stays inside one segment, ** crosses directories
        ("Read(sub/*.txt)", "{tmp}/cfg/ws/sub/deeper/a.txt", "allow"),
        ("Read(sub/**/*.txt)", "{tmp}/cfg/ws/sub/deeper/a.txt", "deny"),
    ],
)
def test_deny_rule_anchors(tmp_path: Path, rule: str, target: str, verdict: str) -> None:
    tmp = str(tmp_path).lstrip("/")
    rule = rule.replace("{tmp}", tmp)
    path = target.replace("{tmp}", "/" + tmp)
    assert _verdict(tmp_path, path, deny=(rule,)) == verdict


def test_one_directory_segment_allows_only_at_the_top(tmp_path: Path) -> None:
    top, nested = tmp_path / "cfg" / "ws" / "sub" / "a", tmp_path / "cfg" / "ws" / "x" / "sub" / "a"
    assert _verdict(tmp_path, str(top), allow=("Edit(sub/**)",), tool=EDIT) == "allow"
    # the same rule grants nothing below the top, but denies at any depth
    assert _verdict(tmp_path, str(nested), allow=("Edit(sub/**)",), tool=EDIT) == "ask"
    assert _verdict(tmp_path, str(nested), deny=("Edit(sub/**)",), tool=EDIT) == "deny"


# ---- through a runtime: /path is relative to agentrig.toml's directory ----------------------

SEEN: list[str] = []


@tool(id="Read", risk="inspect", permission_arg=("file_path", "path"))
def read_tool(file_path: str) -> str:
    """Read a file (a test double that records the call)."""
    SEEN.append(file_path)
    return "contents"


def _config(config_dir: Path, deny: str) -> Path:
    path = config_dir / "agentrig.toml"
    path.write_text(
        textwrap.dedent(
            f"""\
            [providers.local]
            kind = "scripted"

            [agents.a]
            provider = "local"
            model = "m"
            tools = ["Read"]

            [permissions]
            mode = "bypass"
            workspace = "ws"
            deny = [{deny!r}]
            """
        ),
        encoding="utf-8",
    )
    return path


@pytest.mark.anyio
async def test_a_slash_rule_in_agentrig_toml_is_relative_to_the_file(tmp_path: Path) -> None:
    config_dir, workspace, _ = _layout(tmp_path)
    config = _config(config_dir, "Read(/private/**)")
    denied, allowed = str(config_dir / "private" / "k"), str(workspace / "private" / "k")
    provider = ScriptedProvider(
        [
            Reply(
                tool_calls=(
                    ScriptedCall("Read", {"file_path": denied}, id="a"),
                    ScriptedCall("Read", {"file_path": allowed}, id="b"),
                )
            ),
            "done",
        ]
    )
    memory = agentrig.MemorySource()
    memory.add("tools", "Read", read_tool)
    SEEN.clear()
    async with agentrig.open_runtime(
        config, memory=memory, overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        await rt.agent(AgentId("a")).run("go")
    assert [allowed] == SEEN


def _only_at_the_root(name: str, config_dir: Path) -> bool:
    return os.path.isdir("/" + name) and not os.path.exists(config_dir / name)


@pytest.mark.anyio
async def test_a_slash_rule_that_reads_as_absolute_is_refused(tmp_path: Path) -> None:
    config_dir, _, _ = _layout(tmp_path)
    assert _only_at_the_root("etc", config_dir)
    config = _config(config_dir, "Read(/etc/**)")
    memory = agentrig.MemorySource()
    memory.add("tools", "Read", read_tool)
    with pytest.raises(PermissionRuleError) as caught:
        async with agentrig.open_runtime(config, memory=memory, environ={}):
            pass
    message = str(caught.value)
    for spelling in ("Read(/etc/**)", "'//etc/**'", "'./etc/**'"):
        assert spelling in message
    assert caught.value.code == "permissions.invalid_rule"


def test_config_check_names_a_slash_rule_that_reads_as_absolute(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentrig.cli import main

    config_dir, _, _ = _layout(tmp_path)
    assert _only_at_the_root("etc", config_dir)
    (config_dir / "tools.py").write_text(
        "from agentrig.tools import tool\n\n\n"
        '@tool(id="Read", risk="inspect", permission_arg=("file_path", "path"))\n'
        "def read(file_path: str) -> str:\n"
        '    """Read a file."""\n'
        '    return ""\n',
        encoding="utf-8",
    )
    config = _config(config_dir, "Read(/etc/**)")
    config.write_text(
        config.read_text(encoding="utf-8").replace('tools = ["Read"]', 'tools = ["tools.py:read"]'),
        encoding="utf-8",
    )
    assert main(["config", "check", str(config)]) == 1
    out = capsys.readouterr()
    assert "permission rule 'Read(/etc/**)' in the deny list" in out.out + out.err
    assert "'//etc/**' for the absolute path" in out.out + out.err
