"""examples/serve runs offline: it serves the example agent and calls every API once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.subprocess, pytest.mark.integration]


def test_the_serve_example_answers_through_every_api() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "serve" / "run.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert done.returncode == 0, f"example failed:\n{done.stdout}\n{done.stderr}"
    out = done.stdout
    assert "GET /v1/models -> ['assistant']" in out
    assert "chat completion -> 2 + 3 = 5. Anything else?" in out
    assert "'total_tokens': 30" in out
    assert "streamed in 7 chunks -> 2 + 3 = 5. Anything else?" in out
    assert "anthropic message -> 2 + 3 = 5. Anything else?" in out
    assert "response, continued -> completed" in out
    assert "refused parameter -> 400 top_p: parameter not supported" in out
