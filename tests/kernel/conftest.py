"""Fixtures for kernel tests: throwaway installed distributions on ``sys.path``."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# agentrig is imported lazily: conftests load before typeguard installs its import hook.
if TYPE_CHECKING:
    from agentrig.kernel import EntryPointSource

MakeDist = Callable[..., Path]


@pytest.fixture
def fake_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MakeDist]:
    """``fake_dist(name, version, entry_points={group: {name: "mod:attr"}}, modules={...})``.

    Writes a ``<name>-<version>.dist-info`` directory (METADATA + entry_points.txt) and the
    given module sources into a fresh directory, puts it first on ``sys.path`` and invalidates
    the import caches -- exactly what ``pip install`` leaves behind, minus the installer.
    The modules are removed from ``sys.modules`` afterwards.
    """
    created: list[str] = []
    counter = iter(range(1000))

    def make(
        name: str = "fake-dist",
        version: str = "1.0",
        *,
        entry_points: Mapping[str, Mapping[str, str]],
        modules: Mapping[str, str] | None = None,
    ) -> Path:
        site = tmp_path / f"site{next(counter)}"
        site.mkdir()
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = []
        for group, points in entry_points.items():
            lines.append(f"[{group}]")
            lines += [f"{ep} = {value}" for ep, value in points.items()]
            lines.append("")
        (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
        for module, source in (modules or {}).items():
            (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
            created.append(module)
        monkeypatch.syspath_prepend(str(site))  # also calls importlib.invalidate_caches()
        return site

    yield make
    for module in created:
        sys.modules.pop(module, None)


@pytest.fixture
def dist_source() -> Callable[..., EntryPointSource]:
    """The installed entry points of some distributions only (isolates tests from the venv)."""
    from agentrig.kernel import EntryPointSource

    def source(*distributions: str) -> EntryPointSource:
        return EntryPointSource(distributions=distributions)

    return source
