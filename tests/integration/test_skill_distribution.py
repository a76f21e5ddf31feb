"""A skill shipped by a pip-installed distribution (issue 31, point 3).

examples/skills/skill-package (``agentrig-example-skills``) declares ``agentrig.skills:
changelog``; installed, the skill is listed by ``agentrig plugins`` and joins a runtime's
skill registry; an in-memory rival of the same name is a conflict, as for every kind.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from _pip_target import installed_into

from agentrig.cli import plugin_report
from agentrig.kernel import EntryPointSource, EntrySpec, open_runtime
from agentrig.skills import SKILLS

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "examples" / "skills" / "skill-package"
DISTRIBUTION = "agentrig-example-skills"
AGENTRIG = Path(sys.executable).parent / ("agentrig.exe" if os.name == "nt" else "agentrig")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """pip-install the package (into a directory of this run only, see ``_pip_target``)."""
    target = tmp_path_factory.mktemp("site")
    with installed_into(target, PACKAGE, modules=("agentrig_example_skills",)) as environ:
        yield environ


def test_plugins_lists_the_skill(installed: dict[str, str]) -> None:
    done = subprocess.run(
        [str(AGENTRIG), "plugins", "--json"],
        capture_output=True,
        text=True,
        env=installed,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = [r for r in json.loads(done.stdout) if r["kind"] == "skills"]
    assert [(r["id"], r["distribution"], r["status"]) for r in rows] == [
        ("changelog", DISTRIBUTION, "loaded")
    ]


@pytest.mark.anyio
async def test_the_skill_joins_the_registry(installed: dict[str, str], tmp_path: Path) -> None:
    config = {
        "skills": {"roots": {"home_claude": False, "home_codex": False, "home_agents": False}}
    }
    async with open_runtime(config, environ={}) as rt:
        skill = rt.services.require(SKILLS).get("changelog")
    assert skill.source == "entry point agentrig.skills:changelog"
    assert set(skill.resources) == {"template.md"}  # __init__.py is not a resource
    assert "Keep a Changelog" in skill.description


@pytest.mark.anyio
async def test_a_second_distribution_of_the_name_is_a_conflict(installed: dict[str, str]) -> None:
    package = importlib.import_module("agentrig_example_skills.changelog")

    class WithRival:  # the installed entries, plus a second distribution of the same name
        def entries(self) -> Iterable[EntrySpec]:
            rival = EntrySpec(
                "skills",
                "changelog",
                package.__name__,
                "agentrig-rival-skills",
                "1.0",
                lambda: package,
            )
            return (*EntryPointSource().entries(), rival)

    config = {
        "skills": {"roots": {"home_claude": False, "home_codex": False, "home_agents": False}}
    }
    async with open_runtime(config, environ={}, sources=[WithRival()]) as rt:
        registry = rt.services.require(SKILLS)
        rows = {r.distribution: r.status for r in plugin_report(rt.index) if r.kind == "skills"}
    assert registry.names() == ()
    assert "changelog" in registry.refused()[0].describe()
    assert rows == {DISTRIBUTION: "conflict", "agentrig-rival-skills": "conflict"}
