"""Mistakes with tool references are named for what they are (issue 37, point 8): a file
without ``:NAME`` is not an uninstalled plugin, and two references bringing one tool id are
fixed in the agent's tools or the code, not with ``plugins.disabled``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.builtins._scripted import ScriptedProvider
from agentrig.errors import ConfigError
from agentrig.kernel import MemorySource, open_runtime
from agentrig.tools import tool

pytestmark = pytest.mark.anyio


def agent_with(*tools: str) -> dict[str, Any]:
    return {
        "providers": {"p": {"kind": "scripted"}},
        "agents": {"a": {"provider": "p", "model": "m", "tools": list(tools)}},
    }


def write(folder: Path, name: str, function: str = "forecast") -> None:
    (folder / name).write_text(
        f'def {function}(city: str) -> str:\n    """The forecast."""\n    return city\n',
        encoding="utf-8",
    )


async def _issue(config: dict[str, Any], memory: MemorySource | None = None) -> Any:
    memory = memory or MemorySource()
    memory.add("providers", "scripted", lambda config: ScriptedProvider(["ok"]))
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, memory=memory, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    return issue


@pytest.mark.parametrize("name", ["tools.py", "lib/tools.py", "./helpers.py"])
async def test_a_file_without_a_name_says_what_is_missing(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    issue = await _issue(agent_with(name))
    assert (issue.code, issue.path) == ("config.tool_ref", ("agents", "a", "tools", 0))
    assert f"write '{name}:NAME'" in issue.message
    assert "installed" not in issue.message


async def test_two_references_with_one_id_suggest_the_fix_that_applies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "one.py")
    write(tmp_path, "two.py")
    issue = await _issue(agent_with("one.py:forecast", "two.py:forecast"))
    assert issue.code == "config.duplicate_tool"
    assert "drop one reference from the agent's tools" in issue.message
    assert "@tool(id=...)" in issue.message
    assert "plugins.disabled" not in issue.message


async def test_a_reference_against_an_installed_tool_names_both_fixes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "mine.py")

    @tool
    def forecast(city: str) -> str:
        """The installed forecast."""
        return city

    memory = MemorySource()
    memory.add("tools", "forecast", forecast, distribution="weather-dist")
    issue = await _issue(agent_with("forecast", "mine.py:forecast"), memory)
    assert issue.code == "config.duplicate_tool"
    assert "drop the reference from the agent's tools" in issue.message
    assert "disable the installed entry (plugins.disabled)" in issue.message
