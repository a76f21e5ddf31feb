"""CLI test fixtures: a throwaway installed distribution on sys.path."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

# No agentrig import at module level: conftests load before typeguard installs its import
# hook, and whatever they import would escape instrumentation.
DISABLE_PLUGINS_ENV = "AGENTRIG_DISABLE_PLUGINS"
DISABLE_AUTOLOAD_ENV = "AGENTRIG_DISABLE_PLUGIN_AUTOLOAD"

INSTALL = Callable[..., Path]


@pytest.fixture(autouse=True)
def _clean_plugin_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI reads the documented switches from the environment; start every test clean.
    monkeypatch.delenv(DISABLE_PLUGINS_ENV, raising=False)
    monkeypatch.delenv(DISABLE_AUTOLOAD_ENV, raising=False)


@pytest.fixture
def install_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[INSTALL]:
    """Write ``<name>-<version>.dist-info`` with entry points and modules, prepend it to
    ``sys.path`` (what pip leaves behind)."""
    modules: list[str] = []

    def install(
        name: str,
        entry_points: Mapping[str, Mapping[str, str]],
        sources: Mapping[str, str],
        version: str = "1.2.3",
    ) -> Path:
        site = tmp_path / f"site-{name}"
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        text = ""
        for group, points in entry_points.items():
            text += f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()) + "\n"
        (info / "entry_points.txt").write_text(text, encoding="utf-8")
        for module, source in sources.items():
            (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
            modules.append(module)
        monkeypatch.syspath_prepend(str(site))
        return site

    yield install
    for module in modules:
        sys.modules.pop(module, None)
