"""The core distribution's own entry points that hand a layer's implementation down or across.

A package may not import what sits above it (the kernel nothing above it, the contracts not
the built-ins) and only the built-ins import :mod:`agentrig.host` (DESIGN §3).  Where a lower
package needs such an implementation as its default -- the permission evaluator the host's
path canonicalisation, the journal and the loop the host's owner-only store -- the core
distribution binds it through its own ``agentrig.seams`` entry points, as its built-in
plugins are bound: :func:`core_seam` loads one by name, once per process.  The layers above
the kernel that fire hooks hand their spec modules down the same way, as seams named
``*_hookspecs`` (:func:`seam_names` lists them for the kernel's dispatcher).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol, cast

from agentrig.errors import PluginError

__all__ = [
    "SEAMS_GROUP",
    "OwnerOnlyFiles",
    "SeamEntry",
    "core_seam",
    "owner_only_files",
    "seam_entry",
    "seam_names",
]

SEAMS_GROUP = "agentrig.seams"
"""The core distribution's own entry points that hand a higher layer's function down."""

# name -> the loaded object: the core distribution's own entry points do not change while the
# process runs (a reinstall of agentrig itself needs a new process anyway)
_LOADED: dict[str, Any] = {}


def core_seam(name: str) -> Any:
    """The object agentrig's own ``agentrig.seams`` entry point ``name`` names, loaded once.

    A missing entry point is a broken install: :class:`~agentrig.errors.PluginError`, never
    a silent fallback.
    """
    try:
        return _LOADED[name]
    except KeyError:
        pass
    entry = seam_entry(name)
    if entry is None:
        raise PluginError(
            f"agentrig's own entry point {SEAMS_GROUP}:{name} is missing (reinstall agentrig)"
        )
    loaded = _LOADED[name] = entry.load()
    return loaded


class SeamEntry(Protocol):
    """An entry point as ``importlib.metadata`` gives it: the standard library's, or the
    ``importlib_metadata`` backport's once a library imported it (its finder joins
    ``sys.meta_path``; OpenTelemetry's API does)."""

    def load(self) -> Any: ...


def seam_entry(name: str) -> SeamEntry | None:
    """agentrig's own ``agentrig.seams`` entry point ``name``, not loaded (None: missing)."""
    try:
        entries = metadata.distribution("agentrig").entry_points
    except metadata.PackageNotFoundError:
        return None
    found = [e for e in entries if e.group == SEAMS_GROUP and e.name == name]
    return found[0] if found else None


def seam_names() -> tuple[str, ...]:
    """The names of agentrig's own ``agentrig.seams`` entry points, as declared (none: not
    installed)."""
    try:
        entries = metadata.distribution("agentrig").entry_points
    except metadata.PackageNotFoundError:
        return ()
    return tuple(e.name for e in entries if e.group == SEAMS_GROUP)


class OwnerOnlyFiles(Protocol):
    """What the journal and the loop use of the host's owner-only store (0700/0600, verified)."""

    def path(self, rel: str) -> Path: ...

    def exists(self, rel: str) -> bool: ...

    def write_bytes(self, rel: str, data: bytes) -> Path: ...

    def open_append(self, rel: str) -> io.BufferedWriter: ...


def owner_only_files(root: Path) -> OwnerOnlyFiles:
    """The host's owner-only store rooted at ``root`` (the seam ``owner_only_store``)."""
    store = cast("Callable[[Path], OwnerOnlyFiles]", core_seam("owner_only_store"))
    return store(root)
