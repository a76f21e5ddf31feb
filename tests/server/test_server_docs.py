"""Every Python sample of docs/server.md runs against the example server (examples/serve)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_support import RunningServer

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "server.md"
# every sample, fragments included: the SDK samples need a running server, which the general
# docs harness (tests/docs) does not start, so they are marked fragments there and run here
SAMPLES = re.findall(r"```python(?: fragment)?\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.fixture(scope="module")
def example_server() -> Iterator[RunningServer]:
    with RunningServer(ROOT / "examples" / "serve" / "agentrig.toml") as srv:
        yield srv


def test_the_docs_have_samples() -> None:
    assert len(SAMPLES) >= 3


@pytest.mark.parametrize("index", range(len(SAMPLES)))
def test_docs_sample_runs(index: int, example_server: RunningServer) -> None:
    code = SAMPLES[index].replace("127.0.0.1:8400", f"127.0.0.1:{example_server.port}")
    namespace: dict[str, object] = {"__name__": f"docs_server_sample_{index}"}
    exec(compile(code, f"docs/server.md[{index}]", "exec"), namespace)
