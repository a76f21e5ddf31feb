"""The plugin report: one row per discovered entry, with its status and error.

The kernel's index remembers each entry's load state (loaded, failed and why, in conflict,
overridden by ``[plugins.prefer]``); turning that state into rows is presentation, read by
``agentrig plugins`` (a table, or ``--json``), ``doctor`` and the warnings of ``run``.
Imported on first use: ``agentrig --help`` does not need attrs.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Literal, final

import attrs

from agentrig.errors import AgentrigError

if TYPE_CHECKING:
    from agentrig.kernel import EntrySpec, PluginIndex

__all__ = ["PluginRow", "PluginStatus", "plugin_report"]

PluginStatus = Literal["loaded", "available", "disabled", "failed", "conflict", "overridden"]
"""``conflict``: another distribution registers the same kind and name and the config does
not say which wins; ``overridden``: ``[plugins.prefer]`` chose another distribution's entry."""


@final
@attrs.frozen(slots=True)
class PluginRow:
    """One line of the plugin report."""

    kind: str
    id: str
    distribution: str | None
    version: str | None
    group: str
    value: str
    status: PluginStatus
    error: str | None = None
    replaces: str | None = None
    #: the other entries registering this kind and name (conflict, overridden)
    conflicts: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def plugin_report(index: PluginIndex, *, check: bool = False) -> tuple[PluginRow, ...]:
    """One row per discovered entry, sorted by kind then id: every candidate of a conflict;
    for a conflict the config settled, the winner (``replaces`` names the others) and the
    others (``overridden``).  ``check`` first loads every enabled entry, so each status is
    real (a failure is remembered by the index and shown as the row's error)."""
    if check:
        for entry in index.entries():
            if not index.is_disabled(entry.kind, entry.name):
                with contextlib.suppress(AgentrigError):  # its row says why it failed
                    index.load(entry.kind, entry.name)
    merged = index.merged()
    rows = []
    for key, entry in sorted(merged.chosen.items()):
        candidates = merged.conflicts.get(key)
        if candidates is not None:
            error = index.conflict_error(*key).message
            status: PluginStatus = "disabled" if index.is_disabled(*key) else "conflict"
            for candidate in candidates:
                others = tuple(c.describe() for c in candidates if c is not candidate)
                rows.append(_row(candidate, status, error=error, conflicts=others))
            continue
        failure = index.failure(*key)
        losers = merged.overridden.get(key, ())
        replaced = (*merged.replaced.get(key, ()), *losers)
        rows.append(
            _row(
                entry,
                _status(index, entry, failed=failure is not None),
                error=failure.rule if failure else None,
                replaces="; ".join(e.describe() for e in replaced) or None,
                conflicts=tuple(e.describe() for e in losers),
            )
        )
        rows.extend(_row(loser, "overridden", conflicts=(entry.describe(),)) for loser in losers)
    return tuple(rows)


def _status(index: PluginIndex, entry: EntrySpec, *, failed: bool) -> PluginStatus:
    if failed:
        return "failed"
    if index.is_disabled(entry.kind, entry.name):
        return "disabled"
    return "loaded" if index.is_loaded(entry.kind, entry.name) else "available"


def _row(
    entry: EntrySpec,
    status: PluginStatus,
    *,
    error: str | None = None,
    replaces: str | None = None,
    conflicts: tuple[str, ...] = (),
) -> PluginRow:
    where = (entry.kind, entry.name, entry.distribution, entry.version, entry.group, entry.value)
    return PluginRow(*where, status, error, replaces, conflicts)
