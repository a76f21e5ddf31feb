"""Config names are checked, not dropped (issue 11, point 5): unknown keys get a "did you
mean", hook events must be events agentrig fires, and a name defined twice is refused in
every format."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentrig.agent import agent_configs
from agentrig.errors import ConfigError, Issue
from agentrig.ids import AgentId
from agentrig.kernel import MemorySource, builtin_source, load_config, open_runtime
from agentrig.kernel._config import known_keys


def write(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def issues_of(source: Any) -> list[Issue]:
    with pytest.raises(ConfigError) as info:
        load_config(source)
    return list(info.value.issues)


# ---- unknown keys ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "path", "hint"),
    [
        ({"agent": {}}, ("agent",), "did you mean 'agents'?"),
        (
            {
                "providers": {"p": {"kind": "k"}},
                "agents": {"a": {"provider": "p", "model": "m", "max_round": 3}},
            },
            ("agents", "a", "max_round"),
            "did you mean 'max_rounds'?",
        ),
        ({"plugins": {"disable": ["x"]}}, ("plugins", "disable"), "did you mean 'disabled'?"),
        (
            {"hooks": {"PreToolUse": [{"strategy": "command", "matchr": "Bash"}]}},
            ("hooks", "PreToolUse", 0, "matchr"),
            "did you mean 'matcher'?",
        ),
        ({"permissions": {"zzz": 1}}, ("permissions", "zzz"), "(known keys: mode, allow"),
    ],
)
def test_unknown_keys_get_a_did_you_mean(
    data: dict[str, Any], path: tuple[str | int, ...], hint: str
) -> None:
    (issue,) = issues_of(data)
    assert issue.path == path
    assert issue.message.startswith(f"unknown key {path[-1]!r}")
    assert hint in issue.message


def test_known_keys_walks_tables_maps_and_arrays() -> None:
    from agentrig.agent import AgentsConfig
    from agentrig.hooks import HooksConfig
    from agentrig.kernel import RuntimeConfig

    assert "max_rounds" in known_keys(AgentsConfig, ("any",))
    assert "strategy" in known_keys(HooksConfig, ("PreToolUse", 0))
    assert "prefer" in known_keys(RuntimeConfig, ("plugins",))
    assert known_keys(RuntimeConfig, ("agents", "any", "options")) == []  # free-form
    assert known_keys(RuntimeConfig, ("nope",)) == []


# ---- hook events ----------------------------------------------------------------------------


COMMAND_HOOK = [{"strategy": "command", "options": {"command": "true"}}]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("event", "fragment"),
    [
        ("PreToolUSE", "unknown hook event 'PreToolUSE'; did you mean 'PreToolUse'?"),
        ("pretooluse", "did you mean 'PreToolUse'?"),
        ("BeforeTool", "unknown hook event 'BeforeTool'"),
    ],
)
async def test_a_hook_event_agentrig_does_not_fire_is_refused(event: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        async with open_runtime(
            {"hooks": {event: COMMAND_HOOK}}, sources=[builtin_source()], environ={}
        ):
            pytest.fail("must not compose")
    (issue,) = [i for i in info.value.issues if i.code == "config.hook_event"]
    assert issue.path == ("hooks", event)
    assert fragment in issue.message
    assert "events agentrig fires: SessionStart, UserPromptSubmit, PreToolUse," in issue.message


@pytest.mark.anyio
async def test_an_event_that_is_not_fired_is_refused_at_its_key() -> None:
    from agentrig.hooks import FIRED_EVENTS, NOT_FIRED, event_name_problem

    for event in NOT_FIRED:
        problem = event_name_problem(event)
        assert problem is not None
        assert "does not fire" in problem
    for event in FIRED_EVENTS:
        assert event_name_problem(event) is None
    unfired = next(iter(NOT_FIRED), "PostToolBatch")  # none known is left: an unknown one
    with pytest.raises(ConfigError) as info:
        async with open_runtime({"hooks": {unfired: COMMAND_HOOK}}, environ={}):
            pytest.fail("must not compose")
    assert any(i.path == ("hooks", unfired) for i in info.value.issues)


@pytest.mark.anyio
async def test_a_fired_event_composes() -> None:
    async with open_runtime({"hooks": {"PreToolUse": COMMAND_HOOK}}, environ={}):
        pass


# ---- names defined twice ----------------------------------------------------------------------


TWICE_YAML = """\
providers:
  local: {kind: scripted}
