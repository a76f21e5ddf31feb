"""The one seam through which the vocabulary builds the instances an agent keeps.

Messages, blocks and usages are built on the hot path, and an idle agent keeps every one of
its history.  They go through :func:`build`: validated by pydantic from a dict of field
values through the class's own constructor (pydantic-core does that in Rust, cheaper than
``model_construct``'s Python walk over every field, and than ``model_validate``, which passes
its options on each call), each instance with a fields-set of its own -- the plain
reference -- until the
fast layer (:mod:`agentrig.messages._fast`) installs its builder, which gives the instances
of a frozen class built from the same field names one shared fields-set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["build", "install"]

_M = TypeVar("_M", bound=BaseModel)


def _plain(cls: type[BaseModel], values: dict[str, Any]) -> BaseModel:
    return cls(**values)


# what builds the instances: returns an instance of the class it is given
_build: Callable[[type[BaseModel], dict[str, Any]], Any] = _plain


def build(cls: type[_M], values: dict[str, Any]) -> _M:
    """``cls(**values)``: an instance of ``cls`` holding ``values`` (plus defaults),
    validated as ``model_validate`` does; the fields set are the given names."""
    built: _M = _build(cls, values)  # (typed Any: no cast() call on the hot path)
    return built


def install(builder: Callable[[type[BaseModel], dict[str, Any]], BaseModel]) -> None:
    """Make :func:`build` use ``builder`` (the fast layer's: equal instances, less memory)."""
    global _build
    _build = builder
