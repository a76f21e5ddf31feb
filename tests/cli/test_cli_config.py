"""`agentrig config check FILE`: exit 0 valid, 1 invalid, 2 usage.

Each problem is `agentrig config: error [code]: FILE: key.path: message`, the shape every
command's errors have.
"""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main

DIST = "cli-config-dist"


@pytest.fixture(autouse=True)
def installed(install_dist: Any) -> None:
    install_dist(
        DIST,
        {
            "agentrig.providers": {"cfgfake": "cli_cfg_mod:provider"},
            "agentrig.session_stores": {"cfgstore": "cli_cfg_mod:store"},
        },
        {
            "cli_cfg_mod": """
                from agentrig.builtins._jsonl_store import factory as jsonl
                from agentrig.builtins._scripted import factory as scripted

                BUILT = []

                def provider(config):
                    BUILT.append(("provider", dict(config.credentials)))
                    if config.options.get("explode"):
                        raise RuntimeError("cannot open the moon gateway")
                    return scripted(config)

                def store(config):
                    BUILT.append(("store", dict(config["options"])))
                    if config["options"].get("explode"):
                        raise OSError("the disk is read-only")
                    return jsonl({**config, "options": {"directory": str(config["base_dir"])}})
            """
        },
    )


def write(tmp_path: Path, text: str, name: str = "agentrig.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


VALID = """
[providers.main]
kind = "cfgfake"
credentials = { api_key = "$ENV:AGENTRIG_TEST_SURELY_UNSET_VARIABLE" }

[session_stores.disk]
kind = "cfgstore"

[agents.assistant]
provider = "main"
model = "m"
session_store = "disk"
"""


def test_valid_file_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, VALID)
    assert main(["config", "check", str(path)]) == 0
    # what the file names was constructed -- with a placeholder, the variable was never read
    from agentrig.builtins import PlaceholderResolver

    built = importlib.import_module("cli_cfg_mod").BUILT
    assert ("provider", {"api_key": PlaceholderResolver().value}) in built
    assert ("store", {}) in built
    captured = capsys.readouterr()
    assert captured.out.strip() == f"{path}: ok"
    # the $ENV: reference was checked for syntax only -- the variable is not set, that's fine


def test_schema_problems_exit_one_with_file_and_key_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
        [plugins]
        autoload = "no"

        [agents.a]
        provider = "main"
        model = "m"
        max_rounds = "many"
        colour = "blue"
        """,
    )
    assert main(["config", "check", str(path)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == 3
    error = "agentrig config: error"
    assert f"{error} [config.bool_type]: {path}: plugins.autoload: " in lines[0]
    assert any(
        line.startswith(f"{error} [config.int_type]: {path}: agents.a.max_rounds: ")
        for line in lines
    )
    assert any(
        line.startswith(
            f"{error} [config.extra_forbidden]: {path}: agents.a.colour: unknown key 'colour'"
        )
        for line in lines
    )
    assert "3 problem(s)" in captured.err


def test_unknown_ids_exit_one_with_key_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
        [providers.main]
        kind = "cfgfak"

        [agents.a]
        provider = "primary"
        model = "m"
        tools = ["nonexistent_tool"]
        session_store = "nowhere"
        """,
    )
    assert main(["config", "check", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}: providers.main.kind: " in out
    assert "did you mean 'cfgfake'" in out
    assert f"{path}: agents.a.provider: unknown provider 'primary'" in out
    assert f"{path}: agents.a.tools[0]: " in out
    assert f"{path}: agents.a.session_store: unknown session store 'nowhere'" in out


def test_secret_references_are_checked_for_syntax_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
        [providers.main]
        kind = "cfgfake"
        credentials = { a = "$ENV:", b = "$ENV:not-a-name", c = "$ENV:FINE_NAME" }
        """,
    )
    assert main(["config", "check", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"agentrig config: error [config.secret]: {path}: providers.main.credentials.a: "
        "empty $ENV: reference",
        f"agentrig config: error [config.secret]: {path}: providers.main.credentials.b: "
        "invalid environment variable name 'not-a-name' in $ENV: reference",
    ]


def test_disabled_plugin_is_a_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, '[plugins]\ndisabled = ["cfgstore"]\n' + VALID)
    assert main(["config", "check", str(path)]) == 1
    assert f"{path}: session_stores.disk.kind: " in capsys.readouterr().out


def test_yaml_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml  # PyYAML: an optional extra of agentrig, installed by the dev extra

    assert yaml.__name__ == "yaml"
    path = write(tmp_path, "agents:\n  a: {provider: main, model: 3}\n", "agentrig.yaml")
    assert main(["config", "check", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}: agents.a.model: " in out
    # the schema is checked first: IDs are only checked in a well-formed composition


def test_syntax_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "[providers\n")
    assert main(["config", "check", str(path)]) == 1
    assert capsys.readouterr().out.startswith(f"agentrig config: error [config.syntax]: {path}: ")


def test_missing_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "check", str(tmp_path / "absent.toml")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("table", "path", "cause"),
    [
        ("providers.main", "providers.main", "RuntimeError: cannot open the moon gateway"),
        ("session_stores.disk", "session_stores.disk", "OSError: the disk is read-only"),
    ],
)
def test_a_factory_that_raises_is_a_problem_at_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, path: str, cause: str
) -> None:
    text = VALID.replace(f"[{table}]\n", f"[{table}]\noptions = {{ explode = true }}\n")
    file = write(tmp_path, text)
    assert main(["config", "check", str(file)]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    kind = table.split(".")[0]
    assert line.startswith(f"agentrig config: error [config.factory_failed]: {file}: {path}: ")
    assert f"{file}: {path}: the {kind} factory " in line
    assert f"({DIST} 1.2.3: entry point agentrig.{kind}:" in line
    assert line.endswith(f"raised {cause}")


def test_a_plugin_owned_table_is_validated_by_its_owner(
    tmp_path: Path, install_dist: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    install_dist(
        "cli-section-dist",
        {"agentrig.config_sections": {"greeting": "cli_section_mod:Greeting"}},
        {
            "cli_section_mod": """
                from pydantic import BaseModel, ConfigDict

                class Greeting(BaseModel):
                    model_config = ConfigDict(extra="forbid")
                    text: str
            """
        },
    )
    good = write(tmp_path, '[greeting]\ntext = "hi"\n', "good.toml")
    assert main(["config", "check", str(good)]) == 0
    bad = write(tmp_path, '[greeting]\ntxt = "hi"\n\n[greetings]\ntext = "x"\n', "bad.toml")
    assert main(["config", "check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}: greetings: unknown key 'greetings'; did you mean 'greeting'?" in out
    invalid = write(tmp_path, '[greeting]\ntxt = "hi"\n', "invalid.toml")
    assert main(["config", "check", str(invalid)]) == 1
    out = capsys.readouterr().out
    assert f"{invalid}: greeting.txt: unknown key 'txt'; did you mean 'text'?" in out
    assert f"{invalid}: greeting.text: required key is missing" in out
