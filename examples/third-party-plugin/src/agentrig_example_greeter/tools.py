"""A tool (entry point ``agentrig.tools: greet`` -- the entry-point name is the tool's ID)."""

from __future__ import annotations

from agentrig.tools import tool


@tool(risk="inspect")
def greet(name: str, excited: bool = False) -> str:
    """Greet someone by name."""
    return f"Hello, {name}{'!' if excited else '.'}"
