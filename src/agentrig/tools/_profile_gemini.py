"""The Gemini target: an OpenAPI 3.0 subset -- references inlined, ``null`` as a flag.

Gemini API / Vertex AI ``Schema`` reference (checked 2025): type, format, title, description,
nullable, enum (strings), items, min/maxItems, properties, required, min/maxProperties,
min/maxLength, pattern, minimum/maximum, anyOf, default, example, propertyOrdering.  No
additionalProperties, $ref/$defs, const, oneOf/allOf/not, exclusive bounds, multipleOf or
uniqueItems.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._projection import SchemaProfile, Site

__all__ = ["GEMINI"]

_KEYWORDS = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "items", "minItems",
        "maxItems", "properties", "required", "minProperties", "maxProperties", "minLength",
        "maxLength", "pattern", "minimum", "maximum", "anyOf", "default", "example",
        "propertyOrdering",
    }
)  # fmt: skip


def nullable_flag(out: dict[str, Any], site: Site) -> None:
    """Write ``null`` in a type list or a union as ``nullable: true``."""
    declared = out.get("type")
    if site.branch and _is_null_only(out):
        return  # the enclosing union turns it into nullable: true
    if declared == "null" or (isinstance(declared, list) and declared == ["null"]):
        site.reject(f"{site.where()} only accepts null, which this provider cannot express")
    if isinstance(declared, list):
        rest = [t for t in declared if t != "null"]
        if len(rest) < len(declared):
            out["nullable"] = True
        if len(rest) == 1:
            out["type"] = rest[0]
        else:
            del out["type"]
            out["anyOf"] = [{"type": t} for t in rest]
        shape = "a single type" if len(rest) == 1 else "anyOf"
        null = " with nullable: true" if len(rest) < len(declared) else ""
        site.change(f"wrote the type list as {shape}{null}")
    members = out.get("anyOf")
    if isinstance(members, list) and any(_is_null_only(m) for m in members):
        rest_members = [m for m in members if not _is_null_only(m)]
        out["nullable"] = True
        if len(rest_members) == 1 and isinstance(rest_members[0], Mapping):
            del out["anyOf"]
            single = dict(rest_members[0])
            single.update(out)
            out.clear()
            out.update(single)
        else:
            out["anyOf"] = rest_members
        site.change("wrote the null alternative as nullable: true")


def string_enums(out: dict[str, Any], site: Site) -> None:
    """Gemini enums hold strings only: ``null`` becomes the flag, other values are dropped."""
    values = out.get("enum")
    if not isinstance(values, list):
        return
    if None in values:
        out["enum"] = values = [v for v in values if v is not None]
        out["nullable"] = True
        site.change("wrote null in enum as nullable: true")
    if not all(isinstance(v, str) for v in values):
        del out["enum"]
        site.change("removed a non-string enum", constraint="enum")


def _is_null_only(node: object) -> bool:
    return isinstance(node, Mapping) and node.get("type") == "null" and "enum" not in node


GEMINI = SchemaProfile(
    name="gemini",
    keywords=_KEYWORDS,
    formats=frozenset({"enum", "date-time"}),
    unknown_keywords="strip",
    type_with_anyof="reject",
    array_items="require",
    require_typed_nodes=True,
    inline_refs=True,
    string_enums_only=True,
    rewrites=(nullable_flag, string_enums),
)
"""Gemini function declarations: OpenAPI 3.0 subset, references inlined, ``nullable`` flag."""
