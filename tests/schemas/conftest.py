"""The PostgreSQL server of the schema tests (one for the whole run, started on first use)."""

from __future__ import annotations

import importlib
import itertools
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "plugins"))

_databases = itertools.count()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    # tests/plugins is put on sys.path above, so mypy (which checks this file on its own)
    # cannot follow the import: load it by name
    postgres_server = importlib.import_module("_postgres_server").postgres_server
    with postgres_server() as running:
        yield running


@pytest.fixture
def pg_dsn(pg_server: Any) -> str:
    """A fresh database per test."""
    return str(pg_server.create_database(f"s{os.getpid()}_{next(_databases)}"))


@pytest.fixture
def anyio_backend() -> str:
    """asyncio only: the stores run on both backends in their own suites; these tests are
    about stored data and subprocesses."""
    return "asyncio"
