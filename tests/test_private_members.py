"""No module on the request path reads or writes another module's private members.

The loop's modules talk through named seams (``AgentPort`` between the agent handle and its
driver and turn, ``ToolInvocation`` for a tool call, ...), never through ``other._name``.
The check is by name: ``x._name`` is allowed when ``x`` is ``self`` or ``cls``, or when the
same module defines ``_name`` itself (a function, class, module or class attribute, a
``self._name`` it assigns, or a ``__slots__`` entry) -- its own objects' privates.  Anything
else must be in ``ALLOWED`` with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "agentrig"

#: the packages a run's request path goes through
REQUEST_PATH = ("agent", "session", "kernel", "hooks", "permissions", "tools", "llm")

#: (module, attribute access) -> why it is allowed
ALLOWED: dict[tuple[str, str], str] = {
    ("llm/_sse.py", "signal._set"): (
        "read once per streamed event: CancelSignal's slot instead of its `cancelled` "
        "property (a property call per token); both packages are core primitives"
    ),
}


def _own_names(tree: ast.Module) -> set[str]:
    """The private names a module defines for its own objects."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            names.add(node.attr)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets
        ):
            names.update(
                c.value
                for c in ast.walk(node.value)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            )
    return names


def reach_ins(path: Path) -> list[tuple[int, str]]:
    """The accesses ``x._name`` of ``path`` to a private member it does not own."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _own_names(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or name.startswith("__") or name in own:
            continue
        base = node.value
        if isinstance(base, ast.Name) and base.id in ("self", "cls"):
            continue
        found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_module_on_the_request_path_reaches_another_modules_privates() -> None:
    problems: list[str] = []
    used: set[tuple[str, str]] = set()
    for package in REQUEST_PATH:
        for path in sorted((SRC / package).rglob("*.py")):
            module = path.relative_to(SRC).as_posix()
            for line, access in reach_ins(path):
                if (module, access) in ALLOWED:
                    used.add((module, access))
                else:
                    problems.append(f"{module}:{line}: {access}")
    assert problems == []
    assert used == set(ALLOWED), "an allowed exception no longer occurs: drop it"


def test_the_check_sees_a_reach_in(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "class Own:\n"
        "    __slots__ = ('_slot',)\n"
        "    def __init__(self):\n"
        "        self._mine = 1\n"
        "def use(agent, own):\n"
        "    own._slot, own._mine\n"
        "    return agent._writer\n",
        encoding="utf-8",
    )
    assert reach_ins(sample) == [(7, "agent._writer")]
