"""The worked example of ``docs/session-stores.md`` is a store that passes the conformance
suite, exactly as the page shows it (its Python blocks are run, not copied)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.testing.conformance_session_store import SessionStoreConformance

PAGE = Path(__file__).resolve().parents[2] / "docs" / "session-stores.md"


def _python_blocks() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    return [part.split("```", 1)[0] for part in text.split("```python\n")[1:]]


def _example() -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    for block in _python_blocks():
        exec(compile(block, str(PAGE), "exec"), namespace)
    return namespace


EXAMPLE = _example()


class TestTheWorkedExample(SessionStoreConformance):
    @pytest.fixture
    def make_session_store(self) -> Any:
        shelf = EXAMPLE["Shelf"]()
        return lambda: EXAMPLE["ShelfStore"](shelf)


def test_the_page_runs_its_own_conformance_class_too() -> None:
    assert issubclass(EXAMPLE["TestShelfStore"], SessionStoreConformance)
    store = EXAMPLE["factory"]({"id": "main", "options": {"shelf": "team"}})
    again = EXAMPLE["factory"]({"id": "other", "options": {"shelf": "team"}})
    assert store.shelf is again.shelf  # one shelf per name, shared by every store over it
