"""What the permission evaluator reads about a tool, and how it is read from the tool.

It lives with the tools so a tool can hold its own: a :class:`FunctionTool` reads it once
from its declaration, which never changes, instead of the gate rebuilding it on every call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, get_args

import attrs

from agentrig.errors import AgentrigError
from agentrig.tools._tool import PermissionArg, RiskClass

if TYPE_CHECKING:
    from agentrig.tools._tool import Tool

__all__ = ["ToolPermissions", "read_permissions"]


def _names(names: Iterable[str]) -> frozenset[str]:
    return frozenset(names)


_RISKS = frozenset(get_args(RiskClass))


def _known_risk(instance: ToolPermissions, _: object, risk: object) -> None:
    # a risk class the evaluator does not know would be decided as some other class: refuse it
    if risk is not None and risk not in _RISKS:
        raise AgentrigError(
            f"tool {instance.tool_id!r}: unknown risk class {risk!r} "
            f"(one of {', '.join(sorted(_RISKS))}, or None for undeclared)",
            code="permissions.invalid_risk",
            category="user",
        )


@attrs.frozen(slots=True)
class ToolPermissions:
    """What the evaluator needs to know about a tool, as its own package declared it.

    ``parameters`` names every declared input parameter; it decides whether ``name:`` at the
    start of a rule pattern is a parameter rule (``Tool(name:pattern)``) or part of a
    pattern over the permission argument.  ``rule_names`` are other tool names whose rules
    also apply to this tool, read over its own permission argument -- Claude Code's families:
    ``Grep`` and ``Glob`` follow ``Read(...)`` rules, ``Write`` follows ``Edit(...)`` rules.
    """

    tool_id: str
    risk: RiskClass | None = attrs.field(default=None, validator=_known_risk)
    arg: PermissionArg | None = None
    parameters: frozenset[str] = attrs.field(default=frozenset(), converter=_names)
    rule_names: frozenset[str] = attrs.field(default=frozenset(), converter=_names)


def read_permissions(tool: Tool) -> ToolPermissions:
    """``tool``'s :class:`ToolPermissions`, read from its declaration as it is now."""
    schema = tool.input_schema.json_schema
    properties = schema.get("properties", {})
    return ToolPermissions(
        tool_id=tool.id,
        risk=tool.risk,
        arg=tool.permission_arg,
        parameters=frozenset(properties) if isinstance(properties, dict) else frozenset(),
        # tool names whose rules also apply (Claude Code's families: Grep follows Read rules)
        rule_names=frozenset(getattr(tool, "permission_rule_names", ())),
    )
