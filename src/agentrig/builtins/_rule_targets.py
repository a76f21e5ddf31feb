"""A deny or ask rule must name a tool: one that names nothing is a configuration error.

``deny = ["shuot"]`` when the tool is ``shout`` protects nothing, silently; like every other
unknown key it is refused at composition, with the closest tool name and the rule's key
path.  A rule is checked by its tool part (``Bash`` of ``Bash(git push:*)``): a literal name
must be a tool the composition knows (composed, named by an agent, or installed as a tools
plugin) or an MCP server of one (``mcp__github``); a tool-name glob must cover one of them.
Claude Code's own tool names (``Bash``, ``Read``, ``WebFetch`` ...) are a known vocabulary,
not a typo: settings imported from Claude Code name them whether or not this composition
has such a tool.  An allow rule that names nothing grants nothing (every call of the tool
it meant is still asked about), so it is not refused.  The check runs when the config
declares its agents (``[agents.*]``): a runtime whose agents are created in code
(``rt.agents.create(tools=[fn])``) gets their tools after composition, so its rules are
not checked against them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentrig.errors import ConfigError, Issue, did_you_mean
from agentrig.permissions import PermissionRules

__all__ = ["CLAUDE_CODE_TOOLS", "check_rule_targets"]

CLAUDE_CODE_TOOLS: frozenset[str] = frozenset(
    {"Bash", "Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "NotebookRead", "Glob"}
    | {"Grep", "LS", "WebFetch", "WebSearch", "Task", "TodoWrite", "BashOutput", "KillShell"}
    | {"ExitPlanMode", "SlashCommand", "Skill", "AskUserQuestion", "Agent"}
)
"""Claude Code's built-in tool names: rules naming them are kept when no such tool is
composed (a rule imported from Claude Code, or one written for a tool not yet added)."""


def check_rule_targets(
    rules: PermissionRules, tool_ids: Iterable[str], *, source: str | None
) -> None:
    """Raise :class:`ConfigError` for every deny or ask rule of ``[permissions]`` that names
    none of ``tool_ids``."""
    known: Sequence[str] = sorted(tool_ids)
    issues: list[Issue] = []
    for list_name, listed in (("deny", rules.deny), ("ask", rules.ask)):
        for index, rule in enumerate(listed):
            if rule.tool in CLAUDE_CODE_TOOLS:
                continue
            if any(rule.names_tool(tid, loose=True) for tid in known):
                continue
            hint = did_you_mean(rule.tool, known) or f" (known tools: {', '.join(known) or 'none'})"
            issues.append(
                Issue(
                    "config.unknown_tool",
                    f"permission rule {rule.text!r} names no tool of this composition{hint}",
                    ("permissions", list_name, index),
                )
            )
    if issues:
        raise ConfigError(issues, source=source)
