"""Two installed distributions registering one name, listeners the runtime refuses, and
entry points in misspelt groups -- as `agentrig plugins`, `config check`, `doctor`, `run` and
`chat` report them (issue 11, points 1, 3 and 4)."""

from __future__ import annotations

import importlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main

FIRST, SECOND = "weather-first", "Weather_Second"

TOOL_SOURCE = """
    from agentrig.tools import tool

    @tool(risk="inspect", id="lookup_weather")
    def lookup_weather(city: str) -> str:
        \"\"\"The weather in a city.\"\"\"
        return "sunny ({ORIGIN})"
"""

LISTENER_SOURCE = """
    import agentrig

    @agentrig.hookimpl
    def runtime_started(payload):
        pass
"""

BAD_LISTENERS = {
    # a misspelt hook name
    "typo_listener_mod": """
        import agentrig

        @agentrig.hookimpl
        def runtime_startd(payload):
            pass
    """,
    # neither (payload) nor (payload, next)
    "shape_listener_mod": """
        import agentrig

        @agentrig.hookimpl
        def observe(event, extra):
            pass
    """,
    # next on a notify hook
    "next_listener_mod": """
        import agentrig

        @agentrig.hookimpl
        async def agent_status(payload, next):
            return await next(payload)
    """,
}

SCRIPTED = """\
[providers.local]
kind = "scripted"
options.script = [{ text = "Hello." }, { text = "Again." }]

[agents.assistant]
provider = "local"
model = "scripted-demo"
"""


@pytest.fixture
def colliding(install_dist: Any) -> None:
    """Two distributions that both register ``agentrig.tools: lookup_weather`` and
    ``agentrig.plugins: weather_listener``."""
    for dist, module in ((FIRST, "weather_first_mod"), (SECOND, "weather_second_mod")):
        install_dist(
            dist,
            {
                "agentrig.tools": {"lookup_weather": f"{module}:lookup_weather"},
                "agentrig.plugins": {"weather_listener": f"{module}_listener"},
            },
            {
                module: TOOL_SOURCE.replace("{ORIGIN}", dist),
                f"{module}_listener": LISTENER_SOURCE,
            },
        )


@pytest.fixture
def bad_listeners(install_dist: Any) -> None:
    install_dist(
        "bad-listeners",
        {
            "agentrig.plugins": {
                "typo_listener": "typo_listener_mod",
                "shape_listener": "shape_listener_mod",
                "next_listener": "next_listener_mod",
            }
        },
        BAD_LISTENERS,
    )


