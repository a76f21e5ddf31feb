"""``tools/list_changed`` between turns: an agent's MCP tools are listed again before its next
turn starts, when a server it uses said its list changed.

A listener the composition step adds only to runtimes that have MCP servers (so a runtime
without them pays nothing).  It refreshes the references the agent's config makes:
``mcp__<server>`` (the whole toolset: tools may appear and disappear) and
``mcp__<server>__<tool>`` (that tool's new definition; gone if the server dropped it).
A new listing passes the gate start-up's did (:func:`agentrig_mcp._plugin.admit_tools`):
names made valid and distinct, descriptions and schemas capped, the registration scanner.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, final

from agentrig.agent import Agent
from agentrig.kernel import hookimpl
from agentrig.lifecycle import PreStep, PreStepDecision
from agentrig_mcp._client import McpClient
from agentrig_mcp._tools import McpTool

__all__ = ["ToolRefresher"]

_PREFIX = "mcp__"

#: (toolset, listed tools) -> the tools the runtime accepts
Admit = Callable[[str, Sequence[McpTool]], list[McpTool]]


def _references(agent: Agent) -> list[tuple[str, str]]:
    """(server, reference) for each MCP name in the agent's configured tools."""
    found: list[tuple[str, str]] = []
    for name in agent.config.tools:
        if name.startswith(_PREFIX):
            found.append((name[len(_PREFIX) :].split("__", 1)[0], name))
    return found


@final
class ToolRefresher:
    """Listener: at the first step of each turn, bring an agent's MCP tools up to date."""

    def __init__(self, client: McpClient, admit: Admit) -> None:
        self.client = client
        self._admit = admit
        self._seen: dict[tuple[str, str], int] = {}  # (agent id, server) -> listed version

    def _outdated(self, agent: Agent, servers: set[str]) -> set[str]:
        client = self.client
        return {
            s
            for s in servers
            if client.is_stale(s) or self._seen.get((agent.id, s), 1) != client.version(s)
        }

    @hookimpl
    async def pre_step(
        self, payload: PreStep, next: Callable[[PreStep], Awaitable[PreStepDecision]]
    ) -> PreStepDecision:
        agent: Any = payload.agent
        if payload.step == 1 and isinstance(agent, Agent):
            references = _references(agent)
            if references:
                outdated = self._outdated(agent, {server for server, _ in references})
                if outdated:
                    await self._refresh(agent, references, outdated)
        return await next(payload)

    async def _refresh(
        self, agent: Agent, references: list[tuple[str, str]], outdated: set[str]
    ) -> None:
        kept = [
            t
            for t in agent.all_tools()
            if not (isinstance(t, McpTool) and t.connection.name in outdated)
        ]
        fresh: dict[str, McpTool] = {}
        for server, name in references:
            if server not in outdated:
                continue
            listed = self._admit(f"{_PREFIX}{server}", await self.client.tools(server))
            whole = name == f"{_PREFIX}{server}"
            fresh.update((t.id, t) for t in listed if whole or t.id == name)
            self._seen[(agent.id, server)] = self.client.version(server)
        agent.replace_tools([*kept, *fresh.values()])
