"""Two pip-installed distributions registering one entry-point name (issue 11, point 1).

examples/third-party-plugin (``agentrig-example-greeter``) and examples/rival-plugin
(``agentrig-example-rival``) both register ``agentrig.tools: greet``.  Installed side by side,
the installed ``agentrig`` command reports the conflict in ``plugins --json``, ``config check``
and ``doctor``; a composition using ``greet`` fails naming both, until ``[plugins.prefer]``
chooses one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _pip_target import installed_into

from agentrig.errors import ConfigError
from agentrig.ids import ToolId
from agentrig.kernel import open_runtime
from agentrig.plugin import TOOLS

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]
GREETER = ("agentrig-example-greeter", ROOT / "examples" / "third-party-plugin")
RIVAL = ("agentrig-example-rival", ROOT / "examples" / "rival-plugin")
AGENTRIG = Path(sys.executable).parent / ("agentrig.exe" if os.name == "nt" else "agentrig")
MODULES = ("agentrig_example_greeter", "agentrig_example_rival")


#: The environment of the CLI subprocesses while both are installed (their PYTHONPATH).
ENVIRON: dict[str, str] = {}


@pytest.fixture(scope="module")
def both_installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """pip-install both examples (into a directory of this run only, see ``_pip_target``)."""
    target = tmp_path_factory.mktemp("site")
    with installed_into(target, GREETER[1], RIVAL[1], modules=MODULES) as environ:
        ENVIRON.update(environ)
        try:
            yield
        finally:
            ENVIRON.clear()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(AGENTRIG), *args], capture_output=True, text=True, env=ENVIRON, timeout=120
    )


def greet_rows(output: str) -> dict[str, dict[str, Any]]:
    rows = json.loads(output)
    return {r["distribution"]: r for r in rows if (r["kind"], r["id"]) == ("tools", "greet")}


USES_GREET = "[tools.greet]\n"
PREFER_RIVAL = '[plugins.prefer]\n"tools:greet" = "agentrig-example-rival"\n'


def test_plugins_json_shows_both_rows_as_conflict(both_installed: None) -> None:
    result = cli("plugins", "--json")
    assert result.returncode == 0, result.stderr
    rows = greet_rows(result.stdout)
    assert set(rows) == {GREETER[0], RIVAL[0]}
    for dist, row in rows.items():
        assert row["status"] == "conflict"
        assert f"{GREETER[0]} 0.1.0" in row["error"]
        assert f"{RIVAL[0]} 0.2.0" in row["error"]
        (other,) = row["conflicts"]
        assert other.startswith(RIVAL[0] if dist == GREETER[0] else GREETER[0])


def test_plugins_json_with_a_preferring_config(both_installed: None, tmp_path: Path) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text(PREFER_RIVAL, encoding="utf-8")
    rows = greet_rows(cli("plugins", "--json", "--config", str(config)).stdout)
    assert rows[RIVAL[0]]["status"] == "loaded"
    assert rows[GREETER[0]]["status"] == "overridden"


def test_config_check_names_both_until_the_config_chooses(
    both_installed: None, tmp_path: Path
) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text(USES_GREET, encoding="utf-8")
    checked = cli("config", "check", str(config))
    assert checked.returncode == 1
    (line,) = checked.stdout.splitlines()
    assert line.startswith(
        f"agentrig config: error [config.plugin_conflict]: {config}: tools.greet: "
        "tools plugin 'greet' is registered by 2"
    )
    assert GREETER[0] in line
    assert RIVAL[0] in line
    config.write_text(USES_GREET + PREFER_RIVAL, encoding="utf-8")
    checked = cli("config", "check", str(config))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout == f"{config}: ok\n"


def test_doctor_reports_the_conflict(both_installed: None, tmp_path: Path) -> None:
    result = cli("doctor")
    assert result.returncode == 1
    (line,) = [line for line in result.stdout.splitlines() if "CONFLICT tools:greet" in line]
    assert f"{GREETER[0]} 0.1.0" in line
    assert f"{RIVAL[0]} 0.2.0" in line
    config = tmp_path / "agentrig.toml"
    config.write_text(PREFER_RIVAL, encoding="utf-8")
    assert "CONFLICT tools:greet" not in cli("doctor", "--config", str(config)).stdout


@pytest.mark.anyio
async def test_a_composition_uses_the_preferred_distribution(both_installed: None) -> None:
    from agentrig.cancel import CancelSignal
    from agentrig.tools import ToolContext

    with pytest.raises(ConfigError) as info:
        async with open_runtime({"tools": {"greet": {}}}, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.path == ("tools", "greet")
    assert issue.code == "config.plugin_conflict"
    config = {"tools": {"greet": {}}, "plugins": {"prefer": {"tools:greet": RIVAL[0]}}}
    async with open_runtime(config, environ={}) as rt:
        greet = rt.catalog(TOOLS).require(ToolId("greet"))
        ctx = ToolContext(signal=CancelSignal(), tool_id="greet", call_id="", invocation_id="i")
        arguments = greet.input_schema.parse({"name": "Ada"})
        assert await greet.execute(arguments, ctx) == "Good day, Ada."
    assert "agentrig_example_greeter.tools" not in sys.modules  # the other one never loaded
