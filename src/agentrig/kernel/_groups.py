"""Entry points in ``agentrig.*`` groups that agentrig does not read.

An entry point in a misspelt group (``agentrig.tool`` for ``agentrig.tools``) is never
discovered, so the plugin silently never loads.  ``agentrig doctor`` lists these with the
closest known group.
"""

from __future__ import annotations

import difflib
import importlib.metadata as metadata
from typing import Any

import attrs

from agentrig.kernel._config import IMPORTERS_GROUP
from agentrig.kernel._contracts import CONTRACTS_GROUP
from agentrig.kernel._kinds import KINDS
from agentrig.variants import SEAMS_GROUP

__all__ = ["StrayEntryPoint", "stray_entry_points"]

_PREFIX = "agentrig."


@attrs.frozen(slots=True)
class StrayEntryPoint:
    """An installed entry point in an ``agentrig.*`` group no plugin kind uses."""

    group: str
    name: str
    value: str
    distribution: str | None
    #: the known group closest to ``group`` (None when nothing is close)
    suggestion: str | None

    def describe(self) -> str:
        hint = f"; did you mean {self.suggestion}?" if self.suggestion else ""
        known = ", ".join(spec.group for spec in KINDS.values())
        return (
            f"{self.distribution or '?'}: entry point {self.group}:{self.name} = {self.value} "
            f"is in a group agentrig does not read{hint} (known groups: {known})"
        )


def stray_entry_points() -> tuple[StrayEntryPoint, ...]:
    """Every installed entry point in an unknown ``agentrig.*`` group, sorted by group."""
    known = [spec.group for spec in KINDS.values()]
    # the core's own contract checks (kernel.contracts), config importers (kernel.config)
    # and seams (variants.SEAMS_GROUP)
    read = {*known, CONTRACTS_GROUP, IMPORTERS_GROUP, SEAMS_GROUP}
    points: Any = metadata.entry_points()
    if isinstance(points, dict):  # Python 3.11: SelectableGroups (a dict by group)
        listed = [ep for group in dict.keys(points) for ep in dict.get(points, group, ())]
    else:
        listed = list(points)
    stray = []
    for ep in listed:
        if not ep.group.startswith(_PREFIX) or ep.group in read:
            continue
        close = difflib.get_close_matches(ep.group, known, n=1, cutoff=0.6)
        dist = ep.dist.name if ep.dist is not None else None
        stray.append(
            StrayEntryPoint(ep.group, ep.name, ep.value, dist, close[0] if close else None)
        )
    return tuple(sorted(stray, key=lambda s: (s.group, s.name, s.distribution or "")))
