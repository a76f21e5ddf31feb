"""A one-shot ``agentrig run`` imports what the run needs, not what is merely installed
(issue 37 point 6).

Checked in a fresh interpreter through ``sys.modules`` -- never by time (the ratio is the
``agentrig_run_scripted_one_reply_cold`` line of ``benchmarks/bench_import.py``).  Every
installed plugin is autoloaded, as for a user who installed them all; a composition without
their tables must not pay for their config models, the execution journal or their SDKs.
"""

from __future__ import annotations

from pathlib import Path

from cli_child_support import plugin_env, run_reporting, scripted_config

CONFIG = scripted_config("hello")

# `agentrig <args>` reporting its modules, and how many of the scanner's rules it compiled
CHILD = """
import json, sys
from agentrig.cli import main
code = main(sys.argv[1:])
from agentrig.skills._rules import name_rules, text_rules
compiled = text_rules.cache_info().currsize + name_rules.cache_info().currsize
print(json.dumps({"code": code, "modules": sorted(sys.modules), "compiled": compiled}))
"""

# what a run of the composition above never uses, though the plugins are installed
NOT_NEEDED = (
    "agentrig.journal",  # agentrig-dbos without a [dbos] table
    "agentrig_dbos._host",
    "agentrig_dbos._config",
    "dbos",
    "agentrig_mcp._config",  # agentrig-mcp without [mcp] / [mcp_servers]
    "agentrig_mcp._compose",
    "mcp",
    "agentrig_otel._config",  # agentrig-otel without [otel]
    "opentelemetry",
    "agentrig.testing",
    "httpx",  # the scripted provider talks to no server
    "agentrig.hooks",  # no [hooks]: neither their checks nor their runner
    "agentrig.tools._projection",  # a provider projects tool schemas; the scripted one has none
    "agentrig.permissions",  # no tool and no [permissions]: the gate is built on first use
    "agentrig.builtins._gate",
)


def _loaded(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


def test_a_one_shot_run_imports_no_unused_plugin_part(tmp_path: Path) -> None:
    (tmp_path / "agentrig.toml").write_text(CONFIG, encoding="utf-8")
    output, report, stderr = run_reporting(
        CHILD,
        *("run", "-c", "agentrig.toml", "hi"),
        cwd=tmp_path,
        env=plugin_env(autoload=True),
    )
    assert report["code"] == 0, stderr
    assert output == ["hello"]
    modules = set(report["modules"])
    assert "agentrig_dbos._plugin" in modules  # the plugins were autoloaded
    assert "agentrig_mcp._plugin" in modules
    assert _loaded(modules, NOT_NEEDED) == []
    # the only tools are the skill tools listing no skill: the scanner had nothing to read
    assert report["compiled"] == 0


def test_the_kernel_face_imports_a_name_with_its_own_module_only() -> None:
    code = (
        "import json, sys, agentrig.kernel as k\n"
        "first = sorted(m for m in sys.modules if m.startswith('agentrig.kernel.'))\n"
        "k.Services\n"
        "then = sorted(m for m in sys.modules if m.startswith('agentrig.kernel.'))\n"
        "print(json.dumps([first, then]))\n"
    )
    _, (first, then), _ = run_reporting(code)
    assert first == []
    assert then == ["agentrig.kernel._services"]
