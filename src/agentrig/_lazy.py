"""Lazy package exports (PEP 562): a name's module is imported on first access.

A package face lists ``name -> defining module`` and binds ``__getattr__, __dir__ =
lazy_exports(__name__, globals(), table)``; importing the package then costs nothing, and
what a program never touches (pydantic models, httpx, the egress client) is never loaded.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, namespace: dict[str, Any], table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` resolving ``table``'s names."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # resolved once: later reads are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
