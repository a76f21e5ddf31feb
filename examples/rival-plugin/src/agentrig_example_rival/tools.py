"""A tool (entry point ``agentrig.tools: greet``) whose name another distribution also uses."""

from __future__ import annotations

from agentrig.tools import tool


@tool(risk="inspect")
def greet(name: str, excited: bool = False) -> str:
    """Greet someone by name, formally."""
    return f"Good day, {name}{'!' if excited else '.'}"
