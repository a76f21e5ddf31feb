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

from agentrig.kernel import EntryPointSource, EntrySpec, open_runtime
from agentrig.skills import SKILLS

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "examples" / "skills" / "skill-package"
DISTRIBUTION = "agentrig-example-skills"
AGENTRIG = Path(sys.executable).parent / ("agentrig.exe" if os.name == "nt" else "agentrig")


def pip(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
        check=True,
        timeout=600,
    )


def forget() -> None:
    for name in [m for m in sys.modules if m.startswith("agentrig_example_skills")]:
        del sys.modules[name]
    importlib.invalidate_caches()


@pytest.fixture(scope="module")
def installed() -> Iterator[None]:
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    pip("install", "--no-deps", *isolation, str(PACKAGE))
    forget()
    try:
        yield
    finally:
        pip("uninstall", "-y", DISTRIBUTION)
        forget()


def test_plugins_lists_the_skill(installed: None) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    done = subprocess.run(
        [str(AGENTRIG), "plugins", "--json"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    rows = [r for r in json.loads(done.stdout) if r["kind"] == "skills"]
    assert [(r["id"], r["distribution"], r["status"]) for r in rows] == [
        ("changelog", DISTRIBUTION, "loaded")
    ]


@pytest.mark.anyio
async def test_the_skill_joins_the_registry(installed: None, tmp_path: Path) -> None:
    config = {
        "skills": {"roots": {"home_claude": False, "home_codex": False, "home_agents": False}}
    }
    async with open_runtime(config, environ={}) as rt:
        skill = rt.services.require(SKILLS).get("changelog")
    assert skill.source == "entry point agentrig.skills:changelog"
    assert set(skill.resources) == {"template.md"}  # __init__.py is not a resource
    assert "Keep a Changelog" in skill.description


@pytest.mark.anyio
async def test_a_second_distribution_of_the_name_is_a_conflict(installed: None) -> None:
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
        rows = {r.distribution: r.status for r in rt.plugin_report() if r.kind == "skills"}
    assert registry.names() == ()
    assert "changelog" in registry.refused()[0].describe()
    assert rows == {DISTRIBUTION: "conflict", "agentrig-rival-skills": "conflict"}
