"""The composition config (DESIGN §4.6): strict model, errors with file and key path, $ENV:."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pydantic
import pytest

from agentrig.agent import agent_configs
from agentrig.builtins._scripted import factory as scripted_factory
from agentrig.errors import ConfigError, Issue
from agentrig.hooks import hooks_config
from agentrig.ids import AgentId, ModelId, ProviderId
from agentrig.kernel import (
    MemorySource,
    RuntimeConfig,
    builtin_source,
    env_resolver,
    load_config,
    open_runtime,
    read_config_file,
)
from agentrig.permissions import permissions_config


def write(tmp_path: Path, text: str, name: str = "agentrig.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def only_issue(error: ConfigError) -> Issue:
    assert len(error.issues) == 1, error.issues
    return error.issues[0]


VALID = """
[plugins]
autoload = true
disabled = ["noisy"]
enabled = []

[providers.main]
kind = "fake"
options = { base_url = "http://localhost" }
credentials = { api_key = "$ENV:FAKE_KEY" }

[agents.assistant]
provider = "main"
model = "m-1"
tools = ["echo"]
max_rounds = 5
system_prompt = "be brief"

[permissions]
mode = "plan"
deny = ["Bash(rm *)"]

[[hooks.PreToolUse]]
strategy = "command"
options = { command = "true" }
"""


class _TinyStore:
    """Has the members a session store's factory product is checked for (nothing is stored)."""

    async def open_writer(self, session_id: str) -> Any:
        raise AssertionError("never called")

    async def load(self, session_id: str) -> Any:
        raise AssertionError("never called")

    async def exists(self, session_id: str) -> bool:
        return False

    async def list_sessions(self) -> tuple[str, ...]:
        return ()

    async def aclose(self) -> None:
        return None


def test_a_valid_file_loads_into_the_model(tmp_path: Path) -> None:
    path = write(tmp_path, VALID)
    loaded = load_config(path)
    config = loaded.config
    assert loaded.source == str(path)
    assert loaded.base_dir == tmp_path.resolve()
    assert config.plugins.disabled == ("noisy",)
    assert config.providers[ProviderId("main")].credentials == {"api_key": "$ENV:FAKE_KEY"}
    agents = agent_configs(loaded)
    assert agents[AgentId("assistant")].tools == ("echo",)
    assert agents[AgentId("assistant")].max_rounds == 5
    assert permissions_config(loaded).mode == "plan"
    assert hooks_config(loaded)["PreToolUse"][0].strategy == "command"
    # a mapping gives the same model and the same layer tables
    again = load_config({**config.model_dump(), **loaded.sections})
    assert again.config == config
    assert agent_configs(again) == agents
    with pytest.raises(pydantic.ValidationError):
        agents[AgentId("assistant")].model = ModelId("other")  # type: ignore[misc]  # frozen


def test_defaults() -> None:
    loaded = load_config(None)
    assert loaded.config == RuntimeConfig()
    assert loaded.config.plugins.autoload is True
    assert permissions_config(loaded).mode == "default"
    assert agent_configs(loaded) == {}