def rows(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    assert main(["plugins", "--json", *argv]) == 0
    listed: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    return listed


def write(tmp_path: Path, text: str, name: str = "agentrig.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


PREFER = '[plugins.prefer]\n"tools:lookup_weather" = "weather-second"\n'


# ---- point 1: conflicts ---------------------------------------------------------------------


def test_plugins_json_shows_both_rows_as_conflict(
    colliding: None, capsys: pytest.CaptureFixture[str]
) -> None:
    found = [r for r in rows(capsys) if r["id"] == "lookup_weather"]
    assert sorted((r["distribution"], r["status"]) for r in found) == [
        (SECOND, "conflict"),
        (FIRST, "conflict"),
    ]
    for row in found:
        assert f"{FIRST} 1.2.3" in row["error"]
        assert f"{SECOND} 1.2.3" in row["error"]
        assert '[plugins.prefer] "tools:lookup_weather"' in row["error"]
        (other,) = row["conflicts"]
        assert other.startswith(SECOND if row["distribution"] == FIRST else FIRST)
    assert "weather_first_mod" not in sys.modules  # neither side was imported


def test_plugins_json_with_a_config_that_prefers_one(
    colliding: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = write(tmp_path, PREFER)
    found = {
        r["distribution"]: r
        for r in rows(capsys, "--config", str(config))
        if r["id"] == "lookup_weather"
    }
    assert found[SECOND]["status"] == "loaded"
    assert found[SECOND]["replaces"].startswith(f"{FIRST} 1.2.3")
    assert found[FIRST]["status"] == "overridden"
    assert main(["plugins", "--config", str(config)]) == 0
    table = capsys.readouterr().out
    assert f"overridden by: {SECOND} 1.2.3" in table


def test_config_check_reports_a_conflict_the_file_uses(
    colliding: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = write(tmp_path, SCRIPTED + "\n[tools.lookup_weather]\n")
    assert main(["config", "check", str(config)]) == 1
    out = capsys.readouterr().out
    assert f"{config}: tools.lookup_weather: tools plugin 'lookup_weather' is registered by" in out
    assert FIRST in out
    assert SECOND in out

    write(tmp_path, SCRIPTED + "\n[tools.lookup_weather]\n" + PREFER)
    assert main(["config", "check", str(config)]) == 0
    captured = capsys.readouterr()
    assert "tools.lookup_weather" not in captured.out
    # the listener conflict is left unsettled: it will not run, which is a warning
    assert (
        f"agentrig config: warning [config.plugin_failed]: {config}: "
        "listener plugin 'weather_listener' will not run"
    ) in captured.err

    write(tmp_path, SCRIPTED + '[plugins.prefer]\n"tools:lookup_weather" = "weather-third"\n')
    assert main(["config", "check", str(config)]) == 1
    out = capsys.readouterr().out
    assert f"{config}: plugins.prefer.tools:lookup_weather: distribution 'weather-third'" in out


def test_config_check_warns_about_a_conflict_the_file_does_not_use(
    colliding: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = write(tmp_path, SCRIPTED)
    assert main(["config", "check", str(config)]) == 0
    err = capsys.readouterr().err
    assert (
        f"agentrig config: warning [config.plugin_conflict]: {config}: "
        "tools plugin 'lookup_weather' is registered by 2 distributions"
    ) in err
    assert "(this file does not use it)" in err


def test_run_warns_once_about_an_unsettled_listener_conflict_with_its_code(
    colliding: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = write(tmp_path, SCRIPTED)
    assert main(["run", "-c", str(config), "hi"]) == 0
    err = capsys.readouterr().err
    (line,) = [line for line in err.splitlines() if "weather_listener" in line]
    assert line.startswith("agentrig run: warning [plugin.conflict]: listener plugin ")


def test_plugins_warns_about_a_prefer_entry_that_chooses_nothing_with_its_code(
    colliding: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = write(tmp_path, '[plugins.prefer]\n"tools:lookup_weather" = "weather-third"\n')
    assert main(["plugins", "--config", str(config)]) == 0
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"agentrig plugins: warning [config.plugin_prefer]: {config}: ")
    assert "weather-third" in line


def test_doctor_reports_the_conflict_until_a_config_settles_it(
    colliding: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if "CONFLICT tools:lookup_weather" in line]
    assert f"{FIRST} 1.2.3" in line
    assert f"{SECOND} 1.2.3" in line
    assert '[plugins.prefer] "tools:lookup_weather" = "<distribution>"' in line
    assert "CONFLICT plugins:weather_listener" in out
    config = write(tmp_path, PREFER + '"plugins:weather_listener" = "weather-first"\n')
    main(["doctor", "--config", str(config)])
    assert "CONFLICT" not in capsys.readouterr().out


def test_run_uses_the_preferred_distribution(
    colliding: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = (
        '[providers.local]\nkind = "scripted"\noptions.script = [\n'
        '  { tool_calls = [{ name = "lookup_weather", arguments = { city = "Oslo" } }] },\n'
        '  { text = "done" },\n]\n'
        '[agents.assistant]\nprovider = "local"\nmodel = "m"\ntools = ["lookup_weather"]\n'
        '[plugins]\ndisabled = ["weather_listener"]\n'
    )
    config = write(tmp_path, script)
    assert main(["run", "-c", str(config), "weather?"]) == 2
    err = capsys.readouterr().err
    assert "agentrig run: error [config.plugin_conflict]:" in err
    assert "agents.assistant.tools[0]" in err
    assert FIRST in err
    assert SECOND in err
    assert "Traceback" not in err

    write(tmp_path, script + '[plugins.prefer]\n"tools:lookup_weather" = "weather-second"\n')
    assert main(["run", "-c", str(config), "--json", "weather?"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["value"] == "done"
    importlib.import_module("weather_second_mod")  # imported by the run, not by this test first

    assert "weather_first_mod" not in sys.modules


# ---- point 3: refused listeners -------------------------------------------------------------


def test_refused_listeners_are_failed_with_the_reason(
    bad_listeners: None, capsys: pytest.CaptureFixture[str]
) -> None:
    found = {r["id"]: r for r in rows(capsys) if r["distribution"] == "bad-listeners"}
    assert {r["status"] for r in found.values()} == {"failed"}
    assert (
        "'runtime_startd' is not an agentrig hook; did you mean 'runtime_started'?"
        in (found["typo_listener"]["error"])
    )
    assert (
        "observe listeners take (payload), not (event, extra)" in (found["shape_listener"]["error"])
    )
    assert "agent_status is not a waterfall hook" in found["next_listener"]["error"]

    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "FAILED plugins:typo_listener (bad-listeners): " in out
    assert "did you mean 'runtime_started'?" in out
    assert "FAILED plugins:next_listener (bad-listeners): " in out


def test_run_warns_once_per_failed_listener_and_strict_makes_it_fatal(
    bad_listeners: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = write(tmp_path, SCRIPTED)
    assert main(["run", "-c", str(config), "hi"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "Hello.\n"
    warnings = [line for line in captured.err.splitlines() if "bad-listeners" in line]
    assert len(warnings) == 3
    for line in warnings:
        assert line.startswith("agentrig run: warning [plugin.load_failed]: listener plugin '")
    assert any("did you mean 'runtime_started'?" in line for line in warnings)

    assert main(["run", "-c", str(config), "--strict-plugins", "hi"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = [line for line in captured.err.splitlines() if line.strip()]
    assert line.startswith("agentrig run: error [plugin.load_failed]: ")
    assert "bad-listeners" in line

    write(tmp_path, SCRIPTED + "[plugins]\nstrict = true\n")
    assert main(["run", "-c", str(config), "hi"]) == 2
    assert "error [plugin.load_failed]" in capsys.readouterr().err


def test_chat_warns_once_per_failed_listener_and_strict_makes_it_fatal(
    bad_listeners: None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    config = write(tmp_path, SCRIPTED)
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    assert main(["chat", "-c", str(config)]) == 0
    captured = capsys.readouterr()
    assert "Hello." in captured.out
    warnings = [line for line in captured.err.splitlines() if "bad-listeners" in line]
    assert len(warnings) == 3
    prefix = "agentrig chat: warning [plugin.load_failed]: listener plugin '"
    assert all(line.startswith(prefix) for line in warnings)

    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    assert main(["chat", "-c", str(config), "--strict-plugins"]) == 2
    assert "agentrig chat: error [plugin.load_failed]: " in capsys.readouterr().err


def test_config_check_warns_about_failed_listeners_or_fails_when_strict(
    bad_listeners: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = write(tmp_path, SCRIPTED)
    assert main(["config", "check", str(config)]) == 0
    err = capsys.readouterr().err
    assert f"agentrig config: warning [config.plugin_failed]: {config}: " in err
    assert "listener plugin 'typo_listener' will not run" in err
    write(tmp_path, SCRIPTED + "[plugins]\nstrict = true\n")
    assert main(["config", "check", str(config)]) == 1
    assert "listener plugin 'shape_listener' will not run" in capsys.readouterr().out


# ---- point 4: entry points in groups agentrig does not read -----------------------------------


def test_doctor_reports_unknown_agentrig_groups_with_the_closest_known_group(
    install_dist: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    install_dist(
        "misspelt-dist",
        {
            "agentrig.tool": {"lookup": "misspelt_mod:lookup"},
            "agentrig.zzzz": {"other": "misspelt_mod:other"},
            "not_agentrig.tools": {"ignored": "misspelt_mod:ignored"},
        },
        {"misspelt_mod": "lookup = other = ignored = None\n"},
    )
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert (
        "UNKNOWN GROUP misspelt-dist: entry point agentrig.tool:lookup = misspelt_mod:lookup "
        "is in a group agentrig does not read; did you mean agentrig.tools?"
    ) in out
    assert "UNKNOWN GROUP misspelt-dist: entry point agentrig.zzzz:other" in out
    assert "ignored" not in out


def test_doctor_reports_a_plugin_entry_in_a_group_only_the_core_is_read_from(
    install_dist: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # a third party's config importer, config format, contract or seam would never load:
    # not silently
    install_dist(
        "sneaky-dist",
        {
            "agentrig.config_importers": {"cursor": "sneaky_mod:read"},
            "agentrig.config_formats": {"ini": "sneaky_mod:read"},
            "agentrig.seams": {"my_hookspecs": "sneaky_mod"},
        },
        {"sneaky_mod": "read = None\n"},
    )
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert (
        "UNKNOWN GROUP sneaky-dist: entry point agentrig.config_importers:cursor = sneaky_mod:read "
        "is in agentrig.config_importers, which agentrig reads from its own distribution only"
    ) in out
    assert "UNKNOWN GROUP sneaky-dist: entry point agentrig.seams:my_hookspecs" in out
    assert "UNKNOWN GROUP sneaky-dist: entry point agentrig.config_formats:ini" in out
    assert "UNKNOWN GROUP agentrig:" not in out  # the core's own entries are read
