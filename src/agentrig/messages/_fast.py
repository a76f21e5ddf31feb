"""The vocabulary's fast layer: instances built from values already valid, one fields-set shared.

An idle agent keeps every message and block of its history, so their size is paid per
retained run (``benchmarks/README.md``, "Session log and the fast layer").  pydantic's
public ``model_construct`` gives every instance a fields-set of its own (a ``set``, about
200 bytes -- more than a small block's own fields); its documented ``_fields_set``
parameter takes the set to use instead.  :func:`construct_shared` passes one set per frozen
class and list of field names, made once: a frozen instance never changes it (pydantic
copies it for ``model_copy``).  A non-frozen class gets a set of its own per instance, as
``model_construct`` gives it.

Only pydantic's public API is used (DESIGN §2.10).  The fields themselves stay in the
``__dict__`` ``model_construct`` builds: the more compact storage of earlier versions wrote
pydantic's instance slots, and what that cost is reported in ``benchmarks/README.md``.
:func:`install` is called once by :mod:`agentrig.messages`, the only module allowed to
import this one (an import-linter contract); without it the vocabulary builds the same
instances with a fields-set each.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from agentrig.messages import _trusted

__all__ = ["construct_shared", "install"]

_M = TypeVar("_M", bound=BaseModel)

# (class, the names given, in the caller's order) -> the fields-set every instance built from
# those names shares (a frozen class), or ``None`` (a non-frozen one: a set of its own each).
# A class is built from a few such lists, so this is one lookup instead of set algebra per
# call.  Keyed by the class itself, held strongly: an entry cannot outlive what it describes.
_SHARED: dict[tuple[type[BaseModel], tuple[str, ...]], set[str] | None] = {}
_SHARED_MAX = 1024  # name lists remembered (cleared when full: a bound, not an eviction policy)


def construct_shared(cls: type[_M], values: dict[str, Any]) -> _M:
    """``cls.model_construct(**values)``, with a frozen class's fields-set shared.

    The caller vouches for the types; the fields set are the given names that are fields of
    ``cls``, as ``model_construct`` sets them.
    """
    key = (cls, tuple(values))
    try:
        shared = _SHARED[key]
    except KeyError:
        shared = _shared_set(cls, key[1])
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.clear()
        _SHARED[key] = shared
    return cls.model_construct(shared, **values)


def _shared_set(cls: type[BaseModel], names: tuple[str, ...]) -> set[str] | None:
    if not cls.model_config.get("frozen"):
        return None
    fields = cls.model_fields
    if any(
        field.alias is not None or field.validation_alias is not None for field in fields.values()
    ):
        return None  # model_construct resolves aliases itself: leave the set to it
    return {name for name in names if name in fields}


def install() -> None:
    """Make the vocabulary's seam (:func:`agentrig.messages._trusted.trusted`) share sets."""
    _trusted.install(construct_shared)
