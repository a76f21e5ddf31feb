"""IdentityCache: an entry answers only for the live object it was put for."""

from __future__ import annotations

import gc
import sys

from agentrig.kernel._identity import IdentityCache


class _Plugin:
    """A small, weakly referenceable object, all of one size."""

    __slots__ = ("__weakref__",)


def _reborn_at_a_dead_address(cache: IdentityCache[str]) -> _Plugin | None:
    """Cache an object, let it die, then make new ones (kept alive) until one is born at its
    address; None when another allocation took the address first."""
    old = _Plugin()
    assert cache.put(old, "old")
    assert cache.get(old) == "old"
    address = id(old)
    del old
    gc.collect()
    born: list[_Plugin] = []
    while len(born) < 10_000:
        born.append(_Plugin())
        if id(born[-1]) == address:
            return born[-1]
    return None


def test_an_entry_is_dropped_with_its_object_and_never_answers_for_a_new_one() -> None:
    cache: IdentityCache[str] = IdentityCache()
    # Another thread of the process (pytest-xdist's worker has one) may allocate in between
    # and take the dead object's address: keep the interpreter on this thread while it
    # allocates, and try again when the address went elsewhere anyway.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(60.0)
    try:
        attempts = [_reborn_at_a_dead_address(cache) for _ in range(20)]
    finally:
        sys.setswitchinterval(interval)
    reborn = [new for new in attempts if new is not None]
    assert reborn, "no object was ever born at a dead one's address"
    for new in reborn:
        assert cache.get(new) is None


def test_objects_that_cannot_be_weakly_referenced_are_never_cached() -> None:
    cache: IdentityCache[str] = IdentityCache()
    value: dict[str, int] = {}
    assert not cache.put(value, "x")
    assert cache.get(value) is None