@pytest.mark.parametrize(
    ("text", "path", "fragment"),
    [
        ("[agent]\nprovider = 'x'\n", ("agent",), "unknown key 'agent'"),
        (
            "[providers.main]\nkind = 'x'\n[agents.a]\nprovider = 'main'\nmodel = 'm'\n"
            "max_round = 3\n",
            ("agents", "a", "max_round"),
            "unknown key 'max_round'",
        ),
        (
            "[providers.main]\nkind = 'x'\n[agents.a]\nprovider = 'main'\nmodel = 'm'\n"
            "max_rounds = '5'\n",
            ("agents", "a", "max_rounds"),
            "'5'",
        ),
        ("[plugins]\nautoload = 'yes'\n", ("plugins", "autoload"), "bool"),
        ("[plugins]\ndisabled = 'one'\n", ("plugins", "disabled"), "tuple"),
        ("[plugins]\ndisabled = ['ok', 3]\n", ("plugins", "disabled", 1), "string"),
        ("[providers.main]\noptions = {}\n", ("providers", "main", "kind"), "missing"),
        ("[permissions]\nmode = 'yolo'\n", ("permissions", "mode"), "yolo"),
        (
            "[[hooks.PreToolUse]]\nstrategy = 'command'\ntimeout = 3\n",
            ("hooks", "PreToolUse", 0, "timeout"),
            "unknown key",
        ),
    ],
    ids=[
        "unknown-top-key",
        "unknown-nested-key",
        "no-string-to-int-coercion",
        "wrong-bool",
        "string-for-list",
        "wrong-item-type",
        "missing-required",
        "bad-literal",
        "unknown-key-in-array-of-tables",
    ],
)
def test_schema_errors_name_file_and_key_path(
    tmp_path: Path, text: str, path: tuple[str | int, ...], fragment: str
) -> None:
    file = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(file)
    error = info.value
    assert error.source == str(file)
    issue = only_issue(error)
    assert issue.path == path
    assert fragment in issue.message
    assert f"{file}: {issue.location()}: " in str(error)
    assert error.code == "config.invalid"


def test_every_schema_problem_is_reported_at_once(tmp_path: Path) -> None:
    file = write(tmp_path, "[plugins]\nautoload = 1\nbogus = true\n[nope]\n")
    with pytest.raises(ConfigError) as info:
        load_config(file)
    paths = {issue.path for issue in info.value.issues}
    assert paths == {("plugins", "autoload"), ("plugins", "bogus"), ("nope",)}


def test_syntax_error_names_the_file(tmp_path: Path) -> None:
    file = write(tmp_path, "[plugins\n")
    with pytest.raises(ConfigError, match=r"agentrig\.toml") as info:
        load_config(file)
    assert only_issue(info.value).code == "config.syntax"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "absent.toml")
    assert only_issue(info.value).code == "config.not_found"


def test_a_suffix_without_a_reader_is_refused_not_read_as_toml(tmp_path: Path) -> None:
    # a .json / .yaml file whose reader entry point is missing (a broken install) takes this
    # path too: the core names a reader per suffix, and only TOML is the kernel's own
    file = tmp_path / "agentrig.conf"
    file.write_text('[plugins]\ndisabled = ["x"]\n')  # valid TOML: still refused
    with pytest.raises(ConfigError, match=r"agentrig\.conf") as info:
        load_config(file)
    issue = only_issue(info.value)
    assert issue.code == "config.format"
    assert issue.message == "no agentrig.config_formats reader 'conf' installed"
    with pytest.raises(ConfigError, match="reader 'ini'"):
        read_config_file(file, suffix=".ini")
    plain = tmp_path / "agentrig"  # no suffix, or .toml: TOML
    plain.write_text("[plugins]\n")
    assert read_config_file(plain) == {"plugins": {}}
    assert read_config_file(file, suffix=".TOML") == {"plugins": {"disabled": ["x"]}}


def test_yaml_is_accepted_when_pyyaml_is_installed(tmp_path: Path) -> None:
    import yaml  # PyYAML: an optional extra of agentrig, installed by the dev extra

    assert yaml.__name__ == "yaml"
    good = write(
        tmp_path,
        """
        plugins:
          disabled: [noisy]
        providers:
          main: {kind: fake}
        agents:
          a: {provider: main, model: m, tools: [echo]}
        """,
        "agentrig.yaml",
    )
    loaded = load_config(good)
    assert loaded.config.plugins.disabled == ("noisy",)
    assert agent_configs(loaded)[AgentId("a")].tools == ("echo",)
    bad = write(tmp_path, "agents:\n  a: {provider: main, model: m, tool: [x]}\n", "bad.yml")
    with pytest.raises(ConfigError) as info:
        load_config(bad)
    assert only_issue(info.value).path == ("agents", "a", "tool")
    assert str(bad) in str(info.value)
    listing = write(tmp_path, "- a\n- b\n", "list.yaml")
    with pytest.raises(ConfigError, match="top level"):
        load_config(listing)


