"""The error tree drawn at the top of ``agentrig.errors`` is the real class hierarchy."""

from __future__ import annotations

import importlib
import pkgutil

import agentrig
from agentrig import errors
from agentrig.errors import AgentrigError


def _import_everything() -> None:
    for module in pkgutil.walk_packages(agentrig.__path__, "agentrig."):
        importlib.import_module(module.name)


def draw() -> list[str]:
    """The tree of AgentrigError and its agentrig subclasses, as errors.py shows it."""
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
    doc = (errors.__doc__ or "").splitlines()
    drawn = [line[4:].rstrip() for line in doc if line.startswith("    ") and line.strip()]
    start = drawn.index(expected[0]) if expected[0] in drawn else 0
    assert drawn[start : start + len(expected)] == expected, (
        "update the tree at the top of src/agentrig/errors.py to:\n"
        + "\n".join("    " + line for line in expected)
    )
