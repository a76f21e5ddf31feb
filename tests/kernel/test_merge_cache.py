"""The merge's grouping cache answers only for the listing it was filled for."""

from __future__ import annotations

import pytest

from agentrig.kernel import EntrySpec, _merge
from agentrig.kernel._merge import merge_sources


def _listing(distribution: str) -> tuple[EntrySpec, ...]:
    # more than 16 entries: a listing the cache keeps (an installed one)
    return tuple(
        EntrySpec("tools", f"tool{i}", f"pkg:t{i}", distribution, "1.0", load=lambda: None)
        for i in range(20)
    )


def test_another_listing_at_the_same_address_is_grouped_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_merge, "id", lambda obj: 1, raising=False)
    first = merge_sources([_listing("one")])
    second = merge_sources([_listing("two")])
    assert first.chosen[("tools", "tool0")].distribution == "one"
    assert second.chosen[("tools", "tool0")].distribution == "two"
