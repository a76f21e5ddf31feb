"""The error tree drawn in ``docs/errors.md`` is the real class hierarchy."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import agentrig
from agentrig.errors import AgentrigError

PAGE = Path(__file__).resolve().parents[1] / "docs" / "errors.md"


def _import_everything() -> None:
    for module in pkgutil.walk_packages(agentrig.__path__, "agentrig."):
        importlib.import_module(module.name)


def draw() -> list[str]:
    """The tree of AgentrigError and its agentrig subclasses, as docs/errors.md shows it."""
    lines = [f"{'AgentrigError':<44}{'code':<34}category"]

    def walk(cls: type, prefix: str) -> None:
        children: list[type] = type.__subclasses__(cls)
        ours = [c for c in children if c.__module__.startswith("agentrig.")]
        subs = sorted(ours, key=lambda c: (c.__module__.split("._")[0], c.__name__))
        for i, sub in enumerate(subs):
            last = i == len(subs) - 1
            branch = prefix + ("└── " if last else "├── ")
            code = str(vars(sub).get("code", getattr(sub, "code", "")))
            category = str(getattr(sub, "category", ""))
            lines.append(f"{branch + sub.__name__:<44}{code:<34}{category}".rstrip())
            walk(sub, prefix + ("    " if last else "│   "))

    walk(AgentrigError, " ")
    return lines


def test_the_drawn_tree_is_the_class_hierarchy() -> None:
    _import_everything()
    expected = draw()
    page = PAGE.read_text(encoding="utf-8")
    block = page.split("```text\n", 1)[-1].split("```", 1)[0]
    drawn = [line.rstrip() for line in block.splitlines() if line.strip()]
    assert drawn == expected, "update the tree in docs/errors.md to:\n" + "\n".join(expected)
