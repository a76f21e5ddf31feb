"""Class: a deny or ask rule that names no tool is refused at composition (issue 28, point 5).

A misspelt tool name (``deny = ["shuot"]`` for ``shout``) would protect nothing while the
tool runs; it is a configuration error naming the rule's key path and the closest tool, as
for every other unknown key.  Spellings are generated: dropped, doubled, swapped and changed
letters, wrong case stays accepted (restricting rules compare tool names loosely).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentrig
from agentrig.builtins._rule_targets import check_rule_targets
from agentrig.builtins._scripted import ScriptedProvider
from agentrig.errors import ConfigError
from agentrig.permissions import PermissionRules
from agentrig.tools import tool

TOOLS = ("shout", "read_file", "mcp__github__create_issue", "mcp__slack__post", "deploy_prod")


@tool(risk="execute")
def shout(text: str) -> str:
    """Say it loudly."""
    return text.upper()


def _config(tmp_path: Path, **permissions: Any) -> Path:
    rules = "\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in permissions.items())
    path = tmp_path / "agentrig.toml"
    path.write_text(
        '[providers.local]\nkind = "scripted"\n'
        '[agents.a]\nprovider = "local"\nmodel = "m"\ntools = ["shout"]\n'
        f"[permissions]\n{rules}\n"
    )
    return path


async def _open(config: Path) -> None:
    memory = agentrig.MemorySource()
    memory.add("tools", "shout", shout)
    async with agentrig.open_runtime(
        config,
        memory=memory,
        overrides=[("providers", "local", ScriptedProvider(["ok"]))],
        environ={},
    ):
        pass


@pytest.mark.anyio
@pytest.mark.parametrize("key", ["deny", "ask"])
async def test_a_misspelt_rule_is_refused_at_composition_with_did_you_mean(
    tmp_path: Path, key: str
) -> None:
    config = _config(tmp_path, **{key: ["shout(x)", "shuot"]})
    with pytest.raises(ConfigError) as caught:
        await _open(config)
    (issue,) = caught.value.issues
    assert issue.path == ("permissions", key, 1)
    assert issue.code == "config.unknown_tool"
    assert "did you mean 'shout'?" in issue.message
    assert str(config) in str(caught.value)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "rules",
    [
        {"deny": ["shout"], "ask": ["SHOUT(x)"]},
        {"deny": ["Bash(rm:*)", "WebFetch", "Read(./.env)"]},  # Claude Code's own names
        {"deny": ["sh*"], "allow": ["not_a_tool_added_in_code"]},
    ],
)
async def test_rules_that_name_a_tool_compose(tmp_path: Path, rules: dict[str, Any]) -> None:
    await _open(_config(tmp_path, **rules))


def _misspell(name: str, data: st.DataObject) -> str:
    i = data.draw(st.integers(0, len(name) - 1))
    kind = data.draw(st.sampled_from(["drop", "double", "swap", "change"]))
    if kind == "drop":
        return name[:i] + name[i + 1 :]
    if kind == "double":
        return name[:i] + name[i] + name[i:]
    if kind == "swap" and i + 1 < len(name):
        return name[:i] + name[i + 1] + name[i] + name[i + 2 :]
    letter = data.draw(st.sampled_from("abcdefghijklmnopqrstuvwxyz_"))
    return name[:i] + letter + name[i + 1 :]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TOOLS), st.sampled_from(["deny", "ask"]), st.data())
def test_property_a_rule_naming_no_tool_is_refused(
    name: str, key: str, data: st.DataObject
) -> None:
    spelt = _misspell(name, data)
    rules = (
        PermissionRules.parse(deny=[spelt]) if key == "deny" else PermissionRules.parse(ask=[spelt])
    )
    (rule,) = rules.deny or rules.ask
    names_one = any(rule.names_tool(t, loose=True) for t in TOOLS)
    if names_one:
        check_rule_targets(rules, TOOLS, source="agentrig.toml")
        return
    with pytest.raises(ConfigError) as caught:
        check_rule_targets(rules, TOOLS, source="agentrig.toml")
    (issue,) = caught.value.issues
    assert issue.path == ("permissions", key, 0)
    assert "did you mean" in issue.message or "known tools" in issue.message


@pytest.mark.anyio
async def test_a_runtime_whose_agents_come_from_code_is_not_checked() -> None:
    # no [agents] table: the tools arrive with rt.agents.create(tools=[...]) after composition
    config = {"providers": {"local": {"kind": "scripted"}}, "permissions": {"ask": ["later"]}}
    async with agentrig.open_runtime(
        config, overrides=[("providers", "local", ScriptedProvider(["ok"]))], environ={}
    ) as rt:
        assert rt.agents.ids() == ()
