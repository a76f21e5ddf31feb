"""``examples/model-presets``: run as a user runs it, offline; and ``agentrig models`` on its
composition lists the presets it ships."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentrig.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "model-presets"


@pytest.mark.subprocess
def test_the_example_switches_presets_and_shows_the_audit() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "run.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "presets: deep, quick",
        "small: asked low, applied (low), sent {'reasoning_effort': 'low'}",
        "large: asked max, clamped (high), sent {'reasoning_effort': 'high'}",
        "saved the default: ModelSelection(provider='local', model='large', "
        "reasoning_effort='max')",
        "a new agent starts on large",
    ]
    assert not (EXAMPLE / ".agentrig").exists()  # the example saved outside its folder


def test_agentrig_models_lists_the_example_presets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "-c", str(EXAMPLE / "agentrig.toml")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "no model selected (agentrig models set ...)"
    assert [line.split()[0] for line in out[2:]] == ["deep", "quick"]
