"""examples/coding-agent runs offline with its scripted model, as its header shows.

From the real ``agentrig`` command: the mode and the rules decide every call (exit 0, the bug
fixed, the ``.env`` read refused), and ``--mode plan`` leaves the project as it was.  In
process, the tool results show each tool's real work: Glob and Grep over the files, the
check run in the bubblewrap sandbox.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agentrig
from agentrig.ids import AgentId

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding-agent"

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed"),
]


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "coding-agent"
    shutil.copytree(EXAMPLE, target)
    return target


def _run(folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    script = shutil.which("agentrig", path=str(Path(sys.executable).parent))
    assert script is not None, "the agentrig console script is not installed in this venv"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    return subprocess.run(
        [script, "run", "-c", "agentrig.toml", *options, "Make the checks pass"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=120,
        check=False,
    )


def test_the_agent_fixes_the_bug_and_the_rules_decide_every_call(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    done = _run(folder)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Fixed `add` in src/calc.py (it subtracted); the checks pass.\n"
    assert "denied by 'Read(./.env)'" in done.stderr
    assert "return a + b" in (folder / "project/src/calc.py").read_text()


def test_the_cli_offers_the_toolset_by_reference(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    config = folder / "agentrig.toml"
    config.write_text(config.read_text().replace('tools = ["workspace"]', "tools = []"))
    done = _run(folder, "--tools", "agentrig.builtins.workspace:TOOLSET")
    assert done.returncode == 0, done.stderr
    assert "return a + b" in (folder / "project/src/calc.py").read_text()


def test_plan_mode_leaves_the_project_untouched(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    done = _run(folder, "--mode", "plan")
    assert done.returncode == 0, done.stderr
    assert "Edit: permission decided: plan mode refuses modify calls" in done.stderr
    assert (folder / "project/src/calc.py").read_text() == (
        EXAMPLE / "project/src/calc.py"
    ).read_text()


@pytest.mark.anyio
async def test_each_tool_does_its_real_work(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    async with agentrig.open_runtime(folder / "agentrig.toml", environ={}) as rt:
        agent = rt.agent(AgentId("coder"))
        await agent.run("Make the checks pass")
        results = {m.name: m.text for m in agent.session.derive_messages() if m.role == "tool"}
    project = (folder / "project").resolve()
    assert sorted(results["Glob"].splitlines()) == [
        str(project / "check.py"),
        str(project / "src/calc.py"),
    ]
    assert results["Grep"] == f"{project}/src/calc.py:4:def add(a: int, b: int) -> int:\n" + (
        f"{project}/src/calc.py:5-    return a - b"
    )
    assert results["Edit"].startswith("Replaced 1 occurrence")
    assert results["Bash"] == "all checks pass\n"
