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


# ---- the session log's two storages (tests/session, tests/agent) --------------------------
# Their conftests request ``session_storage`` for every test: each runs with the compact
# storage, and -- unless it is slow, starts processes, runs on trio or checks the compact
# storage's own representation -- again with the
# plain reference one (agentrig.session.ListStorage), so the two are held to one behaviour.
_STORAGES = ("compact", "list")
_HEAVY = ("slow", "subprocess", "integration", "compact_storage")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "session_storage" in metafunc.fixturenames:
        metafunc.parametrize("session_storage", _STORAGES, indirect=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept, dropped = [], []
    for item in items:
        params = getattr(item, "callspec", None)
        params = params.params if params is not None else {}
        heavy = any(item.get_closest_marker(m) for m in _HEAVY)
        if params.get("session_storage") == "list" and (
            heavy or params.get("anyio_backend") == "trio"
        ):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture
def session_storage(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The storage every session of the test gets: ``compact`` (the default) or ``list``."""
    kind = str(request.param)
    if kind == "list":
        import agentrig.session._log as log
        from agentrig.session import ListStorage

        monkeypatch.setattr(log, "default_storage", ListStorage)
    return kind
