"""Tool ids every provider accepts, from whatever names a server lists.

A server may list names with dots, spaces or no characters at all, names hundreds of
characters long, or the same name twice; every provider accepts only
``^[a-zA-Z0-9_-]{1,64}$`` and the catalog refuses a duplicate id.  So each name becomes
``mcp__<server>__<tool>`` with invalid characters replaced by ``_``; a name that had to
change and then collides, or that is too long, gets a short hash of the original appended.
The result depends only on the set of names listed, never on their order, so an id stays
the same across restarts.  A name listed twice is skipped (the first entry is kept).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import attrs

from agentrig.ids import ToolId, tool_id

__all__ = ["MAX_TOOL_ID", "Naming", "name_tools", "tool_name"]

MAX_TOOL_ID = 64
_INVALID = re.compile(r"[^A-Za-z0-9_-]")
_HASH = 6
#: the shortest tool part an id may keep (a server name is checked to leave this much room)
MIN_TOOL_PART = _HASH + 3


def _prefix(server: str) -> str:
    return f"mcp__{server}__"


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH]


def _hashed(base: str, name: str, room: int) -> str:
    return f"{base[: room - _HASH - 1]}_{_digest(name)}"


def tool_name(server: str, tool: str) -> ToolId | None:
    """The id of one tool name taken alone: ``mcp__<server>__<tool>``, made valid (see the
    module docs); None when the server name leaves no room for a tool part."""
    room = MAX_TOOL_ID - len(_prefix(server))
    if room < MIN_TOOL_PART:
        return None
    base = _INVALID.sub("_", tool)
    part = base if base == tool and 0 < len(base) <= room else _hashed(base, tool, room)
    return tool_id(_prefix(server) + part)


@attrs.frozen
class Naming:
    """The ids of a listing: original name -> id, and why other entries were skipped."""

    ids: dict[str, ToolId]
    skipped: tuple[str, ...]


def name_tools(server: str, names: Sequence[str]) -> Naming:
    """Ids for every name ``server`` listed (see the module docs)."""
    prefix = _prefix(server)
    room = MAX_TOOL_ID - len(prefix)
    skipped: list[str] = []
    if room < MIN_TOOL_PART:
        reason = f"the server name {server!r} leaves no room for tool names in 64 characters"
        return Naming({}, tuple(f"{name!r}: {reason}" for name in names))
    unique: list[str] = []
    seen: set[str] = set()
    for name in names:
        if name in seen:
            skipped.append(f"{name!r}: listed twice (the first entry is kept)")
            continue
        seen.add(name)
        unique.append(name)
    taken: dict[str, str] = {}  # tool part -> original name
    changed: list[str] = []
    for name in unique:
        if 0 < len(name) <= room and not _INVALID.search(name):
            taken[name] = name
        else:
            changed.append(name)
    for name in sorted(changed):
        base = _INVALID.sub("_", name)
        part = base if 0 < len(base) <= room and base not in taken else _hashed(base, name, room)
        if part in taken:
            skipped.append(f"{name!r}: its id {prefix + part} is taken by {taken[part]!r}")
            continue
        taken[part] = name
    ids = {name: tool_id(prefix + part) for part, name in taken.items()}
    return Naming({name: ids[name] for name in unique if name in ids}, tuple(skipped))
