"""The deferral's schema-size cache answers only for the schema object it measured."""

from __future__ import annotations

import pytest

from agentrig.tools import _deferral, tool
from agentrig.tools.deferral import estimate_schema_tokens


def test_a_new_schema_at_the_same_address_is_measured_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_deferral, "id", lambda obj: 1, raising=False)

    @tool(risk="inspect")
    def small(a: int) -> int:
        """Small."""
        return a

    @tool(risk="inspect")
    def large(a: int, second_parameter: str, third_parameter: list[str]) -> int:
        """Large."""
        return a

    assert estimate_schema_tokens([small]) < estimate_schema_tokens([large])
    assert estimate_schema_tokens([small]) == estimate_schema_tokens([small])
