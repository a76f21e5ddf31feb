"""A fresh interpreter for the CLI's import checks: run code, read the JSON it prints last.

The checks look at ``sys.modules`` of a new process (never at time), so each starts one; this
is where they do it, with the one-agent scripted composition most of them run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["MAIN_REPORTING_MODULES", "plugin_env", "run_reporting", "scripted_config"]

MAIN_REPORTING_MODULES = """
import json, sys
from agentrig.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""
"""``agentrig <args>`` that reports its exit code and every module it imported."""


def scripted_config(text: str) -> str:
    """A composition whose agent ``main`` answers ``text`` from a script (no network)."""
    return f"""
[providers.local]
kind = "scripted"
options.script = [{{ text = "{text}" }}]

[agents.main]
provider = "local"
model = "m"
"""


def plugin_env(*, autoload: bool) -> dict[str, str]:
    """This environment with every installed plugin autoloaded, or (``autoload=False``)
    with autoloading switched off; the test suite's own plugin switches are dropped."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_DISABLE_PLUGIN")}
    if not autoload:
        env["AGENTRIG_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


def run_reporting(
    source: str, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[list[str], Any, str]:
    """Run ``source`` with ``args`` in a new interpreter (it must succeed): the lines it
    printed before its last, that last line read as JSON, and what it wrote to stderr."""
    done = subprocess.run(
        [sys.executable, "-c", source, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
        env=env,
    )
    *output, last = done.stdout.strip().splitlines()
    return output, json.loads(last), done.stderr
