"""Building pydantic models from values already valid, compactly (the fast layer's tool).

``BaseModel.model_construct`` skips validation but still walks every field to resolve
aliases and defaults, and gives every instance a ``__dict__`` and a fields-set of its own.
:func:`construct_trusted` sets the instance state directly -- the same four attributes
``model_construct`` sets, with the plain defaults merged in from a table computed once per
class, and one fields-set shared per frozen class and field names.  Anything it cannot do
that way (a missing field without a plain default, an unknown field, private attributes, a
``model_post_init``, a root model) goes to ``model_construct``.

Classes whose instances are kept for long (the messages and blocks of an idle agent's
history) are marked with :func:`compact_instances`: their instances keep the field values
in CPython's key-sharing instance storage instead of a ``__dict__`` of their own (about 170
instead of 350 bytes for an assistant message).

This writes pydantic's instance slots itself, so it is used by one module only,
:mod:`agentrig.messages._fast` (an import-linter contract), on the pydantic versions the
pin in ``pyproject.toml`` admits.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

__all__ = ["compact_instances", "construct_trusted"]

_M = TypeVar("_M", bound=BaseModel)

_new = object.__new__
# BaseModel's own slots: their descriptors set an attribute without the generic setattr path
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_set_dict = BaseModel.__dict__["__dict__"].__set__
_setattr = object.__setattr__


class _Plan:
    __slots__ = ("compact", "given", "names", "required", "template")

    def __init__(self, cls: type[BaseModel]) -> None:
        # Every field in definition order, holding its default or a placeholder the
        # caller's value replaces: ``dict.update`` keeps key positions, and pydantic
        # serializes in ``__dict__`` order, so dumps match a validated instance's.
        self.template: dict[str, Any] = {}
        required: set[str] = set()
        for name, field in cls.model_fields.items():
            if field.default is PydanticUndefined or not _immutable(field.default):
                # no default, a factory, or a default pydantic would copy: the caller gives it
                required.add(name)
                self.template[name] = None
            else:
                self.template[name] = field.default
        self.names = frozenset(self.template)
        self.required = frozenset(required)
        self.compact = False  # see compact_instances
        # the field names a caller gives, in its order -> the fields set for them: shared
        # for a frozen class, ``None`` for a non-frozen one (a set of its own each), or
        # ``False`` when they do not fit the template (model_construct then).  A class is
        # built from a few such lists, so this is one lookup instead of set algebra per call.
        self.given: dict[tuple[str, ...], set[str] | Literal[False] | None] = {}


def _immutable(value: object) -> bool:
    if value is None or isinstance(value, str | bytes | int | float | bool):
        return True
    if isinstance(value, tuple | frozenset):
        return all(_immutable(item) for item in value)
    return False


_PLANS: dict[type[BaseModel], _Plan | None] = {}


def _plan(cls: type[BaseModel]) -> _Plan | None:
    try:
        return _PLANS[cls]
    except KeyError:
        plain = (
            not cls.__pydantic_root_model__
            and not cls.__private_attributes__
            and not cls.__pydantic_post_init__
            and cls.model_config.get("extra") != "allow"
        )
        plan = _PLANS[cls] = _Plan(cls) if plain else None
        return plan


def construct_trusted(cls: type[_M], values: dict[str, Any]) -> _M:
    """An instance of ``cls`` holding ``values`` plus the plain defaults, unvalidated.

    The caller vouches for the types.  Like ``model_construct``, the fields set are the
    ones given.  Only immutable defaults are merged
    in (shared, as pydantic shares them); any other default must be given.
    """
    plan = _PLANS.get(cls) or _plan(cls)
    if plan is None:
        return cls.model_construct(**values)
    names = tuple(values)
    fields_set = plan.given.get(names, _UNSEEN)
    if fields_set is _UNSEEN:
        fields_set = _given(cls, plan, names)
    if fields_set is False:
        return cls.model_construct(**values)
    if fields_set is None:
        fields_set = set(names)
    state = plan.template.copy()
    state.update(values)
    if not plan.compact:
        return _instance_of(cls, state, fields_set)
    instance = _new(cls)
    for name, value in state.items():  # in field order: the order pydantic dumps them in
        _setattr(instance, name, value)
    _set_fields_set(instance, fields_set)
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance


_UNSEEN: Any = object()
_GIVEN_MAX = 64  # name lists remembered per class (cleared when full)


def _given(
    cls: type[BaseModel], plan: _Plan, names: tuple[str, ...]
) -> set[str] | Literal[False] | None:
    """What :attr:`_Plan.given` keeps for ``names`` (computed once per class and list)."""
    given = frozenset(names)
    entry: set[str] | Literal[False] | None
    if not (plan.required <= given <= plan.names):
        entry = False
    elif _kind(cls) == 1:
        entry = _fields_set(cls, given)
    else:
        entry = None
    if len(plan.given) >= _GIVEN_MAX:
        plan.given.clear()
    plan.given[names] = entry
    return entry


def compact_instances(*classes: type[BaseModel]) -> None:
    """Make :func:`construct_trusted` keep the fields of ``classes``' instances compactly.

    Each field is set as an attribute of a fresh instance, in field order, so CPython
    stores the values beside the keys its class shares, with no ``__dict__`` of the
    instance's own until something reads ``__dict__`` (pydantic's ``==``, dumps) -- and
    that one is a small split dict.  Called right after the classes are defined: CPython
    sizes a class's shared keys by its first instances, so they are primed here with one
    instance holding every field.  Instances are equal and dump the same either way.
    """
    for cls in classes:
        plan = _plan(cls)
        if plan is None:
            raise TypeError(f"{cls.__name__} cannot be constructed compactly")
        plan.compact = True
        probe = _new(cls)
        for name, value in plan.template.items():
            _setattr(probe, name, value)


# (class, field names) -> one set shared by every frozen instance with those fields set.
# A set per instance is 216 bytes -- more than the instance's own fields for a small model;
# a frozen model never changes it (pydantic copies it for ``model_copy``).
_FIELD_SETS: dict[tuple[type[BaseModel], frozenset[str]], set[str]] = {}


def _fields_set(cls: type[BaseModel], names: Iterable[str]) -> set[str]:
    if _kind(cls) != 1:
        return set(names)
    key = (cls, frozenset(names))
    shared = _FIELD_SETS.get(key)
    if shared is None:
        shared = _FIELD_SETS[key] = set(key[1])
    return shared


# type -> 1 (a frozen pydantic model), 2 (another pydantic model) or 0: ``isinstance`` on
# pydantic's ABC-based metaclass costs ~1 µs, a dict lookup ~30 ns
_KINDS: dict[type, int] = {}


def _kind(cls: type) -> int:
    kind = _KINDS.get(cls)
    if kind is None:
        kind = _KINDS[cls] = _kind_of(cls)
    return kind


def _kind_of(cls: type) -> int:
    if not issubclass(cls, BaseModel):
        return 0
    return 1 if cls.model_config.get("frozen") else 2


def _instance_of(cls: type[_M], state: dict[str, Any], fields_set: set[str]) -> _M:
    """An instance of ``cls`` with ``state`` as its ``__dict__``: every field, in order.

    What ``model_construct`` ends with (the four attributes of a pydantic instance), for
    callers that already hold the complete state.
    """
    instance = _new(cls)
    _set_dict(instance, state)
    _set_fields_set(instance, fields_set)
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance
