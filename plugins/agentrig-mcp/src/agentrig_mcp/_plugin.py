"""Where agentrig-mcp meets the runtime: its composition step and its command.

The one module that knows how the plugin is wired in: the ``agentrig.plugins`` entry point
``mcp`` is :data:`PLUGIN`, whose ``compose`` step (phase ``tools``) reads the plugin's config
sections and registers the MCP tools (:mod:`agentrig_mcp._compose`), and whose
``register_commands`` adds ``agentrig mcp serve`` (:mod:`agentrig_mcp._cli`).  Importing it
is cheap: the MCP SDK loads only when a runtime composes or the command runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, TypeVar, final

from agentrig.ids import tool_id
from agentrig.plugin import TOOLS, TOOLSETS, Commands, Composition, compose_step, hookimpl
from agentrig_mcp import _cli

if TYPE_CHECKING:
    from agentrig.plugin import Runtime, Tool
    from agentrig_mcp._client import McpClient
    from agentrig_mcp._config import McpServers, McpSettings

__all__ = [
    "PLUGIN",
    "McpPlugin",
    "admit_tools",
    "config_sections",
    "provide_client",
    "register_toolset",
]

_T = TypeVar("_T", bound="Tool")

#: the config tables this plugin owns (its agentrig.config_sections entry points)
_SECTIONS = frozenset({"mcp_servers", "mcp"})


def config_sections(rt: Runtime) -> tuple[McpServers | None, McpSettings | None]:
    """The validated ``[mcp_servers]`` and ``[mcp]`` tables (None when absent)."""
    from agentrig_mcp._config import McpServers, McpSettings

    return rt.config_section("mcp_servers", McpServers), rt.config_section("mcp", McpSettings)


def _mentions_mcp(rt: Runtime) -> bool:
    from agentrig.agent import agent_configs

    agents = agent_configs(rt.loaded).values()
    return any(name.startswith("mcp__") for agent in agents for name in agent.tools) or any(
        name.startswith("mcp__") for name in rt.config.tools
    )


def provide_client(rt: Runtime, client: McpClient) -> None:
    """Make ``client`` the runtime's ``mcp`` service (its servers stop when the runtime closes)
    and keep agents' MCP tools current between turns (``tools/list_changed``)."""
    from agentrig_mcp._refresh import ToolRefresher
    from agentrig_mcp._service import MCP

    rt.services.provide(MCP, client, source="agentrig-mcp")
    rt.on_close("mcp", client.aclose)
    rt.add_plugin("mcp-refresh", ToolRefresher(client, partial(admit_tools, rt)))


def _source(toolset: str) -> str:
    return f"mcp:{toolset}"


def admit_tools(rt: Runtime, toolset: str, tools: Sequence[_T]) -> list[_T]:
    """The tools of ``toolset`` the runtime accepts, at start-up and when a server's list
    changes later alike (one gate, so a tool cannot slip in after start-up): one the
    registration scanner refuses (unless ``[skills] scan_tools = false``), or whose id another
    source registered, is left out with a warning -- a server's tool cannot stop the runtime."""
    from agentrig.diagnostics import get_logger
    from agentrig.skills import registration_of_tool, scan

    skills = rt.loaded.sections.get("skills")
    scanning = not (isinstance(skills, Mapping) and skills.get("scan_tools") is False)
    registry = rt.registry(TOOLS)
    kept: list[_T] = []
    for tool in tools:
        if registry.has(tool.id) and registry.source_of(tool.id) != _source(toolset):
            reason = "its id is already registered"
        elif (
            scanning and not (verdict := scan(registration_of_tool(tool, kind="mcp_tool"))).allowed
        ):
            reason = f"refused by the registration scanner: {verdict.describe()}"
        else:
            kept.append(tool)
            continue
        get_logger("mcp").warning("MCP tool %s left out: %s", tool.id, reason)
    return kept


def register_toolset(rt: Runtime, name: str, tools: Sequence[Tool]) -> None:
    """Register ``tools`` in the runtime's catalog, and ``name`` as the toolset of them all
    (a tool the composition would refuse is left out with a warning)."""
    registry = rt.registry(TOOLS)
    tools = admit_tools(rt, name, tools)
    for tool in tools:
        registry.register(tool, id=tool.id, source=_source(name))
    toolset = tuple(t.id for t in tools)
    rt.registry(TOOLSETS).register(toolset, id=tool_id(name), source="mcp")


@final
class McpPlugin:
    """The ``agentrig.plugins`` entry point ``mcp``: one composition step, one command."""

    @compose_step("tools")
    async def compose(self, payload: Composition) -> None:
        rt = payload.runtime
        if not _SECTIONS & rt.loaded.sections.keys() and not _mentions_mcp(rt):
            return  # nothing to do: do not even import the config models or the MCP SDK
        servers, settings = config_sections(rt)
        from agentrig_mcp._compose import compose_mcp

        await compose_mcp(rt, servers, settings)

    @hookimpl
    def register_commands(self, payload: Commands) -> None:
        parser = payload.add(
            "mcp",
            help="serve this composition's tools and agents over MCP",
            description="MCP (Model Context Protocol) commands.",
            handler=_cli.usage,
        )
        _cli.add_subcommands(parser)


PLUGIN = McpPlugin()
