"""Durations in config: a positive number of seconds, or a string such as ``"30s"``.

Accepted units: ``ms``, ``s``, ``m``, ``h`` (``"1.5s"``, ``"500ms"``, ``"2m"``); a bare number
is seconds.  Anything else -- zero, a negative value, an unknown unit -- is refused with a
message naming what was given.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator

__all__ = ["Duration", "parse_duration"]

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_PATTERN = re.compile(r"\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h)\s*")


def parse_duration(value: object) -> float:
    """Seconds for ``value`` (a number of seconds or ``"<number><ms|s|m|h>"``)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str):
        match = _PATTERN.fullmatch(value)
        if match is None:
            raise ValueError(
                f"{value!r} is not a duration: write seconds (30) or a number with a unit "
                "(500ms, 30s, 2m, 1h)"
            )
        seconds = float(match.group(1)) * _UNITS[match.group(2)]
    else:
        raise ValueError(f"a duration is a number of seconds or a string like '30s', not {value!r}")
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"a duration must be positive and finite, got {value!r}")
    return seconds


Duration = Annotated[float, BeforeValidator(parse_duration)]
"""A config field holding a duration, stored as seconds."""
