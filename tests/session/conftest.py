"""Fixtures of the session-store behaviour suite: every test runs against jsonl and sqlite."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from agentrig.session import SessionStore

# agentrig is imported inside the fixtures: a conftest named on the command line loads
# before typeguard installs its import hook, and must not import the package under test.


@pytest.fixture(params=["jsonl", "sqlite"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_store(store_kind: str, tmp_path: Path) -> Callable[[], SessionStore]:
    """Build (another) store of the current kind over the same files."""
    from _store_support import build_store

    return lambda: build_store(store_kind, tmp_path)


@pytest.fixture
async def store(make_store: Callable[[], SessionStore]) -> AsyncIterator[SessionStore]:
    built = make_store()
    try:
        yield built
    finally:
        await built.aclose()


@pytest.fixture(autouse=True)
def _each_session_storage(session_storage: str) -> None:
    """Every test here runs on the compact and on the reference session storage (conftest.py
    at the root says which run on both)."""
