"""``_construct``'s shared fields-sets answer only for themselves: an instance whose own set
was born at another set's address is still given the shared one (``id`` patched to a
constant: every set "at one address")."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from agentrig import _construct


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)

    a: int = 0
    b: int = 0


def test_an_own_fields_set_is_never_taken_for_a_shared_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_construct, "id", lambda obj: 1, raising=False)
    first = _Frozen(a=1)
    _construct.share_fields_set(first)
    assert first.__pydantic_fields_set__ is _construct.shared_fields_set(_Frozen, {"a"})
    second = _Frozen(b=2)  # its own set, {"b"}: not the shared {"a"}
    _construct.share_fields_set(second)
    assert second.__pydantic_fields_set__ == {"b"}
    assert second.__pydantic_fields_set__ is _construct.shared_fields_set(_Frozen, {"b"})
    assert first.__pydantic_fields_set__ == {"a"}
