"""The kernel's face states each name in its lazy table and in its type-checking imports."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import agentrig.kernel

FACE = Path(agentrig.kernel.__file__)


def _type_checking_imports() -> dict[str, str]:
    """``name -> module`` of the ``if TYPE_CHECKING:`` imports, each ``from m import X as X``."""
    found: dict[str, str] = {}
    for node in ast.parse(FACE.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name):
            assert node.test.id == "TYPE_CHECKING"
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.dump(statement)
                assert statement.module is not None
                for alias in statement.names:
                    # the "as X" re-exports the name to strict type checkers
                    assert alias.asname == alias.name, alias.name
                    found[alias.name] = statement.module
    return found


def test_the_lazy_table_and_the_type_checking_imports_name_the_same_modules() -> None:
    assert _type_checking_imports() == agentrig.kernel._LAZY
    assert sorted(agentrig.kernel.__all__) == sorted(agentrig.kernel._LAZY)


def test_every_name_of_the_face_resolves_in_its_module() -> None:
    for name, module in agentrig.kernel._LAZY.items():
        assert hasattr(importlib.import_module(module), name), f"{module} has no {name}"
        assert getattr(agentrig.kernel, name) is getattr(importlib.import_module(module), name)
