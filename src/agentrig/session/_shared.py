"""Payloads repeated verbatim, shared: one validated instance per class and values.

Step markers, request headers, turn ends and system prompts repeat across steps, runs and
agents, and an idle agent keeps every one of its log (what each costs is paid per retained
run: ``benchmarks/README.md``).  Equal payloads of these frozen classes are the same fact,
so the log keeps one instance of each:

* :func:`build_event` -- how the loop writes them -- finds the shared instance by the class
  and the values it is given, and validates only values it has not seen (pydantic turns
  equal inputs of these fields -- ints, strings, None, a tuple of strings -- into equal
  payloads, so the instance validated first is what validating again would give);
* :func:`shared` gives a payload read from a store the equal one kept before.

One table, process-wide, bounded (cleared when full: a bound, not an eviction policy),
keyed by the class itself and hashable values (never an object's address); an entry holds
what it describes.  A value that cannot be hashed (a turn end's error dict) is validated
each time and kept as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from agentrig.session._events import (
    RequestHeader,
    SessionEventData,
    StepEnd,
    StepStart,
    SystemPrompt,
    TurnEnd,
)

__all__ = ["SHARED_TYPES", "build_event", "shared"]

_E = TypeVar("_E", bound=SessionEventData)

SHARED_TYPES: frozenset[type[SessionEventData]] = frozenset(
    (StepStart, StepEnd, RequestHeader, TurnEnd, SystemPrompt)
)

# (class, *(name, value) given) -> the instance validated from them; and
# (class, frozenset(fields set), *values) -> the first equal payload read back
_SHARED: dict[tuple[Any, ...], Any] = {}
_SHARED_MAX = 4096


def build_event(cls: type[_E], fields: Mapping[str, Any]) -> _E:
    """``cls(**fields)``, validated; for a payload repeated verbatim (a step marker, a
    request header, a turn end, a system prompt), the one instance validated from these
    values."""
    if cls not in SHARED_TYPES:
        return cls(**fields)
    key = (cls, *fields.items())
    try:
        found: _E | None = _SHARED.get(key)
    except TypeError:  # an unhashable value: validated each time
        return cls(**fields)
    if found is None:
        found = _keep(key, cls(**fields))
    return found


def shared(data: _E) -> _E:
    """The payload equal to ``data`` kept before (same values, same fields set), else
    ``data`` (kept from now on); any other payload as it is."""
    if type(data) not in SHARED_TYPES:
        return data
    try:
        key = (type(data), frozenset(data.model_fields_set), *data.__dict__.values())
        found: _E | None = _SHARED.get(key)
    except TypeError:  # an unhashable value (an error dict): kept as it is
        return data
    return _keep(key, data) if found is None else found


def _keep(key: tuple[Any, ...], data: _E) -> _E:
    if len(_SHARED) >= _SHARED_MAX:
        _SHARED.clear()
    _SHARED[key] = data
    return data
