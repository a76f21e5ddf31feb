"""Repo-wide pytest setup.

typeguard instruments the ``agentrig`` package (``--typeguard-packages=agentrig`` in
pyproject's addopts), so every annotated function of the package checks its arguments and
return values while the suite runs.  Async tests run on both anyio backends.
"""

from __future__ import annotations

from collections.abc import Iterator

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
# storage, and -- unless it is slow, starts processes or checks the compact storage's own
# representation -- again with the plain reference one (agentrig.session.ListStorage), so the
# two are held to one behaviour.  The plain copy runs on asyncio only: the storage has no
# backend-specific code, and the compact copy already covers trio.  Only the combinations that
# run are generated, so nothing is collected and then dropped.
_HEAVY = ("slow", "subprocess", "integration", "compact_storage")
_BACKEND_STORAGE = [
    pytest.param("asyncio", "compact", id="asyncio-compact"),
    pytest.param("trio", "compact", id="trio-compact"),
    pytest.param("asyncio", "list", id="asyncio-list"),
]


def _marked_backends(metafunc: pytest.Metafunc) -> set[str] | None:
    """The backends a test's own ``parametrize`` mark names, or None when it names none."""
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        if "anyio_backend" in names:
            index = names.index("anyio_backend")
            values = mark.args[1]
            return {str(v if len(names) == 1 else v[index]) for v in values}
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # Runs before pytest's own parametrization, and states the storage (with the backend, for
    # async tests) as a ``parametrize`` mark, so pytest does not also expand ``anyio_backend``.
    if "session_storage" not in metafunc.fixturenames:
        return
    if any(metafunc.definition.get_closest_marker(m) for m in _HEAVY):
        mark = pytest.mark.parametrize("session_storage", ["compact"], indirect=True)
    elif _marked_backends(metafunc) is not None:
        # The test picks its backends itself: the plain copy only where that is asyncio alone.
        storages = ["compact", "list"] if _marked_backends(metafunc) == {"asyncio"} else ["compact"]
        mark = pytest.mark.parametrize("session_storage", storages, indirect=True)
    elif "anyio_backend" in metafunc.fixturenames:
        mark = pytest.mark.parametrize(
            ("anyio_backend", "session_storage"),
            _BACKEND_STORAGE,
            indirect=True,
        )
    else:
        mark = pytest.mark.parametrize("session_storage", ["compact", "list"], indirect=True)
    metafunc.definition.add_marker(mark)


@pytest.fixture
def session_storage(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The storage every session of the test gets: ``compact`` (the default) or ``list``."""
    kind = str(request.param)
    if kind == "list":
        import agentrig.session._log as log
        from agentrig.session import ListStorage

        monkeypatch.setattr(log, "default_storage", ListStorage)
    return kind


# ---- process-wide state ------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _no_model_cooldowns() -> Iterator[None]:
    """Every test starts and ends without model cooldowns: they are process-wide by design
    (agentrig.llm.COOLDOWNS), and one test's rate limit must not fail another's run."""
    from agentrig.llm import COOLDOWNS  # imported late: after typeguard's import hook

    COOLDOWNS.clear()
    yield
    COOLDOWNS.clear()


# ---- a stale editable install ---------------------------------------------------------------
def pytest_sessionstart(session: pytest.Session) -> None:
    """Stop at once when the installed core declares other entry points than pyproject.toml.

    An editable install keeps the entry points of the day it was installed; after a merge that
    adds one (a config table, a composition step) the suite would fail far from the cause.
    """
    import tomllib
    from importlib import metadata
    from pathlib import Path

    declared = tomllib.loads(Path(__file__).with_name("pyproject.toml").read_text("utf-8"))
    wanted = {
        (group, name, value)
        for group, entries in declared["project"].get("entry-points", {}).items()
        if group.startswith("agentrig.")
        for name, value in entries.items()
    }
    try:
        installed = metadata.distribution("agentrig").entry_points
    except metadata.PackageNotFoundError:
        return
    have = {(e.group, e.name, e.value) for e in installed if e.group.startswith("agentrig.")}
    if wanted != have:
        changed = sorted({f"{g}:{n}" for g, n, _ in wanted ^ have})
        pytest.exit(
            "the installed agentrig declares other entry points than pyproject.toml "
            f"({', '.join(changed)}); reinstall it: python3 dev.py setup",
            returncode=4,
        )
