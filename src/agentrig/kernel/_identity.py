"""A cache keyed by object identity that forgets an object when it is collected.

Plugin objects (modules, listener instances) are checked once per process rather than once
per runtime; keying by ``id`` works for unhashable objects, and a weak reference both tells a
reused ``id`` from the original and drops the entry when the object goes away.
"""

from __future__ import annotations

import weakref
from typing import Generic, TypeVar, final

__all__ = ["IdentityCache"]

_V = TypeVar("_V")


@final
class IdentityCache(Generic[_V]):
    """``obj -> value`` for live, weakly referenceable objects (others are never cached)."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[object], _V]] = {}

    def get(self, obj: object) -> _V | None:
        hit = self._entries.get(id(obj))
        if hit is not None and hit[0]() is obj:
            return hit[1]
        return None

    def put(self, obj: object, value: _V) -> bool:
        """Remember ``value`` for ``obj``; False when ``obj`` cannot be weakly referenced."""
        key = id(obj)
        entries = self._entries
        try:
            ref = weakref.ref(obj, lambda _: entries.pop(key, None))
        except TypeError:  # not weakly referenceable: computed every time
            return False
        entries[key] = (ref, value)
        return True
