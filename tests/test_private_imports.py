"""No package reads another package's private modules; plugins use the public API only.

The kernel's modules are all private: everything outside ``agentrig.kernel`` (the other
layers, the plugins, examples, benchmarks, docs and tests other than the kernel's own)
imports kernel names from the faces ``agentrig``, ``agentrig.plugin`` and ``agentrig.kernel``.
"""

from __future__ import annotations

import ast
import importlib.util
import pkgutil
import re
from pathlib import Path

import agentrig.kernel

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


#: what may import the kernel's private modules besides the kernel: its own unit tests, and
#: the benchmarks, which time its caches from the inside (``benchmarks/bench_caches.py``)
INSIDERS = (ROOT / "tests" / "kernel", ROOT / "benchmarks", ROOT / "src" / "agentrig" / "kernel")


def _outside_the_kernel() -> list[Path]:
    paths = [
        *(ROOT / "src" / "agentrig").rglob("*.py"),
        *(ROOT / "plugins").rglob("*.py"),
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "examples").rglob("*.py"),
    ]
    return sorted(p for p in paths if not any(p.is_relative_to(i) for i in INSIDERS))


def test_only_the_kernel_and_its_tests_import_the_kernels_private_modules() -> None:
    problems = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in _outside_the_kernel()
        for line, module in _imports(path)
        if module.startswith("agentrig.kernel._")
    ]
    assert problems == []


def test_the_docs_samples_import_the_kernel_through_its_face() -> None:
    pattern = re.compile(r"\bagentrig\.kernel\.[a-z_]+ import|import agentrig\.kernel\.")
    problems = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in sorted([*(ROOT / "docs").rglob("*.md"), *ROOT.glob("*.md")])
        for match in pattern.finditer(path.read_text(encoding="utf-8"))
    ]
    assert problems == []


def test_the_kernel_package_has_no_public_submodule() -> None:
    public = sorted(
        info.name
        for info in pkgutil.iter_modules(agentrig.kernel.__path__)
        if not info.name.startswith("_")
    )
    assert public == []
    for name in ("config", "runtime", "hookspecs", "payloads", "discovery", "contracts"):
        assert importlib.util.find_spec(f"agentrig.kernel.{name}") is None, name
