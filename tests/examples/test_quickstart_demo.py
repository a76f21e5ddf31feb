"""The quickstart demo runs end to end and its transcript shows what the README promises."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "quickstart" / "run.py"

pytestmark = pytest.mark.subprocess


@pytest.fixture(scope="module")
def transcript() -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    done = subprocess.run(
        [sys.executable, str(DEMO)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert done.returncode == 0, f"demo failed:\n{done.stdout}\n{done.stderr}"
    assert done.stderr == ""
    return done.stdout


def test_the_transcript_shows_both_tool_calls_and_their_results(transcript: str) -> None:
    assert '[tool call] get_weather({"city": "Lisbon"})' in transcript
    assert "[result]    get_weather -> ok:" in transcript
    assert '[tool call] convert_temperature({"celsius": 21})' in transcript
    assert "[result]    convert_temperature -> ok: 69.8 °F" in transcript


def test_the_plugin_steers_the_turn_once_before_the_final_answer(transcript: str) -> None:
    lines = transcript.splitlines()
    steer = [i for i, line in enumerate(lines) if line.startswith("[steer]")]
    assert len(steer) == 1
    assert "Fahrenheit" in lines[steer[0]]
    first_answer = next(i for i, line in enumerate(lines) if "21 °C and sunny" in line)
    convert = next(i for i, line in enumerate(lines) if "convert_temperature(" in line)
    assert first_answer < steer[0] < convert  # steered mid-turn, then the turn went on
    assert "answer:  It is 21 °C (69.8 °F)" in transcript


def test_the_transcript_ends_with_usage_and_illustrative_cost(transcript: str) -> None:
    usage = re.search(r"usage:\s+(\d+) prompt \+ (\d+) completion = (\d+) tokens", transcript)
    assert usage is not None
    prompt, completion, total = map(int, usage.groups())
    assert (prompt, completion, total) == (2099, 110, 2209)
    cost = re.search(r"cost:\s+\$(\d+\.\d+) \(illustrative prices", transcript)
    assert cost is not None
    assert float(cost.group(1)) == pytest.approx((prompt * 3.00 + completion * 15.00) / 1e6)
    assert "run:     completed, 4 model calls" in transcript
    assert transcript.rstrip().endswith("runtime closed cleanly: True")
