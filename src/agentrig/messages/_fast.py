"""The vocabulary's fast layer: validated instances sharing one fields-set per class and names.

An idle agent keeps every message and block of its history, so their size is paid per
retained run (``benchmarks/README.md``).  pydantic gives every instance a fields-set of its
own (a ``set``: 216 bytes, more than a small block's own fields).  :func:`build_shared`
validates as the plain seam does (:mod:`agentrig.messages._build`), then gives the instance
the one set shared by the instances of its frozen class validated from the same field names,
through the documented instance attribute ``__pydantic_fields_set__`` (what
``model_fields_set`` returns), assigned as any attribute is: pydantic's own ``__setattr__``
takes that name even on a frozen model.  A frozen
instance never changes that set (pydantic copies it for ``model_copy``); a class that is
not frozen keeps the set each instance got.

That is the whole trick, and what it buys is in ``benchmarks/README.md`` (memory per
retained run).  :func:`install` is called once by :mod:`agentrig.messages`, the only module
allowed to import this one (an import-linter contract); without it the vocabulary builds the
same instances, each with its own fields-set.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from agentrig.messages import _build

__all__ = ["build_shared", "install"]

_M = TypeVar("_M", bound=BaseModel)

# (class, the names given, in the caller's order) -> the fields-set its validated instances
# share (None: a class that is not frozen keeps each instance's own).  Keyed by the class
# itself, held strongly: an entry cannot outlive what it describes.
_SETS: dict[tuple[type[BaseModel], tuple[str, ...]], set[str] | None] = {}
_SETS_MAX = 1024  # name lists remembered (cleared when full: a bound, not an eviction policy)


def build_shared(cls: type[_M], values: dict[str, Any]) -> _M:
    """``cls(**values)`` (validated), with a frozen class's fields-set shared."""
    built = cls(**values)
    key = (cls, tuple(values))
    try:
        shared = _SETS[key]
    except KeyError:
        shared = set(built.model_fields_set) if cls.model_config.get("frozen") else None
        if len(_SETS) >= _SETS_MAX:
            _SETS.clear()
        _SETS[key] = shared
    if shared is not None and shared == built.model_fields_set:
        built.__pydantic_fields_set__ = shared  # pydantic's __setattr__ allows it when frozen
    return built


def install() -> None:
    """Make the vocabulary's seam (:func:`agentrig.messages._build.build`) share sets."""
    _build.install(build_shared)
