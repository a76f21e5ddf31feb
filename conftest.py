"""Repo-wide pytest setup.

typeguard instruments the ``agentrig`` package (``--typeguard-packages=agentrig`` in
pyproject's addopts), so every annotated function of the package checks its arguments and
return values while the suite runs.  Async tests run on both anyio backends.
"""

from __future__ import annotations

import pytest


@pytest.fixture(
    params=[
        pytest.param("asyncio", id="asyncio"),
        pytest.param("trio", id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
