"""The OpenAI target without strict mode: full JSON Schema, with a few declarations filled in."""

from __future__ import annotations

from ._projection import SchemaProfile

__all__ = ["OPENAI"]

OPENAI = SchemaProfile(name="openai", array_items="declare", object_properties=True)
"""OpenAI function calling without strict mode: arrays declare items, objects properties."""
