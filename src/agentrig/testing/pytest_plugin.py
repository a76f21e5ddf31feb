"""agentrig's pytest plugin (entry point ``pytest11: agentrig``).

Fixtures for test authors -- the core's own suite and third-party plugin suites alike:

``agentrig_entries``
    A :class:`~agentrig.kernel.MemorySource`: add, replace or remove plugin entries in
    memory (``agentrig_entries.add("providers", "fake", factory)``) without installing anything.
``agentrig_overrides``
    Replace any catalog entry of a runtime by kind and ID
    (``agentrig_overrides.set("providers", "main", FakeProvider())``); the real one is never built.
``agentrig_runtime``
    A factory: ``async with agentrig_runtime({...config...}) as rt:`` composes a runtime
    from a config mapping with the entries and overrides above; every runtime is closed by
    the end of the test.

This module imports nothing from agentrig at import time: pytest loads plugins before the
suite configures typeguard's import hook, and an early import would escape instrumentation.
Loading this module still imports the (tiny) ``agentrig`` and ``agentrig.testing`` package
modules, which would make typeguard refuse to instrument ``agentrig`` with an
``InstrumentationWarning``; :func:`pytest_configure` below forgets them just before typeguard
installs its hook, so they are re-imported, instrumented, on first use.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from agentrig.kernel import MemorySource
    from agentrig.testing.fixtures import Overrides, RuntimeFactory


# What loading this plugin imported; anything else means agentrig is really in use already.
_PLUGIN_IMPORTS = frozenset(
    {"agentrig", "agentrig._lazy", "agentrig._markers", "agentrig.testing", __name__}
)


def _typeguard_wants_agentrig(config: pytest.Config) -> bool:
    try:
        option = config.getoption("typeguard_packages")
        ini = config.getini("typeguard-packages")
    except (ValueError, KeyError):  # typeguard's pytest plugin is not installed
        return False
    packages = [p.strip() for p in option.split(",")] if option else list(ini or ())
    return "agentrig" in packages or ":all:" in packages


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Let typeguard instrument ``agentrig`` although this plugin was loaded first.

    Runs before typeguard's own ``pytest_configure``.  When typeguard is asked to check
    ``agentrig`` and nothing but this plugin's own imports are loaded, those package modules
    are dropped from ``sys.modules``; the next import re-executes them under typeguard's hook.
    This module itself stays loaded (pytest holds it); the re-imported ``agentrig.testing``
    finds it again through its module ``__getattr__``.
    """
    loaded = {name for name in sys.modules if name == "agentrig" or name.startswith("agentrig.")}
    if not _typeguard_wants_agentrig(config) or not loaded <= _PLUGIN_IMPORTS:
        return
    for name in loaded - {__name__}:
        del sys.modules[name]


@pytest.fixture
def agentrig_entries() -> MemorySource:
    """In-memory plugin entries layered over the installed ones for this test."""
    from agentrig.kernel import MemorySource

    return MemorySource()


@pytest.fixture
def agentrig_overrides() -> Overrides:
    """Catalog overrides (kind, id) → object applied to every runtime of this test."""
    from agentrig.testing.fixtures import Overrides

    return Overrides()


@pytest.fixture
def agentrig_runtime(
    agentrig_entries: MemorySource, agentrig_overrides: Overrides
) -> Iterator[RuntimeFactory]:
    """``async with agentrig_runtime(config) as rt`` -- a composed runtime for this test."""
    from agentrig.testing.fixtures import RuntimeFactory

    factory = RuntimeFactory(agentrig_entries, agentrig_overrides)
    yield factory
    factory.check_closed()
