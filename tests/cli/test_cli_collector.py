"""``agentrig run`` as the program starts without the cyclic collector, and runs its turn
with it (issue 37 point 6; why: ``agentrig.cli._collector``).

Each check is a fresh interpreter: the collector's state is the process's own.  The turn
calls a tool that writes what it sees, so "collected as usual" is read during the run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_child_support import run_reporting

CONFIG = """
[providers.local]
kind = "scripted"
options.script = [{ tool_calls = [{ name = "collector" }] }, { text = "done" }]

[agents.main]
provider = "local"
model = "m"
tools = ["tools.py:collector"]
"""

TOOLS = '''
import gc, json
from pathlib import Path
from agentrig.tools import tool

@tool(risk="inspect")
def collector() -> str:
    """What the cyclic collector is doing during the turn."""
    seen = {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}
    Path("during.json").write_text(json.dumps(seen))
    return "seen"
'''

# `agentrig run` as the console script runs it (argv None), or called with its arguments
CHILD = """
import gc, json, sys
from agentrig.cli import main
how = sys.argv.pop(1)
code = main() if how == "program" else main(sys.argv[1:])
print(json.dumps({"code": code, "enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}))
"""


def _run(tmp_path: Path, how: str) -> tuple[dict[str, object], dict[str, object]]:
    (tmp_path / "agentrig.toml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    output, after, stderr = run_reporting(
        CHILD, how, "run", "-c", "agentrig.toml", "hi", cwd=tmp_path
    )
    assert after["code"] == 0, stderr
    assert output == ["done"]
    during = json.loads((tmp_path / "during.json").read_text(encoding="utf-8"))
    return during, after


@pytest.mark.subprocess
def test_the_program_freezes_start_up_and_collects_the_turn(tmp_path: Path) -> None:
    during, after = _run(tmp_path, "program")
    assert during["enabled"] is True  # composed: collection is back on for the turn
    assert isinstance(during["frozen"], int)
    assert during["frozen"] > 10_000  # what start-up made is out of the collector's way
    assert after["enabled"] is True


@pytest.mark.subprocess
def test_main_called_from_code_leaves_the_collector_alone(tmp_path: Path) -> None:
    during, after = _run(tmp_path, "code")
    assert during == {"enabled": True, "frozen": 0}
    assert after == {"code": 0, "enabled": True, "frozen": 0}
