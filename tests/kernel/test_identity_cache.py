"""IdentityCache: an entry answers only for the live object it was put for."""

from __future__ import annotations

import gc

from agentrig.kernel._identity import IdentityCache


class _Plugin:
    """A small, weakly referenceable object, all of one size."""

    __slots__ = ("__weakref__",)


def test_an_entry_is_dropped_with_its_object_and_never_answers_for_a_new_one() -> None:
    cache: IdentityCache[str] = IdentityCache()
    old = _Plugin()
    assert cache.put(old, "old")
    assert cache.get(old) == "old"
    address = id(old)
    del old
    gc.collect()
    # new objects, all kept alive, until one is born at the dead object's address
    born: list[_Plugin] = []
    while id(born[-1] if born else None) != address and len(born) < 1_000_000:
        born.append(_Plugin())
    assert id(born[-1]) == address
    assert cache.get(born[-1]) is None


def test_objects_that_cannot_be_weakly_referenced_are_never_cached() -> None:
    cache: IdentityCache[str] = IdentityCache()
    value: dict[str, int] = {}
    assert not cache.put(value, "x")
    assert cache.get(value) is None
