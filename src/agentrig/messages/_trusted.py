"""The one seam through which the vocabulary builds instances from values already valid.

Messages, blocks, usages and chunks are built on the hot path from values that are already
of their fields' types (parsed JSON, text, ints).  They go through :func:`trusted`, which is
pydantic's public ``model_construct`` -- the plain reference -- until the fast layer
(:mod:`agentrig.messages._fast`) installs its builder, which shares one fields-set among
the instances of a frozen class built from the same field names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["install", "trusted"]

_M = TypeVar("_M", bound=BaseModel)


def _plain(cls: type[BaseModel], values: dict[str, Any]) -> BaseModel:
    return cls.model_construct(**values)


# what builds the instances: returns an instance of the class it is given
_build: Callable[[type[BaseModel], dict[str, Any]], Any] = _plain


def trusted(cls: type[_M], values: dict[str, Any]) -> _M:
    """An instance of ``cls`` holding ``values`` (plus defaults), not validated again; the
    fields set are the ones given, as with ``model_construct``."""
    built: _M = _build(cls, values)  # (typed Any: no cast() call on the hot path)
    return built


def install(build: Callable[[type[BaseModel], dict[str, Any]], BaseModel]) -> None:
    """Make :func:`trusted` use ``build`` (the fast layer's; equal instances, less memory)."""
    global _build
    _build = build
