"""Fixtures of the workspace toolset's tests."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture
def shared_root() -> Iterator[Path]:
    """A workspace the restricted user (nobody) can write: outside pytest's 0700 tmp dirs."""
    path = Path(tempfile.mkdtemp(prefix="agentrig-ws-"))
    path.chmod(0o777)
    try:
        yield path.resolve()
    finally:
        shutil.rmtree(path, ignore_errors=True)
