"""examples/approvals runs from the real ``agentrig`` command, in each way its header shows.

The asking on a terminal is driven in tests/cli/test_cli_approvals.py; here the example's
own files run without a terminal: refused (exit 3), ``--yes``, and each deciding ``--mode``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "approvals"
NOTE = "The meeting moved to **Thursday, 10:00**."

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


def _run(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    script = shutil.which("agentrig", path=str(Path(sys.executable).parent))
    assert script is not None, "the agentrig console script is not installed in this venv"
    for name in ("agentrig.toml", "notes.py"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    return subprocess.run(
        [script, "run", "-c", "agentrig.toml", *options, "Note that the meeting moved"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=False,
    )


def test_without_a_terminal_the_write_is_refused_and_the_exit_code_is_3(tmp_path: Path) -> None:
    done = _run(tmp_path)
    assert done.returncode == 3, done.stderr
    assert "error [cli.approval_required]" in done.stderr
    assert "'write_note'" in done.stderr
    assert not (tmp_path / "meeting.txt").exists()


@pytest.mark.parametrize(
    ("options", "written"),
    [
        (("--yes",), True),
        (("--mode", "accept-edits"), True),
        (("--mode", "bypass"), True),
        (("--mode", "plan"), False),
    ],
    ids=["yes", "accept-edits", "bypass", "plan"],
)
def test_consent_or_a_mode_decides_without_a_question(
    tmp_path: Path, options: tuple[str, ...], written: bool
) -> None:
    done = _run(tmp_path, *options)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Saved. The note now reads:")
    note = tmp_path / "meeting.txt"
    if written:
        assert note.read_text(encoding="utf-8") == NOTE
        # only the tool activity a piped run shows on stderr
        assert all(line.startswith("[tool] ") for line in done.stderr.splitlines())
    else:
        assert not note.exists()
        assert "note: 1 tool call(s) were refused (write_note: " in done.stderr
