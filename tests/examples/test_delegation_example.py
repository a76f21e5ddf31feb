"""examples/delegation runs offline from the real ``agentrig`` command (issue 30, done-when)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "delegation"

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


def _command(work: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """A copy of the example in ``work`` and the real ``agentrig`` command run there."""
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("sessions"))
    script = shutil.which("agentrig", path=str(Path(sys.executable).parent))
    assert script is not None, "the agentrig console script is not installed in this venv"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}

    def agentrig(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [script, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            cwd=work,
            env=env,
            timeout=120,
            check=False,
        )

    return agentrig


def test_the_lead_delegates_the_review_and_the_child_session_names_its_parent(
    tmp_path: Path,
) -> None:
    work = tmp_path / "delegation"
    agentrig = _command(work)

    done = agentrig("run", "-c", "agentrig.toml", "-a", "lead", "Ship the parser fix")
    assert done.returncode == 0, done.stderr
    assert "The reviewer approved the parser fix" in done.stdout
    logs = sorted((work / "sessions").glob("*.jsonl"))
    assert len(logs) == 2
    lineages = [
        json.loads(line)["data"]
        for log in logs
        for line in log.read_text(encoding="utf-8").splitlines()
        if '"session/lineage"' in line
    ]
    (lineage,) = lineages
    assert lineage["origin"] == "delegated"
    assert lineage["parent_agent"] == "lead"
    assert lineage["configured_as"] == "reviewer"
    assert lineage["depth"] == 1
    assert {f"{lineage['parent_session']}.jsonl"} < {log.name for log in logs}
    parent, child = (
        lineage["parent_session"],
        next(log.stem for log in logs if log.stem != lineage["parent_session"]),
    )
    shown = agentrig("sessions", "show", "-c", "agentrig.toml", parent)
    assert shown.returncode == 0, shown.stderr
    assert "sub-agent sessions (1):" in shown.stdout
    assert f"{child}  reviewer (local)" in shown.stdout
    up = agentrig("sessions", "show", "-c", "agentrig.toml", child)
    assert f"delegated by agent lead (session {parent}) as reviewer, depth 1" in up.stdout


def test_the_front_hands_the_conversation_to_the_lead_which_delegates(tmp_path: Path) -> None:
    work = tmp_path / "delegation"
    agentrig = _command(work)

    done = agentrig("run", "-c", "agentrig.toml", "-a", "front", "Ship the parser fix")
    assert done.returncode == 0, done.stderr
    # the lead answered the run (after its own delegation), not the front agent
    assert done.stdout.strip().endswith("(one note: add a test for tabs). Shipping it.")
    assert "[tool] transfer_to_lead" in done.stderr
    logs = {log.stem: log for log in (work / "sessions").glob("*.jsonl")}
    assert len(logs) == 3

    def lineage(stem: str) -> dict[str, object] | None:
        found = [
            json.loads(line)["data"]
            for line in logs[stem].read_text(encoding="utf-8").splitlines()
            if '"session/lineage"' in line
        ]
        return found[-1] if found else None

    handoff = next(s for s in logs if (x := lineage(s)) is not None and x["origin"] == "handoff")
    front = str(lineage(handoff)["parent_session"])  # type: ignore[index]
    assert lineage(front) is None  # the front agent was created by the caller
    shown = agentrig("sessions", "show", "-c", "agentrig.toml", front)
    assert f"{handoff}  lead handoff (local)" in shown.stdout
    up = agentrig("sessions", "show", "-c", "agentrig.toml", handoff)
    assert f"handed the conversation by agent front (session {front}) as lead, depth 1" in up.stdout


def test_json_output_carries_the_handoff_and_its_sub_agent_records(tmp_path: Path) -> None:
    agentrig = _command(tmp_path / "delegation")

    done = agentrig("run", "--json", "-c", "agentrig.toml", "-a", "front", "Ship the parser fix")
    assert done.returncode == 0, done.stderr
    invocation = json.loads(done.stdout)["invocation"]
    assert invocation["outcome"] == "completed"
    handoff = invocation["handoff"]
    assert handoff["agent_id"].startswith("lead")
    (review,) = handoff["subagents"]
    assert review["agent_id"].startswith("reviewer")
    assert review["outcome"] == "completed"
    assert review["handoff"] is None
    assert "total_usage" in invocation
