"""Merging plugin sources: one entry per (kind, name), or a visible conflict.

Two installed distributions that register the same entry-point name in the same group are a
*conflict*: neither silently shadows the other.  The config settles one with
``[plugins.prefer] "<kind>:<name>" = "<distribution>"``; the entries it passes over stay in
the report as ``overridden``.  A later *source* (the in-memory source of tests) replaces an
earlier one's entries on purpose; that replacement is recorded, not a conflict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from agentrig.errors import Issue, PluginConflictError, did_you_mean
from agentrig.kernel._contracts import KINDS

if TYPE_CHECKING:
    from agentrig.kernel._discovery import EntrySpec

__all__ = ["Merged", "conflict_error", "merge_sources", "normalize_distribution", "prefer_issues"]

Key = tuple[str, str]


def normalize_distribution(name: str) -> str:
    """A distribution name compared the way pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@attrs.frozen(slots=True)
class Merged:
    """The result of merging sources (read-only)."""

    #: the entry each (kind, name) resolves to (for a conflict: its first candidate)
    chosen: Mapping[Key, EntrySpec]
    #: unresolved conflicts: every candidate, in discovery order
    conflicts: Mapping[Key, tuple[EntrySpec, ...]]
    #: conflicts the config settled: the candidates it passed over
    overridden: Mapping[Key, tuple[EntrySpec, ...]]
    #: entries a later source replaced on purpose (not shown as rows of their own)
    replaced: Mapping[Key, tuple[EntrySpec, ...]]


def merge_sources(
    listings: Iterable[Iterable[EntrySpec]], prefer: Mapping[str, str] = {}
) -> Merged:
    """Merge the entries of each source (in order) and settle conflicts by ``prefer``."""
    candidates: dict[Key, tuple[EntrySpec, ...]] = {}
    replaced: dict[Key, tuple[EntrySpec, ...]] = {}
    for listing in listings:
        fresh: dict[Key, list[EntrySpec]] = {}  # this source's entries by key, in order
        for entry in listing:
            fresh.setdefault((entry.kind, entry.name), []).append(entry)
        for key, found in fresh.items():
            if key in candidates:  # a later source replaces an earlier one's on purpose
                replaced[key] = (*replaced.get(key, ()), *candidates[key])
            candidates[key] = tuple(found)
    chosen: dict[Key, EntrySpec] = {key: entries[0] for key, entries in candidates.items()}
    conflicts: dict[Key, tuple[EntrySpec, ...]] = {}
    overridden: dict[Key, tuple[EntrySpec, ...]] = {}
    for key, entries in candidates.items():
        if len(entries) == 1:
            continue
        wanted = normalize_distribution(prefer.get(f"{key[0]}:{key[1]}", ""))
        fits = (e for e in entries if normalize_distribution(e.distribution or "") == wanted)
        winner = next(fits, None) if wanted else None
        if winner is None:
            conflicts[key] = entries
        else:
            chosen[key] = winner
            overridden[key] = tuple(e for e in entries if e is not winner)
    return Merged(chosen, conflicts, overridden, replaced)


def _dist(entry: EntrySpec) -> str:
    return entry.distribution or "an unnamed distribution"


def conflict_error(kind: str, name: str, entries: Sequence[EntrySpec]) -> PluginConflictError:
    """The error raised wherever a conflicting ID is used: it names every distribution."""
    described = "; ".join(e.describe() for e in entries)
    example = _dist(entries[0])
    return PluginConflictError(
        f"{kind} plugin {name!r} is registered by {len(entries)} distributions "
        f"({described}); none shadows the other -- choose one in the config: "
        f'[plugins.prefer] "{kind}:{name}" = "{example}" (or uninstall one)',
        kind=kind,
        name=name,
        distributions=[_dist(e) for e in entries],
    )


def prefer_issues(prefer: Mapping[str, str], entries: Iterable[EntrySpec]) -> list[Issue]:
    """Problems of ``[plugins.prefer]``: a key or distribution that chooses nothing."""
    if not prefer:
        return []
    by_key: dict[Key, list[EntrySpec]] = {}
    for entry in entries:
        by_key.setdefault((entry.kind, entry.name), []).append(entry)
    issues: list[Issue] = []
    for key, wanted in prefer.items():
        problem = _prefer_problem(key, wanted, by_key)
        if problem is not None:
            issues.append(Issue("config.plugin_prefer", problem, ("plugins", "prefer", key)))
    return issues


def _prefer_problem(key: str, wanted: str, by_key: Mapping[Key, list[EntrySpec]]) -> str | None:
    kind, sep, name = key.partition(":")
    if not sep or kind not in KINDS or not name:
        hint = did_you_mean(kind, KINDS, show=lambda k: f"{k}:{name}") if sep and name else ""
        return f"expected '<kind>:<name>' with a kind among {', '.join(KINDS)}, got {key!r}{hint}"
    found = by_key.get((kind, name), [])
    if not found:
        known = sorted({n for (k, n) in by_key if k == kind})
        hint = did_you_mean(name, known, show=lambda n: f"{kind}:{n}")
        return f"no installed distribution registers {kind} plugin {name!r}{hint}"
    dists = [e.distribution for e in found if e.distribution is not None]
    if normalize_distribution(wanted) in {normalize_distribution(d) for d in dists}:
        return None
    return (
        f"distribution {wanted!r} does not register {kind} plugin {name!r} "
        f"(registered by: {', '.join(dists) or 'no named distribution'})"
        f"{did_you_mean(wanted, dists)}"
    )
