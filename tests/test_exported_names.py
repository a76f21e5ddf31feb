"""Every exported name of every public module, against a committed snapshot.

Growth of the public surface is a reviewed decision: a name added to (or dropped from) a
public module's ``__all__``, or a public function or class a public module defines without
listing it, changes ``tests/exported_names.json`` in the same commit, where a reviewer sees
it.  Public modules are those of ``agentrig`` and of the first-party plugins whose dotted
path has no ``_private`` part.  To accept a change, regenerate the snapshot:

    AGENTRIG_UPDATE_SNAPSHOT=1 .venv/bin/python -m pytest tests/test_exported_names.py
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = Path(__file__).with_name("exported_names.json")
UPDATE = "AGENTRIG_UPDATE_SNAPSHOT"

_HOW = (
    f"if the change is intended, regenerate the snapshot with {UPDATE}=1 "
    ".venv/bin/python -m pytest tests/test_exported_names.py and commit "
    "tests/exported_names.json with it"
)


def _packages() -> list[str]:
    plugins = sorted(
        path.name
        for path in ROOT.glob("plugins/*/src/*")
        if path.is_dir() and (path / "__init__.py").is_file()
    )
    return ["agentrig", *plugins]


def _public_modules() -> list[str]:
    names: list[str] = []
    for package in _packages():
        module = importlib.import_module(package)
        names.append(package)
        for info in pkgutil.walk_packages(module.__path__, prefix=f"{package}."):
            parts = info.name.split(".")
            if any(part.startswith("_") for part in parts[1:]):
                continue  # private, or inside a private package
            names.append(info.name)
    return sorted(names)


def _exports(module: ModuleType) -> dict[str, list[str]]:
    listed = sorted(getattr(module, "__all__", ()))
    # public functions and classes the module defines itself but does not list
    unlisted = sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and name not in listed
        and (inspect.isfunction(value) or inspect.isclass(value))
        and getattr(value, "__module__", None) == module.__name__
    )
    entry = {"__all__": listed}
    if unlisted:
        entry["defined, not in __all__"] = unlisted
    return entry


def _surface() -> dict[str, Any]:
    return {name: _exports(importlib.import_module(name)) for name in _public_modules()}


def _changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    lines = []
    for module in sorted(old.keys() | new.keys()):
        if module not in old:
            lines.append(f"+ module {module}")
        elif module not in new:
            lines.append(f"- module {module}")
        for kind in ("__all__", "defined, not in __all__"):
            before = set(old.get(module, {}).get(kind, ()))
            after = set(new.get(module, {}).get(kind, ()))
            lines += [f"+ {module}.{n} ({kind})" for n in sorted(after - before)]
            lines += [f"- {module}.{n} ({kind})" for n in sorted(before - after)]
    return lines


def test_the_exported_names_match_the_snapshot() -> None:
    surface = _surface()
    text = json.dumps(surface, indent=1, sort_keys=True) + "\n"
    if os.environ.get(UPDATE) == "1":
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert SNAPSHOT.is_file(), f"no {SNAPSHOT.name}; {_HOW}"
    recorded = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    changes = _changes(recorded, surface)
    assert not changes, "the public surface changed:\n  " + "\n  ".join(changes) + f"\n{_HOW}"


def test_the_faces_are_in_the_snapshot() -> None:
    recorded = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    for face in ("agentrig", "agentrig.plugin", "agentrig.testing", "agentrig_openai"):
        assert recorded[face]["__all__"], face
    assert "Agent" in recorded["agentrig"]["__all__"]


def test_a_change_is_reported_name_by_name() -> None:
    old = {"m": {"__all__": ["a", "b"]}}
    new = {"m": {"__all__": ["a", "c"], "defined, not in __all__": ["helper"]}, "n": {}}
    assert _changes(old, new) == [
        "+ m.c (__all__)",
        "- m.b (__all__)",
        "+ m.helper (defined, not in __all__)",
        "+ module n",
    ]
