"""The public faces: ``import agentrig`` for users, ``agentrig.plugin`` for plugin authors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import agentrig
import agentrig.plugin

GUIDE = Path(__file__).parents[1] / "docs" / "plugin-guide.md"


def test_the_top_level_exports_what_users_type() -> None:
    for name in agentrig.__all__:
        assert getattr(agentrig, name) is not None, name
    for name in ("Agent", "RunResult", "tool", "Tool", "open_runtime", "run_sync"):
        assert name in agentrig.__all__
    for error in ("AgentrigError", "ConfigError", "ProviderError", "AbortError"):
        assert issubclass(getattr(agentrig, error), BaseException)


def test_the_top_level_does_not_export_internals() -> None:
    for name in ("Registry", "ReadonlyCatalog", "PluginIndex", "VariantRegistry", "Variant"):
        assert name not in agentrig.__all__
        assert not hasattr(agentrig, name)


def test_the_plugin_module_has_every_name_the_guide_lists() -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    for name in agentrig.plugin.__all__:
        assert getattr(agentrig.plugin, name) is not None, name
        assert f"`{name}`" in guide, f"docs/plugin-guide.md does not mention {name}"


def test_importing_the_faces_is_cheap() -> None:
    code = "import sys, agentrig, agentrig.plugin; print('pydantic' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


FINAL_SNIPPET = """
from agentrig import Agent, RunResult, Runtime
from agentrig.kernel import HookDispatcher, PluginIndex, Services


class MyRuntime(Runtime): ...
class MyAgent(Agent): ...
class MyServices(Services): ...
"""


@pytest.mark.slow
def test_classes_not_meant_for_subclassing_are_final(tmp_path: Path) -> None:
    module = tmp_path / "snippet.py"
    module.write_text(FINAL_SNIPPET, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", str(module)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    refused = [line for line in done.stdout.splitlines() if "Cannot inherit from final" in line]
    assert len(refused) == 3, done.stdout


LAZY_PACKAGE = """
from agentrig.plugin import lazy_exports

_LAZY = {"VALUE": "lazy_face._heavy"}
__all__ = ["VALUE"]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
"""

LAZY_CHILD = """
import sys
import lazy_face
print("lazy_face._heavy" in sys.modules, "VALUE" in dir(lazy_face))
print(lazy_face.VALUE, "lazy_face._heavy" in sys.modules, lazy_face.__dict__["VALUE"])
try:
    lazy_face.VALEU
except AttributeError as error:
    print(error)
"""


def test_lazy_exports_gives_a_plugin_package_a_cheap_face(tmp_path: Path) -> None:
    package = tmp_path / "lazy_face"
    package.mkdir()
    (package / "__init__.py").write_text(LAZY_PACKAGE, encoding="utf-8")
    (package / "_heavy.py").write_text("VALUE = 42\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", LAZY_CHILD], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert done.stdout.splitlines() == [
        "False True",
        "42 True 42",
        "module 'lazy_face' has no attribute 'VALEU'",
    ]


# each plugin package face and a module its names need but importing the face must not load
PLUGIN_FACES = {
    "agentrig_server": "starlette",
    "agentrig_mcp": "mcp",
    "agentrig_otel": "opentelemetry.sdk",
}

FACE_CHILD = """
import importlib, sys
face = importlib.import_module(sys.argv[1])
print(sys.argv[2] in sys.modules, sorted(set(face.__all__) - set(dir(face))))
print(all(getattr(face, name) is not None for name in face.__all__), sys.argv[2] in sys.modules)
try:
    face.no_such_name
except AttributeError as error:
    print(error)
"""


@pytest.mark.parametrize("face", sorted(PLUGIN_FACES))
def test_the_plugin_packages_load_their_names_on_first_use(face: str) -> None:
    heavy = PLUGIN_FACES[face]
    done = subprocess.run(
        [sys.executable, "-c", FACE_CHILD, face, heavy], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == [
        "False []",
        "True True",
        f"module {face!r} has no attribute 'no_such_name'",
    ]
