"""examples/skills runs offline from the real ``agentrig`` command (issue 31, done-when)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "skills"

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


def agentrig(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = shutil.which("agentrig", path=str(Path(sys.executable).parent))
    assert script is not None, "the agentrig console script is not installed in this venv"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    return subprocess.run(
        [script, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )


def test_the_example_runs_reviews_trusts_and_revokes(tmp_path: Path) -> None:
    work = tmp_path / "skills"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("state", "skill-package"))
    skill = work / ".agentrig" / "skills" / "release-checklist"
    before = agentrig(work, "doctor", "--config", "agentrig.toml")
    assert "release-checklist 2" in before.stdout
    assert "not reviewed yet" in before.stdout
    done = agentrig(work, "run", "-c", "agentrig.toml", "Prepare the release")
    assert done.returncode == 0, done.stderr
    assert "Release plan: make sure CI is green" in done.stdout
    trusted = agentrig(work, "doctor", "--config", "agentrig.toml")
    assert "release-checklist" in trusted.stdout
    assert ": trusted" in trusted.stdout
    (skill / "checks.md").write_text("- [ ] one more check\n")
    changed = agentrig(work, "doctor", "--config", "agentrig.toml")
    assert "not reviewed yet" in changed.stdout  # any change revokes the trust
