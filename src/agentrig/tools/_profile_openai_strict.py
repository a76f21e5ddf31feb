"""The OpenAI strict-mode target: closed objects in which every property is required.

An optional property becomes required-and-nullable on the wire; arguments are still validated
against the unprojected schema, so the relaxation never widens what a call may contain.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._jsonschema import validate_json
from ._projection import _DEFS, SchemaProfile, Site, _declared_types

__all__ = ["OPENAI_STRICT"]

# OpenAI docs, "Supported schemas" (checked 2025): strings carry pattern and format; numbers
# minimum/maximum/exclusive bounds/multipleOf; arrays minItems/maxItems.  Not carried:
# minLength/maxLength, minProperties/maxProperties, uniqueItems, default, allOf, not, and
# schema-valued additionalProperties.  Limits: 10 nesting levels, 5000 properties.
_KEYWORDS = frozenset(
    {
        "type", "enum", "const", "properties", "required", "additionalProperties", "items",
        "anyOf", "$ref", "$defs", "definitions", "pattern", "format", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "title",
        "description",
    }
)  # fmt: skip
_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)


def require_all_properties(out: dict[str, Any], site: Site) -> None:
    """Strict mode needs every property required: an optional one is made nullable instead."""
    properties = out.get("properties")
    if "object" not in _declared_types(out) or not isinstance(properties, Mapping):
        return
    properties = dict(properties)
    required = out.get("required")
    listed = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
    missing = [name for name in properties if name not in listed]
    if not missing:
        return
    for name in missing:
        sub = properties[name]
        at = (*site.path, "properties", name)
        if _accepts_null(sub, site.root):
            site.change("made required (it already accepts null)", at=at)
        else:
            properties[name] = _with_null(sub)
            site.change("made required and nullable (it was optional)", at=at)
    out["properties"] = properties
    out["required"] = listed + missing


OPENAI_STRICT = SchemaProfile(
    name="openai-strict",
    keywords=_KEYWORDS,
    formats=_FORMATS,
    unknown_keywords="reject",
    type_with_anyof="reject",
    array_items="require",
    object_properties=True,
    close_objects=True,
    require_typed_nodes=True,
    max_object_depth=10,
    max_total_properties=5000,
    completions=(require_all_properties,),
)
"""OpenAI strict mode: closed objects, every property required (optional ones nullable)."""


def _accepts_null(node: object, root: Mapping[str, Any]) -> bool:
    probe: dict[str, Any] = {"allOf": [node]}
    for key in _DEFS:
        if key in root:
            probe[key] = root[key]
    return not validate_json(None, probe)


def _with_null(node: object) -> Any:
    """``node`` widened to also accept null, in the plainest form available."""
    if not isinstance(node, Mapping):
        return node
    declared = node.get("type")
    if "enum" in node and isinstance(node["enum"], list) and isinstance(declared, str | list):
        widened = dict(node)
        widened["enum"] = [*node["enum"], None]
        widened["type"] = [declared, "null"] if isinstance(declared, str) else [*declared, "null"]
        return widened
    if "const" in node or "$ref" in node or "enum" in node:
        return {"anyOf": [dict(node), {"type": "null"}]}
    if isinstance(node.get("anyOf"), list):
        return {**node, "anyOf": [*node["anyOf"], {"type": "null"}]}
    if isinstance(declared, str):
        return {**node, "type": [declared, "null"]}
    if isinstance(declared, list):
        return {**node, "type": [*declared, "null"]}
    return {"anyOf": [dict(node), {"type": "null"}]}
