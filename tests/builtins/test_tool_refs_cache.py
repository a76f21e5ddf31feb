"""A composition's tool references: one tool per function, never another function's."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.builtins import _tool_refs as tool_refs
from agentrig.builtins._tool_refs import ToolRefs

_MODULE = '''\
def first(a: int) -> int:
    """The first."""
    return a


def second(a: int) -> int:
    """The second."""
    return a
'''


def test_each_function_is_its_own_tool_even_at_one_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tool_refs, "id", lambda obj: 1, raising=False)
    (tmp_path / "mine.py").write_text(_MODULE, encoding="utf-8")
    refs = ToolRefs(tmp_path)
    first = refs.load("mine.py:first", ())
    second = refs.load("mine.py:second", ())
    assert isinstance(first, tuple)
    assert isinstance(second, tuple)
    assert [t.id for t in first + second] == ["first", "second"]
    again = refs.load("mine.py:first", ())
    assert isinstance(again, tuple)
    assert again[0] is first[0]  # a function named twice: one tool
