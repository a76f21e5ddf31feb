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

# (class, the names given, in the caller's order) -> the fields-set of the instances built from
# those names (``None``: model_construct's own), whether each instance needs a copy of it (a
# non-frozen class: it may change), and the class's plain defaults.  A class is built from a
# few such lists, so this is one lookup instead of set algebra per call.  Keyed by the class
# itself, held strongly: an entry cannot outlive what it describes.
_Plan = tuple[set[str] | None, bool, dict[str, Any]]
_PLANS: dict[tuple[type[BaseModel], tuple[str, ...]], _Plan] = {}
_PLANS_MAX = 1024  # name lists remembered (cleared when full: a bound, not an eviction policy)


def construct_shared(cls: type[_M], values: dict[str, Any]) -> _M:
    """``cls.model_construct(**values)``, with a frozen class's fields-set shared.

    The caller vouches for the types; the fields set are the given names that are fields of
    ``cls``, as ``model_construct`` sets them.  Defaults that are plain immutable values are
    passed along with ``values`` (``model_construct`` would fetch each through the field's
    ``get_default``); they are shared, as pydantic shares them, and not in the fields set.
    """
    key = (cls, tuple(values))
    try:
        fields_set, copy, defaults = _PLANS[key]
    except KeyError:
        fields_set, copy, defaults = plan = _plan(cls, key[1])
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        _PLANS[key] = plan
    if defaults:
        values = {**defaults, **values}
    return cls.model_construct(
        set(fields_set) if copy and fields_set is not None else fields_set, **values
    )


def _plan(cls: type[BaseModel], names: tuple[str, ...]) -> _Plan:
    fields = cls.model_fields
    if any(f.alias is not None or f.validation_alias is not None for f in fields.values()):
        return None, False, {}  # model_construct resolves aliases itself: leave it all to it
    defaults = {
        name: field.default
        for name, field in fields.items()
        if name not in names and field.default_factory is None and _immutable(field.default)
    }
    given = {name for name in names if name in fields}
    return given, not cls.model_config.get("frozen"), defaults


def _immutable(value: object) -> bool:
    if value is None or isinstance(value, str | bytes | int | float | bool):
        return True
    if isinstance(value, tuple | frozenset):
        return all(_immutable(item) for item in value)
    return False  # no default (PydanticUndefined), or one pydantic would copy


def install() -> None:
    """Make the vocabulary's seam (:func:`agentrig.messages._trusted.trusted`) share sets."""
    _trusted.install(construct_shared)
