"""The built-in ``tool_search`` tool: find deferred tools and load them for the next round.

It searches the agent's withheld tools by name and description; the matches are loaded,
so the next request offers their schemas.  Loading never grants anything: the permission
gate still decides every call.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentrig.tools import PermissionArg, RiskClass, ToolContext
from agentrig.tools.schema import PydanticSchemaAdapter

__all__ = ["ToolSearch", "ToolSearchInput", "tool_search"]


class ToolSearchInput(BaseModel):
    """Arguments of ``tool_search``."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="Words describing the capability you need.")
    limit: int = Field(default=5, ge=1, le=20, description="How many tools to load at most.")


def _score(query_words: list[str], name: str, description: str) -> int:
    haystack = f"{name} {description}".lower()
    score = 0
    for word in query_words:
        if word in name.lower():
            score += 3
        if word in haystack:
            score += 1
    return score


class ToolSearch:
    """Searches and loads the agent's deferred tools."""

    id = "tool_search"
    description = (
        "Search the tools that are available but not loaded yet, by what they do. "
        "Matching tools become callable from your next step on."
    )
    risk: RiskClass | None = "inspect"
    permission_arg: PermissionArg | None = None
    deferred = False

    def __init__(self) -> None:
        self._schema = PydanticSchemaAdapter(ToolSearchInput)

    @property
    def input_schema(self) -> PydanticSchemaAdapter[ToolSearchInput]:
        return self._schema

    def authorize(self, input: Any, ctx: ToolContext) -> None:
        return None

    async def execute(self, input: ToolSearchInput, ctx: ToolContext) -> str:
        agent = ctx.agent
        withheld = agent.withheld_tools() if agent is not None else []
        words = [w for w in re.split(r"\W+", input.query.lower()) if w]
        ranked = sorted(
            ((s, t) for t in withheld if (s := _score(words, t.id, t.description)) > 0),
            key=lambda item: (-item[0], item[1].id),
        )[: input.limit]
        if not ranked:
            names = ", ".join(sorted(t.id for t in withheld)) or "none"
            return f"No deferred tool matches {input.query!r}. Deferred tools: {names}."
        agent.load_tools([t.id for _, t in ranked])
        lines = [f"- {t.id}: {t.description}" for _, t in ranked]
        return "Loaded these tools; they can be called from the next step:\n" + "\n".join(lines)

    def parse_output(self, value: Any) -> Any:
        return value


tool_search = ToolSearch()
"""Entry point ``tool_search`` of ``agentrig.tools``."""
