"""Field diffs for conformance failures: name what differs, not two whole reprs.

A conformance failure is read by a plugin author who did not write the suite; two reprs of
a message with a dozen blocks hide the one field that differs.  :func:`mismatch` names each
differing field by its path (``content[1].arguments.city``) with both values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from pydantic import BaseModel

__all__ = ["field_diff", "mismatch"]

_MAX_LINES = 20
_MAX_VALUE = 120


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if attrs.has(type(value)):
        return attrs.asdict(value, recurse=True)
    return value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"


def field_diff(expected: Any, actual: Any, path: str = "") -> list[str]:
    """One line per differing field: ``path: expected X, got Y`` (empty when equal)."""
    expected, actual = _plain(expected), _plain(actual)
    where = path or "(the value)"
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        lines: list[str] = []
        for key in list(expected) + [k for k in actual if k not in expected]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in actual:
                lines.append(f"{sub}: missing (expected {_show(expected[key])})")
            elif key not in expected:
                lines.append(f"{sub}: unexpected (got {_show(actual[key])})")
            else:
                lines.extend(field_diff(expected[key], actual[key], sub))
        return lines
    is_seq = isinstance(expected, Sequence) and not isinstance(expected, str | bytes)
    if is_seq and isinstance(actual, Sequence) and not isinstance(actual, str | bytes):
        lines = []
        for index, (one, two) in enumerate(zip(expected, actual, strict=False)):
            lines.extend(field_diff(one, two, f"{path}[{index}]"))
        if len(expected) != len(actual):
            lines.append(f"{where}: expected {len(expected)} items, got {len(actual)}")
        return lines
    if expected == actual and type(expected) is type(actual):
        return []
    if expected == actual:  # equal but of another type (1 vs 1.0, "a" vs a str enum)
        return [f"{where}: expected {type(expected).__name__}, got {type(actual).__name__}"]
    return [f"{where}: expected {_show(expected)}, got {_show(actual)}"]


def mismatch(what: str, expected: Any, actual: Any) -> str | None:
    """``None`` when equal; else a failure message naming every differing field."""
    lines = field_diff(expected, actual)
    if not lines:
        return None
    shown = lines[:_MAX_LINES]
    if len(lines) > _MAX_LINES:
        shown.append(f"... and {len(lines) - _MAX_LINES} more")
    return f"{what} differ in {len(lines)} field(s):\n  " + "\n  ".join(shown)