agents:
  assistant: {provider: local, model: first}
  helper: {provider: local, model: other}
  assistant: {provider: local, model: second}
"""


def test_yaml_refuses_an_agent_defined_twice(tmp_path: Path) -> None:
    path = write(tmp_path, TWICE_YAML, "agentrig.yaml")
    (issue,) = issues_of(path)
    assert issue.code == "config.duplicate_key"
    assert issue.path == ("agents", "assistant")
    assert "(lines 4 and 6)" in issue.message


def test_yaml_refuses_a_provider_defined_twice_at_any_depth(tmp_path: Path) -> None:
    text = "providers:\n  local: {kind: scripted}\n  local: {kind: other}\n"
    text += "agents:\n  a: {provider: local, model: m, options: {x: 1, x: 2}}\n"
    path = write(tmp_path, text, "agentrig.yml")
    assert [i.path for i in issues_of(path)] == [
        ("providers", "local"),
        ("agents", "a", "options", "x"),
    ]


def test_yaml_anchors_and_merge_keys_are_not_duplicates(tmp_path: Path) -> None:
    text = (
        "providers:\n  local: &p {kind: scripted}\n"
        "agents:\n  a: &a {provider: local, model: m}\n  b:\n    <<: *a\n    model: n\n"
    )
    loaded = load_config(write(tmp_path, text, "agentrig.yaml"))
    assert agent_configs(loaded)[AgentId("b")].model == "n"


def test_json_refuses_a_name_defined_twice(tmp_path: Path) -> None:
    text = (
        '{"providers": {"local": {"kind": "scripted"}},'
        ' "agents": {"a": {"provider": "local", "model": "m"},'
        ' "a": {"provider": "local", "model": "n"}}}'
    )
    (issue,) = issues_of(write(tmp_path, text, "agentrig.json"))
    assert issue.path == ("agents", "a")
    assert issue.code == "config.duplicate_key"
    good = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m"}},
    }
    loaded = load_config(write(tmp_path, json.dumps(good), "ok.json"))
    assert agent_configs(loaded)[AgentId("a")].model == "m"


def test_yaml_without_pyyaml_is_refused_naming_the_file_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)  # ``import yaml`` raises ImportError
    path = write(tmp_path, "agents: {}\n", "agentrig.yaml")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.source == str(path)
    (issue,) = info.value.issues
    assert issue.code == "config.yaml_unavailable"
    assert "pip install 'agentrig[yaml]'" in issue.message


def test_a_syntax_error_in_yaml_or_json_names_the_file(tmp_path: Path) -> None:
    for name, text in (("bad.yaml", "agents: [unclosed\n"), ("bad.json", '{"agents": ')):
        path = write(tmp_path, text, name)
        with pytest.raises(ConfigError) as info:
            load_config(path)
        assert info.value.source == str(path)
        assert [i.code for i in info.value.issues] == ["config.syntax"]


def test_toml_refuses_a_name_defined_twice(tmp_path: Path) -> None:
    text = '[agents.a]\nprovider = "p"\nmodel = "m"\n[agents.a]\nprovider = "p"\nmodel = "n"\n'
    (issue,) = issues_of(write(tmp_path, text, "agentrig.toml"))
    assert issue.code == "config.syntax"


@pytest.mark.anyio
async def test_the_cli_reports_the_duplicate_with_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentrig.cli import main

    path = write(tmp_path, TWICE_YAML, "agentrig.yaml")
    assert main(["config", "check", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}: agents.assistant: 'assistant' is defined more than once" in out
    memory = MemorySource()  # and open_runtime refuses it the same way
    with pytest.raises(ConfigError):
        async with open_runtime(path, sources=[builtin_source()], memory=memory, environ={}):
            pytest.fail("must not compose")


# ---- plugin names in [plugins] disabled --------------------------------------------------------


@pytest.mark.anyio
async def test_a_disabled_name_that_matches_no_plugin_is_refused(tmp_path: Path) -> None:
    from agentrig.cli import main

    config = {"plugins": {"disabled": ["scripted", "tools:tool_serch", "providers:scripted"]}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.path == ("plugins", "disabled", 1)
    assert issue.code == "config.plugin_unknown"
    assert "'tools:tool_serch'; did you mean 'tool_search'?" in issue.message
    path = write(tmp_path, '[plugins]\ndisabled = ["scriptd"]\n', "agentrig.toml")
    assert main(["config", "check", str(path)]) == 1
