"""`agentrig plugins [--json]` and `agentrig doctor`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentrig.cli import main, plugin_report
from agentrig.kernel import DISABLE_PLUGINS_ENV

DIST = "cli-test-dist"

SOURCES = {
    "cli_good_mod": """
        import agentrig

        @agentrig.hookimpl
        def runtime_started(payload):
            pass

        def store(config):
            return object()
    """,
    "cli_broken_mod": """
        raise ImportError("vendor_sdk is not installed")
    """,
}

ENTRY_POINTS = {
    "agentrig.plugins": {"good_listener": "cli_good_mod"},
    "agentrig.session_stores": {"memstore": "cli_good_mod:store", "broken": "cli_broken_mod:x"},
    "agentrig.tools": {"not_a_tool": "cli_good_mod:store"},
}


@pytest.fixture
def installed(install_dist: Any) -> None:
    install_dist(DIST, ENTRY_POINTS, SOURCES)


def rows_of(out: str) -> dict[str, dict[str, Any]]:
    rows = json.loads(out)
    assert isinstance(rows, list)
    return {row["id"]: row for row in rows if row["distribution"] == DIST}


def test_plugins_json_lists_every_entry_with_real_status(
    installed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plugins", "--json"]) == 0
    rows = rows_of(capsys.readouterr().out)
    assert set(rows) == {"good_listener", "memstore", "broken", "not_a_tool"}
    for row in rows.values():
        assert {"kind", "id", "distribution", "version", "status", "error"} <= set(row)
        assert row["version"] == "1.2.3"
    assert rows["good_listener"]["kind"] == "plugins"
    assert (rows["good_listener"]["status"], rows["good_listener"]["error"]) == ("loaded", None)
    assert rows["memstore"]["status"] == "loaded"
    assert rows["broken"]["status"] == "failed"
    assert "vendor_sdk is not installed" in rows["broken"]["error"]
    assert rows["not_a_tool"]["status"] == "failed"
    assert "plain function" in rows["not_a_tool"]["error"]


def test_plugins_json_disabled_by_environment(
    installed: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DISABLE_PLUGINS_ENV, "broken,plugins:good_listener")
    assert main(["plugins", "--json"]) == 0
    rows = rows_of(capsys.readouterr().out)
    assert (rows["broken"]["status"], rows["broken"]["error"]) == ("disabled", None)
    assert rows["good_listener"]["status"] == "disabled"
    assert rows["memstore"]["status"] == "loaded"


def test_plugins_config_applies_its_disabled_list(
    installed: None, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text('[plugins]\ndisabled = ["memstore"]\n', encoding="utf-8")
    assert main(["plugins", "--json", "--config", str(config)]) == 0
    assert rows_of(capsys.readouterr().out)["memstore"]["status"] == "disabled"
    config.write_text("[plugins]\nbogus = 1\n", encoding="utf-8")
    assert main(["plugins", "--config", str(config)]) == 2
    assert "plugins.bogus" in capsys.readouterr().err


def test_plugins_table_for_humans(installed: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["KIND", "ID", "STATUS", "DISTRIBUTION", "VERSION"]
    broken = next(i for i, line in enumerate(lines) if " broken " in line)
    assert lines[broken].split()[:5] == ["session_stores", "broken", "failed", DIST, "1.2.3"]
    assert lines[broken + 1].strip().startswith("error: import failed")
    assert "entries:" in lines[-1]


def test_doctor_reports_failures_with_exit_one(
    installed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("agentrig ")
    assert "python " in out
    assert "pluggy " in out
    assert f"FAILED session_stores:broken ({DIST}): import failed" in out
    assert "problem(s) found" in out


def test_doctor_exit_zero_when_everything_loads(
    install_dist: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentrig.kernel import PluginIndex

    install_dist(DIST, {"agentrig.session_stores": {"ok": "cli_good_mod:store"}}, SOURCES)
    others_fail = any(r.status == "failed" for r in plugin_report(PluginIndex(), check=True))
    code = main(["doctor"])
    out = capsys.readouterr().out
    assert code == (1 if others_fail else 0)
    if not others_fail:
        assert "everything loads" in out
