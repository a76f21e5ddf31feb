"""A lean reader of the installed ``agentrig.*`` entry points, read once per process state.

``importlib.metadata.entry_points()`` parses every installed distribution's entry points and
METADATA; the first ``open_runtime`` of a process paid that for every distribution.  This
reader skips the files without an ``[agentrig`` section and parses only the ``agentrig.*``
sections, with ``importlib.metadata``'s own rules.  A distribution shadowed by an earlier one
of the same name is left out as ``entry_points()`` leaves it; the entries are real
``EntryPoint`` objects, so loading is unchanged.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib.metadata as metadata
import os
import sys
from collections.abc import Iterator
from typing import NamedTuple, Protocol

from agentrig._plugin_env import CORE_DISTRIBUTION
from agentrig.kernel._merge import normalize_distribution

__all__ = [
    "CONTRACTS_GROUP",
    "FORMATS_GROUP",
    "IMPORTERS_GROUP",
    "FoundEntryPoint",
    "agentrig_entry_points",
    "core_entry_points",
    "installation_state",
    "one_installation_state",
    "parse_agentrig_sections",
]

PREFIX = "agentrig."
#: Where the core distribution hands the kernel the contract checks of the layers above it.
CONTRACTS_GROUP = "agentrig.contracts"
#: Where the core distribution hands the kernel the readers of another program's config files,
#: each named after the top-level table it reads.
IMPORTERS_GROUP = "agentrig.config_importers"
#: Where it hands the kernel the readers of config files in formats other than TOML, each named
#: after the file suffix it reads.
FORMATS_GROUP = "agentrig.config_formats"


class FoundEntryPoint(NamedTuple):
    """One installed entry point of an ``agentrig.*`` group and its distribution."""

    entry: metadata.EntryPoint
    distribution: str | None
    version: str | None


def parse_agentrig_sections(text: str) -> list[tuple[str, str, str]]:
    """``(group, name, value)`` of the ``agentrig.*`` sections of an entry_points.txt."""
    found: list[tuple[str, str, str]] = []
    group: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line.strip("[]")
            continue
        if group is None or not group.startswith(PREFIX):
            continue
        name, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"entry point line {line!r} in [{group}] has no '='")
        found.append((group, name.strip(), value.strip()))
    return found


# group -> entries, per installation state (the path entries and their modification times,
# which change whenever pip installs or removes a distribution there).  Editing an installed
# distribution's entry_points.txt in place is not noticed -- reinstall it.
_State = tuple[tuple[str, int], ...]  # each sys.path entry and its modification time
_READ: dict[_State, dict[str, tuple[FoundEntryPoint, ...]]] = {}


def installation_state() -> _State:
    """The state now, or the one :func:`one_installation_state` took for its open block."""
    taken = _TAKEN.get()
    return taken[0] if taken and taken[0] is not None else _stat_path()


def _stat_path() -> _State:
    state: list[tuple[str, int]] = []
    for entry in sys.path:
        try:
            state.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            state.append((entry, -1))
    return tuple(state)


# a cell, not the state: a task started inside the block copies the context, and emptying the
# cell when the block ends reaches that copy too
_TAKEN: contextvars.ContextVar[list[_State | None] | None] = contextvars.ContextVar(
    "agentrig_installation_state", default=None
)


@contextlib.contextmanager
def one_installation_state(taken: _State | None = None) -> Iterator[_State]:
    """Within the block the installation is looked at once (or ``taken``: the state a block
    yielded): an open reads the entry points in several places; a look stats ``sys.path``."""
    state = _stat_path() if taken is None else taken
    cell: list[_State | None] = [state]
    token = _TAKEN.set(cell)
    try:
        yield state
    finally:
        cell[0] = None
        _TAKEN.reset(token)


def agentrig_entry_points(state: _State | None = None) -> dict[str, tuple[FoundEntryPoint, ...]]:
    """Every installed ``agentrig.*`` entry point, by group, in ``sys.path`` order."""
    key = installation_state() if state is None else state
    groups = _READ.get(key)
    if groups is None:
        groups = _READ[key] = _read()
    return groups


def _read() -> dict[str, tuple[FoundEntryPoint, ...]]:
    by_group: dict[str, list[FoundEntryPoint]] = {}
    seen: set[str] = set()
    for dist in metadata.distributions():
        text = dist.read_text("entry_points.txt")
        if not text or "[" + PREFIX not in text:
            continue
        pairs = parse_agentrig_sections(text)
        if not pairs:
            continue
        about = dist.metadata  # parsed once for both fields (dist.name/.version parse twice)
        name: str | None = about["Name"]
        version: str | None = about["Version"]
        if name is not None:
            key = normalize_distribution(name)
            if key in seen or not _first_of_its_name(dist, name, version):
                continue  # shadowed, as entry_points() leaves it out
            seen.add(key)
        for group, entry_name, value in pairs:
            entry = metadata.EntryPoint(name=entry_name, value=value, group=group)
            by_group.setdefault(group, []).append(FoundEntryPoint(entry, name, version))
    return {group: tuple(found) for group, found in by_group.items()}


def core_entry_points(group: str) -> dict[str, metadata.EntryPoint]:
    """The core distribution's own entry points of ``group``, by name.

    The kernel imports nothing above it; what it needs from a higher layer of the core (a
    contract check, a config table, an importer) reaches it this way, as a plugin's would.
    """
    found = agentrig_entry_points().get(group, ())
    return {f.entry.name: f.entry for f in found if f.distribution == CORE_DISTRIBUTION}


class _Located(Protocol):
    """A distribution as ``importlib.metadata.distributions()`` yields it: the standard
    library's, or the ``importlib_metadata`` backport's once a library imported it (its
    finder joins ``sys.meta_path``; OpenTelemetry's API 1.30 does)."""

    def locate_file(self, path: str) -> object: ...


def _first_of_its_name(dist: _Located, name: str, version: str | None) -> bool:
    """Whether ``dist`` is the one ``importlib.metadata`` finds first for ``name``.

    Only distributions with ``agentrig.*`` sections are asked (one lookup each), so a
    distribution of the same name earlier on ``sys.path`` -- with or without such sections --
    shadows them the way ``entry_points()`` does, without reading every METADATA.
    """
    try:
        first = metadata.distribution(name)
    except metadata.PackageNotFoundError:  # pragma: no cover - found just now
        return True
    return first.locate_file("") == dist.locate_file("") and first.version == version
