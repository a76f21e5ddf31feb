"""The Anthropic target: standard JSON Schema with an object root, taken as written."""

from __future__ import annotations

from ._projection import SchemaProfile

__all__ = ["ANTHROPIC"]

ANTHROPIC = SchemaProfile(name="anthropic")
"""Standard JSON Schema with an object root: adopted unless it must be refused."""
