"""Tool deferral: which tool schemas go on a request, and which wait for ``tool_search``.

Offering every schema on every request does not scale with the number of tools, so a tool
is *resident* (always offered) or *deferred* (withheld from the request until the model loads
it through the ``tool_search`` tool).  Withheld schemas are not on the wire at all, so both
request bytes and context tokens fall, for every provider alike.

Deferral engages automatically past a threshold -- more deferrable tools than
``max_resident``, or their estimated schema tokens above ``schema_share`` of the model's
context window, and only when the agent has the search tool (without it every tool stays
offered) -- and an explicit setting always wins (``mode = "on"/"off"``, or a tool's own
``deferred = true/false``).  Two invariants of explicit settings are refused, never
repaired: at least one tool stays resident, and whenever a schema is withheld the search
tool is offered.  Deferral
never widens authority: permissions decide by tool name and ignore residency.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import attrs

from agentrig.errors import AgentrigError
from agentrig.tools._tool import Tool

__all__ = [
    "SEARCH_TOOL_ID",
    "DeferralError",
    "DeferralPolicy",
    "OfferPlan",
    "estimate_schema_tokens",
    "plan_offer",
]

SEARCH_TOOL_ID = "tool_search"


class DeferralError(AgentrigError):
    """A deferral configuration that would leave tools unreachable (refused, not repaired)."""

    code = "tools.deferral"
    category = "user"


@attrs.frozen(slots=True)
class DeferralPolicy:
    """When to defer: ``auto`` (threshold), ``on`` (all deferrable tools) or ``off``."""

    mode: Literal["auto", "on", "off"] = "auto"
    max_resident: int = 20
    schema_share: float = 0.10


@attrs.frozen(slots=True)
class OfferPlan:
    """The tools a request offers and those withheld from it."""

    offered: tuple[Tool, ...]
    withheld: tuple[Tool, ...]
    engaged: bool


def estimate_schema_tokens(tools: Iterable[Tool]) -> int:
    """A coarse token estimate (~4 characters per token) of the tools' definitions."""
    chars = 0
    for tool in tools:
        chars += len(tool.id) + len(tool.description) + _schema_chars(tool.input_schema.json_schema)
    return chars // 4


# id(schema) -> (schema, its compact JSON length): every new agent plans its offer, and the
# JSON of the same schema object is the same (entries hold their schema, so an id is not
# reused while cached; bounded, cleared when full)
_SCHEMA_CHARS: dict[int, tuple[object, int]] = {}
_SCHEMA_CHARS_MAX = 4096


def _schema_chars(schema: Any) -> int:
    cached = _SCHEMA_CHARS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    chars = len(json.dumps(dict(schema), separators=(",", ":")))
    if len(_SCHEMA_CHARS) >= _SCHEMA_CHARS_MAX:
        _SCHEMA_CHARS.clear()
    _SCHEMA_CHARS[id(schema)] = (schema, chars)
    return chars


def _explicit(tool: Tool, overrides: dict[str, bool]) -> bool | None:
    if tool.id in overrides:
        return overrides[tool.id]
    value: Any = getattr(tool, "deferred", None)
    return value if isinstance(value, bool) else None


def plan_offer(
    tools: Sequence[Tool],
    *,
    loaded: Iterable[str] = (),
    policy: DeferralPolicy = DeferralPolicy(),
    context_window: int = 200_000,
    overrides: dict[str, bool] | None = None,
) -> OfferPlan:
    """Split ``tools`` into offered and withheld for the next request (pure, deterministic).

    ``loaded`` are tools the model already found through ``tool_search``; ``overrides`` are
    per-tool ``deferred`` settings from the config.
    """
    explicit = overrides or {}
    loaded_ids = set(loaded)
    search = [t for t in tools if t.id == SEARCH_TOOL_ID]
    others = [t for t in tools if t.id != SEARCH_TOOL_ID]
    candidates = [t for t in others if _explicit(t, explicit) is not False]
    if policy.mode == "on":
        engaged = True
    elif policy.mode == "off":
        engaged = False
    else:
        # the threshold is a preference, never a failure: without a search tool to load
        # them, every tool stays offered (a server's tool count must not stop an agent)
        engaged = bool(search) and (
            len(candidates) > policy.max_resident
            or estimate_schema_tokens(candidates) > policy.schema_share * context_window
        )
    withheld = tuple(
        t
        for t in others
        if t.id not in loaded_ids
        and (_explicit(t, explicit) is True or (engaged and _explicit(t, explicit) is None))
    )
    withheld_ids = {t.id for t in withheld}
    offered = tuple(t for t in tools if t.id not in withheld_ids)
    if withheld:
        if not search:
            names = ", ".join(sorted(withheld_ids)[:5]) + ("..." if len(withheld) > 5 else "")
            raise DeferralError(
                f"{len(withheld)} tool schema(s) would be withheld ({names}) but the agent has "
                f"no {SEARCH_TOOL_ID!r} tool to load them; add {SEARCH_TOOL_ID!r} to the agent's "
                "tools or set deferral off"
            )
        if not [t for t in offered if t.id != SEARCH_TOOL_ID] and not loaded_ids:
            resident = [t for t in others if _explicit(t, explicit) is False]
            if not resident:
                raise DeferralError(
                    "every tool is deferred, so the model would have nothing to call but the "
                    "search; mark at least one tool resident (deferred = false)"
                )
    return OfferPlan(offered=offered, withheld=withheld, engaged=engaged or bool(withheld))
