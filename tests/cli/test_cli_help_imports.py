"""``agentrig --help`` and ``--version`` import only what they print (issue 37 point 6).

Checked in a fresh interpreter through ``sys.modules`` -- never by time (the ratios are in
``benchmarks/bench_import.py``).  The core alone (plugin autoloading off) needs neither the
kernel nor pydantic to list its commands; with the installed plugins autoloaded, ``--help``
imports the plugins that could add a command and not the core's composition steps, and
``--version`` imports no plugin at all.
"""

from __future__ import annotations

import pytest
from cli_child_support import MAIN_REPORTING_MODULES, plugin_env, run_reporting

# what composing or running needs and printing the usage does not
HEAVY = (
    "pydantic",
    "pluggy",
    "anyio",
    "agentrig.kernel",
    "agentrig.session",
    "agentrig.agent",
    "agentrig.llm",
    "agentrig.messages",
    "agentrig.tools",
    "agentrig.builtins",
    "platform",  # what `agentrig doctor` prints (attrs imports it too, for a run)
)
# the first-party plugins installed in this checkout's environment
PLUGIN_MODULES = ("agentrig_server", "agentrig_mcp", "agentrig_otel", "agentrig_dbos")


def run_child(*args: str, autoload: bool) -> tuple[str, set[str]]:
    output, report, stderr = run_reporting(
        MAIN_REPORTING_MODULES, *args, env=plugin_env(autoload=autoload)
    )
    assert report["code"] == 0, stderr
    return "\n".join(output), set(report["modules"])


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_the_core_prints_its_usage_without_the_kernel_or_pydantic(flag: str) -> None:
    output, modules = run_child(flag, autoload=False)
    assert output.startswith("usage: agentrig" if flag == "--help" else "agentrig ")
    loaded = [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert loaded == []


def test_version_loads_no_plugin_even_with_autoloading_on() -> None:
    output, modules = run_child("--version", autoload=True)
    assert output.startswith("agentrig ")
    assert [m for m in modules if m.split(".")[0] in PLUGIN_MODULES] == []
    assert "agentrig.kernel" not in modules


def test_help_loads_the_plugins_that_add_commands_and_not_the_core_steps() -> None:
    output, modules = run_child("--help", autoload=True)
    assert "serve" in output  # agentrig-server's command
    assert "agentrig_server" in modules
    # the core's own listener entries (its composition steps, in agentrig.builtins) never
    # add a command: none of them is imported
    assert [m for m in modules if m.startswith("agentrig.builtins")] == []