# ---- unknown IDs: checked against the installed plugins when composing ----------------------


def memory() -> MemorySource:
    source = MemorySource()
    source.add("providers", "fake", scripted_factory)
    source.add("session_stores", "jsonl", lambda config: _TinyStore())
    source.add("hook_strategies", "command", lambda config: object())
    return source


BASE = """
[providers.main]
kind = "fake"

[session_stores.disk]
kind = "jsonl"
"""


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("extra", "path", "fragment"),
    [
        (
            "[agents.a]\nprovider = 'mian'\nmodel = 'm'\n",
            ("agents", "a", "provider"),
            "unknown provider 'mian' (configured providers: main)",
        ),
        ("[providers.other]\nkind = 'openia'\n", ("providers", "other", "kind"), "'openia'"),
        (
            "[agents.a]\nprovider = 'main'\nmodel = 'm'\ntools = ['grep']\n",
            ("agents", "a", "tools", 0),
            "no tools plugin named 'grep'",
        ),
        ("[tools.grep]\n", ("tools", "grep"), "no tools plugin named 'grep'"),
        (
            "[agents.a]\nprovider = 'main'\nmodel = 'm'\nsession_store = 'dsk'\n",
            ("agents", "a", "session_store"),
            "unknown session store 'dsk' (configured: disk)",
        ),
        (
            "[session_stores.x]\nkind = 'sqlite'\n",
            ("session_stores", "x", "kind"),
            "no session_stores plugin named 'sqlite'",
        ),
        (
            "[[hooks.PreToolUse]]\nstrategy = 'comand'\n",
            ("hooks", "PreToolUse", 0, "strategy"),
            "did you mean 'command'",
        ),
    ],
    ids=[
        "provider-id",
        "provider-kind",
        "agent-tool",
        "tool-table",
        "session-store-id",
        "session-store-kind",
        "hook-strategy",
    ],
)
async def test_unknown_ids_name_file_and_key_path(
    tmp_path: Path, extra: str, path: tuple[str | int, ...], fragment: str
) -> None:
    file = write(tmp_path, BASE + extra)
    with pytest.raises(ConfigError) as info:
        async with open_runtime(
            file, sources=[builtin_source(["plugins"])], memory=memory(), environ={}
        ):
            pytest.fail("must not compose")
    error = info.value
    assert error.source == str(file)
    issue = only_issue(error)
    assert issue.path == path
    assert fragment in issue.message
    assert str(file) in str(error)
    assert issue.location() in str(error)


@pytest.mark.anyio
async def test_options_are_validated_by_the_factorys_options_model(tmp_path: Path) -> None:
    class Options(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        path: str

    def factory(config: Any) -> object:
        return object()

    factory.options_model = Options  # type: ignore[attr-defined]
    source = MemorySource()
    source.add("session_stores", "files", factory)
    file = write(tmp_path, "[session_stores.s]\nkind = 'files'\noptions = { pth = 'x' }\n")
    with pytest.raises(ConfigError) as info:
        async with open_runtime(
            file, sources=[builtin_source(["plugins"])], memory=source, environ={}
        ):
            pytest.fail("must not compose")
    paths = {issue.path for issue in info.value.issues}
    assert ("session_stores", "s", "options", "pth") in paths
    assert ("session_stores", "s", "options", "path") in paths


# ---- $ENV: secret references -------------------------------------------------------------------


def test_env_resolver_reads_the_given_mapping_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert env_resolver({"A": "1"})("A") == "1"
    assert env_resolver({})("A") is None
    monkeypatch.setenv("AGENTRIG_TEST_SECRET", "x")
    assert env_resolver()("AGENTRIG_TEST_SECRET") == "x"
