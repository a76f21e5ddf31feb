"""No package reads another package's private modules; plugins use the public API only."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _imports(path: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, node.module)]
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return found


def _private_part(module: str) -> int | None:
    """Index of the first private segment of ``agentrig.x._y`` (None: all public)."""
    parts = module.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return i
    return None


def test_no_package_imports_another_packages_private_modules() -> None:
    src = ROOT / "src" / "agentrig"
    problems = []
    for path in sorted(src.rglob("*.py")):
        package = path.relative_to(src).parts[0]  # "kernel", "agent", ... or "x.py"
        for line, module in _imports(path):
            if not module.startswith("agentrig."):
                continue
            private = _private_part(module)
            if private is None or private == 1:
                continue  # public, or the root's own private modules (agentrig._markers)
            owner = module.split(".")[1]
            if owner != package:
                problems.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert problems == []


def test_first_party_plugins_import_only_the_public_api() -> None:
    problems = []
    for path in sorted((ROOT / "plugins").glob("*/src/**/*.py")):
        for line, module in _imports(path):
            if module.split(".")[0] == "agentrig" and _private_part(module) is not None:
                problems.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert problems == []
