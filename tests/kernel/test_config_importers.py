"""Config importers: a table is read by the importer named after it, or refused as unknown.

The kernel names no importer: each ``agentrig.config_importers`` entry point of the core
distribution is named after the top-level table it reads, and only those tables are folded in
and known.  A table whose importer is missing (a broken install) is refused with an error
naming it, never ignored.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agentrig.errors import ConfigError
from agentrig.hooks import claude_code_config
from agentrig.kernel import _config as config_module
from agentrig.kernel import load_config
from agentrig.kernel._entry_points import IMPORTERS_GROUP, core_entry_points

Entries = dict[str, metadata.EntryPoint]

IMPORTER = """
def fold(data, base):
    table = data["other_tool"]
    return {**data, "permissions": {"allow": [f"Read({table['root']}/**)"]}}
"""


def _importers(monkeypatch: pytest.MonkeyPatch, change: Callable[[Entries], Entries]) -> None:
    """The core's importers as ``change`` makes them (the other groups as installed)."""

    def entries(group: str) -> Entries:
        found = core_entry_points(group)
        return change(found) if group == IMPORTERS_GROUP else found

    monkeypatch.setattr(config_module, "core_entry_points", entries)


def _claude_project(tmp_path: Path) -> Path:
    settings = {"permissions": {"allow": ["Bash(npm run test)"]}}
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(settings))
    return tmp_path / ".claude" / "settings.json"


def test_the_installed_importer_folds_its_table_in(tmp_path: Path) -> None:
    settings = _claude_project(tmp_path)
    loaded = load_config({"claude_code": {"settings": [str(settings)]}})
    assert loaded.imported == {"claude_code"}
    assert claude_code_config(loaded).settings == (str(settings),)
    assert loaded.sections["permissions"]["allow"] == ["Bash(npm run test)"]


def test_a_table_whose_importer_is_missing_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _claude_project(tmp_path)
    _importers(monkeypatch, lambda found: {k: v for k, v in found.items() if k != "claude_code"})
    with pytest.raises(ConfigError) as info:
        load_config({"claude_code": {"settings": [str(settings)]}})
    [issue] = info.value.issues
    assert issue.code == "config.extra_forbidden"
    assert issue.path == ("claude_code",)
    assert "unknown key 'claude_code'" in issue.message
    # the CLI's --claude-settings cannot slip it past either
    extend = {"claude_code": {"settings": [str(settings)]}}
    with pytest.raises(ConfigError, match="unknown key 'claude_code'"):
        load_config({}, extend=extend)


def test_a_misspelt_imported_table_gets_a_did_you_mean() -> None:
    with pytest.raises(ConfigError, match="unknown key 'claude_cod'; did you mean 'claude_code'"):
        load_config({"claude_cod": {"settings": []}})


def test_the_importers_own_validation_names_the_tables_key() -> None:
    with pytest.raises(ConfigError) as info:
        load_config({"claude_code": {"setings": []}})
    [issue] = info.value.issues
    assert issue.path == ("claude_code", "setings")
    assert "did you mean 'settings'" in issue.message


def test_any_table_with_an_importer_is_folded_in_the_kernel_names_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "other_importer.py").write_text(IMPORTER)
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = metadata.EntryPoint("other_tool", "other_importer:fold", IMPORTERS_GROUP)
    _importers(monkeypatch, lambda found: {**found, "other_tool": entry})
    loaded = load_config({"other_tool": {"root": "/srv"}})
    assert loaded.imported == {"other_tool"}
    assert loaded.sections["other_tool"] == {"root": "/srv"}
    assert loaded.sections["permissions"]["allow"] == ["Read(/srv/**)"]


def test_claude_settings_from_the_cli_are_appended_to_the_table(tmp_path: Path) -> None:
    settings = _claude_project(tmp_path)
    config = tmp_path / "agentrig.toml"
    config.write_text('[permissions]\nallow = ["Read(**)"]\n')
    loaded = load_config(config, extend={"claude_code": {"settings": [str(settings)]}})
    assert claude_code_config(loaded).settings == (str(settings),)
    assert loaded.sections["permissions"]["allow"] == ["Read(**)", "Bash(npm run test)"]


def test_extending_with_nothing_adds_no_table() -> None:
    # --claude-settings without files must not make an empty [claude_code] (the importer and
    # the hooks layer would load for nothing)
    loaded = load_config({}, extend={"claude_code": {"settings": []}})
    assert "claude_code" not in loaded.sections
    assert loaded.imported == frozenset()
