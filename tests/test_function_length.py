"""No function on the request path is over 60 lines (issue 27): the loop stays readable.

A function's length is counted from its ``def`` line to its last line (decorators left
out, its docstring and comments in), nested functions and methods each on their own.  The
request path is the packages a run goes through, as in ``tests/test_private_members.py``,
plus the message vocabulary.  Split a function that grows past the limit into named
helpers; do not raise the limit.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "agentrig"

#: the packages a run's request path goes through
REQUEST_PATH = ("agent", "session", "kernel", "hooks", "permissions", "tools", "llm", "messages")
LIMIT = 60


def long_functions(path: Path, limit: int = LIMIT) -> list[tuple[str, int]]:
    """``(name, lines)`` of every function of ``path`` longer than ``limit`` lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                found.append((f"{node.name} (line {node.lineno})", lines))
    return found


def test_no_function_on_the_request_path_is_over_60_lines() -> None:
    problems = [
        f"{path.relative_to(SRC).as_posix()}: {name} has {lines} lines"
        for package in REQUEST_PATH
        for path in sorted((SRC / package).rglob("*.py"))
        for name, lines in long_functions(path)
    ]
    assert problems == []


def test_the_count_sees_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    module = tmp_path / "m.py"
    module.write_text(f"def short():\n    pass\n\n\nasync def long():\n{body}\n")
    assert long_functions(module) == [("long (line 5)", LIMIT + 1)]
