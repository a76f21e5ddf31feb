"""Projection of tool schemas per provider profile: outcome, identity, changes, notes, refusals."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from agentrig.tools.schema import (
    ANTHROPIC,
    GEMINI,
    OPENAI,
    OPENAI_STRICT,
    Adapted,
    Adopted,
    Change,
    Rejected,
    SchemaProfile,
    Site,
    describe_with_note,
    project_schema,
    tool_input_schema,
    validate_json,
)

PROFILES = {"anthropic": ANTHROPIC, "openai": OPENAI, "strict": OPENAI_STRICT, "gemini": GEMINI}
S = dict[str, Any]


def obj(properties: S, *, required: list[str] | None = None, closed: bool | None = None) -> S:
    out: S = {"type": "object", "properties": properties}
    out["required"] = list(properties) if required is None else required
    if closed is not None:
        out["additionalProperties"] = not closed
    return out


ROOT_CLOSED = ((), "removed additionalProperties", True)
ADOPTED = ("adopted",)


def adapted(
    *changes: tuple[tuple[Any, ...], str, bool], note: str | None = None
) -> tuple[Any, ...]:
    return ("adapted", list(changes), note)


def rejected(fragment: str) -> tuple[str, str]:
    return ("rejected", fragment)


def everywhere(expectation: tuple[Any, ...]) -> dict[str, tuple[Any, ...]]:
    return dict.fromkeys(PROFILES, expectation)


ON_INPUT = "Constraints not shown to this provider: additionalProperties on the input."

# (id, schema, {profile: expectation})
ROWS: list[tuple[str, S, dict[str, tuple[Any, ...]]]] = [
    (
        "closed-simple",
        obj({"a": {"type": "string"}}, closed=True),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": ADOPTED,
            "gemini": adapted(ROOT_CLOSED, note=ON_INPUT),
        },
    ),
    (
        "open-with-optional",
        obj({"a": {"type": "string"}, "b": {"type": "integer"}}, required=["a"]),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(
                ((), "closed the object (additionalProperties: false)", False),
                (("properties", "b"), "made required and nullable (it was optional)", False),
            ),
            "gemini": ADOPTED,
        },
    ),
    (
        "string-constraints",
        obj(
            {
                "name": {"type": "string", "pattern": "^a", "maxLength": 5},
                "note": {"type": "string", "minLength": 1},
            },
            closed=True,
        ),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(
                (("properties", "name"), "removed maxLength", True),
                (("properties", "note"), "removed minLength", True),
                note="Constraints not shown to this provider: "
                "maxLength on 'name', minLength on 'note'.",
            ),
            "gemini": adapted(ROOT_CLOSED, note=ON_INPUT),
        },
    ),
    (
        "array-without-items",
        obj({"tags": {"type": "array"}}, closed=True),
        {
            "anthropic": ADOPTED,
            "openai": adapted((("properties", "tags"), "declared items: {} (any value)", False)),
            "strict": rejected("must declare typed items"),
            "gemini": rejected("must declare typed items"),
        },
    ),
    (
        "array-untyped-items",
        obj({"tags": {"type": "array", "items": {}}}, closed=True),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": rejected("'tags[]' declares no type"),
            "gemini": rejected("'tags[]' declares no type"),
        },
    ),
    (
        "object-without-properties",
        obj({"meta": {"type": "object"}}, closed=True),
        {
            "anthropic": ADOPTED,
            "openai": adapted((("properties", "meta"), "declared properties: {}", False)),
            "strict": adapted(
                (("properties", "meta"), "declared properties: {}", False),
                (("properties", "meta"), "closed the object (additionalProperties: false)", False),
            ),
            "gemini": adapted(ROOT_CLOSED, note=ON_INPUT),
        },
    ),
    (
        "array-root",
        {"type": "array", "items": {"type": "string"}},
        everywhere(rejected("root schema must be an object")),
    ),
    (
        "anyof-root",
        {"anyOf": [{"type": "object"}]},
        everywhere(rejected("root schema must be an object")),
    ),
    ("untyped-root", {"properties": {}}, everywhere(rejected("root schema must be an object"))),
    (
        "proto",
        obj({"__proto__": {"type": "string"}}),
        everywhere(rejected("dangerous property name '__proto__'")),
    ),
    (
        "constructor",
        obj({"constructor": {"type": "string"}}),
        everywhere(rejected("dangerous property name 'constructor'")),
    ),
    (
        "prototype",
        obj({"prototype": {"type": "string"}}),
        everywhere(rejected("dangerous property name 'prototype'")),
    ),
    (
        "required-proto",
        {"type": "object", "properties": {}, "required": ["__proto__"]},
        everywhere(rejected("dangerous")),
    ),
    (
        "ref-cycle",
        {
            "type": "object",
            "properties": {"n": {"$ref": "#/$defs/N"}},
            "$defs": {"N": {"type": "object", "properties": {"c": {"$ref": "#/$defs/N"}}}},
        },
        everywhere(rejected("reference cycle (#/$defs/N -> #/$defs/N)")),
    ),
    (
        "ref-unresolvable",
        {"type": "object", "properties": {"n": {"$ref": "#/$defs/missing"}}},
        everywhere(rejected("cannot be resolved")),
    ),
    (
        "ref-remote",
        {"type": "object", "properties": {"n": {"$ref": "https://example.com/x.json"}}},
        everywhere(rejected("cannot be resolved")),
    ),
    (
        "refs-acyclic",
        {
            **obj({"a": {"$ref": "#/$defs/A"}}, closed=True),
            "$defs": {"A": obj({"x": {"type": "integer"}}, closed=True)},
        },
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": ADOPTED,
            "gemini": adapted(
                (("$defs",), "removed $defs (references are inlined)", False),
                (("properties", "a"), "inlined $ref '#/$defs/A'", False),
                (("properties", "a"), "removed additionalProperties", True),
                ROOT_CLOSED,
                note="Constraints not shown to this provider: additionalProperties on 'a', "
                "additionalProperties on the input.",
            ),
        },
    ),
    (
        "type-and-anyof",
        obj({"a": {"type": "string", "anyOf": [{"type": "string", "minLength": 1}]}}, closed=True),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": rejected("'a' declares both type and anyOf"),
            "gemini": rejected("'a' declares both type and anyOf"),
        },
    ),
    (
        "unknown-keyword",
        obj({"a": {"type": "string", "x-widget": "textarea"}}),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": rejected("unrecognised keyword 'x-widget' at 'a'"),
            "gemini": adapted(
                (("properties", "a"), "removed unrecognised keyword 'x-widget'", False)
            ),
        },
    ),
    (
        "one-of",
        obj({"v": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}, closed=True),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(
                (("properties", "v"), "wrote oneOf as anyOf (exclusivity not shown)", True),
                note="Constraints not shown to this provider: oneOf on 'v'.",
            ),
            "gemini": adapted(
                (("properties", "v"), "wrote oneOf as anyOf (exclusivity not shown)", True),
                ROOT_CLOSED,
                note="Constraints not shown to this provider: "
                "oneOf on 'v', additionalProperties on the input.",
            ),
        },
    ),
    (
        "const",
        obj({"k": {"type": "string", "const": "x"}}),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(((), "closed the object (additionalProperties: false)", False)),
            "gemini": adapted((("properties", "k"), "wrote const as a one-value enum", False)),
        },
    ),
    (
        "non-string-const",
        obj({"k": {"type": "integer", "const": 3}}),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(((), "closed the object (additionalProperties: false)", False)),
            "gemini": adapted(
                (("properties", "k"), "removed const", True),
                note="Constraints not shown to this provider: const on 'k'.",
            ),
        },
    ),
    (
        "nullable-type-list",
        obj({"n": {"type": ["string", "null"]}}),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(((), "closed the object (additionalProperties: false)", False)),
            "gemini": adapted(
                (
                    ("properties", "n"),
                    "wrote the type list as a single type with nullable: true",
                    False,
                )
            ),
        },
    ),
    (
        "multi-type-list",
        obj({"n": {"type": ["string", "integer"]}}),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(((), "closed the object (additionalProperties: false)", False)),
            "gemini": adapted((("properties", "n"), "wrote the type list as anyOf", False)),
        },
    ),
    (
        "nullable-anyof",
        obj(
            {
                "n": {
                    "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                    "description": "count",
                }
            }
        ),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(((), "closed the object (additionalProperties: false)", False)),
            "gemini": adapted(
                (("properties", "n"), "wrote the null alternative as nullable: true", False)
            ),
        },
    ),
    (
        "annotations-only",
        obj(
            {"a": {"type": "string", "default": "x", "examples": ["y"], "$comment": "c"}},
            closed=True,
        ),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(
                (("properties", "a"), "removed default", False),
                (("properties", "a"), "removed examples", False),
                (("properties", "a"), "removed $comment", False),
            ),
            "gemini": adapted(
                (("properties", "a"), "removed examples", False),
                (("properties", "a"), "removed $comment", False),
                ROOT_CLOSED,
                note=ON_INPUT,
            ),
        },
    ),
    (
        "unsupported-format",
        obj({"u": {"type": "string", "format": "uri"}}, closed=True),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted((("properties", "u"), "removed format 'uri'", False)),
            "gemini": adapted(
                (("properties", "u"), "removed format 'uri'", False), ROOT_CLOSED, note=ON_INPUT
            ),
        },
    ),
    (
        "number-bounds",
        obj(
            {"n": {"type": "number", "minimum": 0, "exclusiveMaximum": 9, "multipleOf": 0.5}},
            closed=True,
        ),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": ADOPTED,
            "gemini": adapted(
                (("properties", "n"), "removed exclusiveMaximum", True),
                (("properties", "n"), "removed multipleOf", True),
                ROOT_CLOSED,
                note="Constraints not shown to this provider: exclusiveMaximum on 'n', "
                "multipleOf on 'n', additionalProperties on the input.",
            ),
        },
    ),
    (
        "map",
        obj({"m": {"type": "object", "additionalProperties": {"type": "integer"}}}, closed=True),
        {
            "anthropic": ADOPTED,
            "openai": adapted((("properties", "m"), "declared properties: {}", False)),
            "strict": adapted(
                (("properties", "m"), "declared properties: {}", False),
                (
                    ("properties", "m"),
                    "replaced schema-valued additionalProperties with false",
                    False,
                ),
            ),
            "gemini": adapted(
                (("properties", "m"), "removed additionalProperties", True),
                ROOT_CLOSED,
                note="Constraints not shown to this provider: additionalProperties on 'm', "
                "additionalProperties on the input.",
            ),
        },
    ),
    (
        "open-map-true",
        obj({"m": {"type": "object", "properties": {}, "additionalProperties": True}}),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(
                (("properties", "m"), "closed the object (additionalProperties: false)", False),
                ((), "closed the object (additionalProperties: false)", False),
            ),
            "gemini": adapted((("properties", "m"), "removed additionalProperties", False)),
        },
    ),
    (
        "all-of-single",
        obj(
            {"a": {"allOf": [{"type": "string", "minLength": 1}], "description": "d"}}, closed=True
        ),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(
                (("properties", "a", "allOf", 0), "removed minLength", True),
                (("properties", "a"), "merged allOf members into the node", False),
                note="Constraints not shown to this provider: minLength on 'a'.",
            ),
            "gemini": adapted(
                (("properties", "a"), "merged allOf members into the node", False),
                ROOT_CLOSED,
                note=ON_INPUT,
            ),
        },
    ),
    (
        "all-of-conflict",
        obj({"a": {"allOf": [{"type": "string"}, {"type": "integer"}]}}, closed=True),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": rejected("cannot combine two different 'type' at 'a'"),
            "gemini": rejected("cannot combine two different 'type' at 'a'"),
        },
    ),
    (
        "unique-items",
        obj(
            {"s": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}, closed=True
        ),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(
                (("properties", "s"), "removed uniqueItems", True),
                note="Constraints not shown to this provider: uniqueItems on 's'.",
            ),
            "gemini": adapted(
                (("properties", "s"), "removed uniqueItems", True),
                ROOT_CLOSED,
                note="Constraints not shown to this provider: "
                "uniqueItems on 's', additionalProperties on the input.",
            ),
        },
    ),
    (
        "property-count-bounds",
        obj(
            {
                "o": {
                    "type": "object",
                    "properties": {},
                    "additionalProperties": False,
                    "minProperties": 1,
                }
            },
            closed=True,
        ),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(
                (("properties", "o"), "removed minProperties", True),
                note="Constraints not shown to this provider: minProperties on 'o'.",
            ),
            "gemini": adapted(
                (("properties", "o"), "removed additionalProperties", True),
                ROOT_CLOSED,
                note="Constraints not shown to this provider: "
                "additionalProperties on 'o', additionalProperties on the input.",
            ),
        },
    ),
    (
        "not",
        obj({"a": {"type": "string", "not": {"const": "x"}}}, closed=True),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(
                (("properties", "a"), "removed not", True),
                note="Constraints not shown to this provider: not on 'a'.",
            ),
            "gemini": adapted(
                (("properties", "a"), "removed not", True),
                ROOT_CLOSED,
                note="Constraints not shown to this provider: "
                "not on 'a', additionalProperties on the input.",
            ),
        },
    ),
    (
        "integer-enum",
        obj({"level": {"type": "integer", "enum": [1, 2]}}, closed=True),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": ADOPTED,
            "gemini": adapted(
                (("properties", "level"), "removed a non-string enum", True),
                ROOT_CLOSED,
                note="Constraints not shown to this provider: "
                "enum on 'level', additionalProperties on the input.",
            ),
        },
    ),
    (
        "optional-enum",
        obj({"c": {"type": "string", "enum": ["r", "g"]}}, required=[], closed=False),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(
                ((), "closed the object (additionalProperties: false)", False),
                (("properties", "c"), "made required and nullable (it was optional)", False),
            ),
            "gemini": adapted(((), "removed additionalProperties", False)),
        },
    ),
    (
        "null-only",
        obj({"z": {"type": "null"}}, required=[]),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": adapted(
                ((), "closed the object (additionalProperties: false)", False),
                (("properties", "z"), "made required (it already accepts null)", False),
            ),
            "gemini": rejected("'z' only accepts null"),
        },
    ),
    (
        "boolean-subschema",
        obj({"a": True}),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": rejected("'a' is a boolean schema"),
            "gemini": rejected("'a' is a boolean schema"),
        },
    ),
    (
        "non-json-value",
        {"type": "object", "properties": {"a": {"type": "string", "enum": {"x", "y"}}}},
        everywhere(rejected("non-JSON value (set)")),
    ),
    (
        "non-string-key",
        {"type": "object", "properties": {1: {"type": "string"}}},
        everywhere(rejected("non-string key 1")),
    ),
    (
        "empty-object",
        {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": ADOPTED,
            "gemini": adapted(ROOT_CLOSED, note=ON_INPUT),
        },
    ),
    (
        "bare-object-root",
        {"type": "object"},
        {
            "anthropic": ADOPTED,
            "openai": adapted(((), "declared properties: {}", False)),
            "strict": adapted(
                ((), "declared properties: {}", False),
                ((), "closed the object (additionalProperties: false)", False),
            ),
            "gemini": ADOPTED,
        },
    ),
]


def _nested(levels: int) -> S:
    node: S = {"type": "string"}
    for _ in range(levels):
        node = obj({"c": node}, closed=True)
    return node


ROWS += [
    ("too-deep", _nested(40), everywhere(rejected("nests deeper than 64 levels"))),
    (
        "too-many-nodes",
        obj({f"p{i}": {"type": "string"} for i in range(10_001)}, closed=True),
        everywhere(rejected("more than 10000 nodes")),
    ),
    (
        "eleven-object-levels",
        _nested(11),
        {
            "anthropic": ADOPTED,
            "openai": ADOPTED,
            "strict": rejected("objects nest more than 10 levels deep"),
            "gemini": adapted(
                *[
                    (("properties", "c") * (10 - i), "removed additionalProperties", True)
                    for i in range(11)
                ],
                note="Constraints not shown to this provider: "
                + ", ".join(
                    f"additionalProperties on '{'.'.join(['c'] * (10 - i))}'" for i in range(10)
                )
                + ", additionalProperties on the input.",
            ),
        },
    ),
]

CASES = [
    pytest.param(schema, name, expectations[name], id=f"{row_id}-{name}")
    for row_id, schema, expectations in ROWS
    for name in PROFILES
]


def test_table_size() -> None:
    assert len(ROWS) >= 40
    assert len(CASES) == 4 * len(ROWS)


@pytest.mark.parametrize(("schema", "profile_name", "expected"), CASES)
def test_projection(schema: S, profile_name: str, expected: tuple[Any, ...]) -> None:
    before = copy.deepcopy(schema)
    result = project_schema(schema, PROFILES[profile_name])
    assert schema == before  # never mutated
    kind = expected[0]
    if kind == "adopted":
        assert isinstance(result, Adopted), result
        assert result.schema is schema
        assert result.changes == ()
        assert result.note is None
    elif kind == "adapted":
        assert isinstance(result, Adapted), result
        assert [(c.path, c.what, c.constraint_dropped) for c in result.changes] == expected[1]
        assert result.note == expected[2]
        assert (result.note is not None) == any(c.constraint_dropped for c in result.changes)
        _assert_no_shared_containers(result.schema, schema)
    else:
        assert isinstance(result, Rejected), result
        assert expected[1] in result.reason
        assert result.note is None


def _assert_no_shared_containers(projected: object, original: object) -> None:
    originals: set[int] = set()

    def collect(node: object) -> None:
        if isinstance(node, dict | list):
            originals.add(id(node))
            for child in node.values() if isinstance(node, dict) else node:
                collect(child)

    def check(node: object) -> None:
        if isinstance(node, dict | list):
            assert id(node) not in originals
            for child in node.values() if isinstance(node, dict) else node:
                check(child)

    collect(original)
    check(projected)


def test_python_object_cycle_is_rejected() -> None:
    schema: S = {"type": "object", "properties": {}}
    schema["properties"]["self"] = schema
    for profile in PROFILES.values():
        result = project_schema(schema, profile)
        assert isinstance(result, Rejected)
        assert "cycle" in result.reason


def test_shared_subschema_is_not_a_cycle() -> None:
    shared = {"type": "string"}
    schema = obj({"a": shared, "b": shared}, closed=True)
    assert isinstance(project_schema(schema, OPENAI_STRICT), Adopted)


def test_projection_is_deterministic() -> None:
    schema = obj(
        {"a": {"type": "string", "maxLength": 3}, "b": {"type": "integer"}}, required=["a"]
    )
    first = project_schema(schema, OPENAI_STRICT)
    second = project_schema(schema, OPENAI_STRICT)
    assert first == second


def test_strict_projected_shape() -> None:
    schema = obj(
        {
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "kind": {"type": "string", "enum": ["a", "b"]},
            "ref": {"$ref": "#/$defs/R"},
        },
        required=["name"],
    )
    schema["$defs"] = {"R": obj({"x": {"type": "integer"}}, required=[])}
    result = project_schema(schema, OPENAI_STRICT)
    assert isinstance(result, Adapted)
    out = result.schema
    assert out["required"] == ["name", "tags", "kind", "ref"]
    assert out["additionalProperties"] is False
    assert out["properties"]["tags"]["type"] == ["array", "null"]
    assert out["properties"]["kind"] == {"type": ["string", "null"], "enum": ["a", "b", None]}
    assert out["properties"]["ref"] == {"anyOf": [{"$ref": "#/$defs/R"}, {"type": "null"}]}
    assert out["$defs"]["R"]["additionalProperties"] is False
    assert out["$defs"]["R"]["properties"]["x"]["type"] == ["integer", "null"]
    assert validate_json({"name": "n", "tags": None, "kind": None, "ref": None}, out) == ()


def test_validation_uses_the_unprojected_schema() -> None:
    """The strict-mode nullable compensation never lets null through the real schema."""

    class Args(BaseModel):
        query: str
        limit: int = 10
        label: str = Field(default="x", max_length=4)

    original = tool_input_schema(Args)
    result = project_schema(original, OPENAI_STRICT)
    assert isinstance(result, Adapted)
    wire_value = {"query": "q", "limit": None, "label": None}
    assert validate_json(wire_value, result.schema) == ()  # what the provider was told
    issues = validate_json(wire_value, original)  # what the tool actually accepts
    assert {(i.code, i.path) for i in issues} == {
        ("value.type", ("limit",)),
        ("value.type", ("label",)),
    }
    assert validate_json({"query": "q", "label": "toolong"}, original)[0].code == "value.maxLength"
    assert result.note == "Constraints not shown to this provider: maxLength on 'label'."


def test_gemini_projection_of_a_pydantic_model() -> None:
    class Inner(BaseModel):
        v: int

    class Args(BaseModel):
        inner: Inner | None = None
        items: list[Inner]

    result = project_schema(tool_input_schema(Args), GEMINI)
    assert isinstance(result, Adapted)
    text = repr(result.schema)
    for absent in ("$ref", "$defs", "additionalProperties", "'null'"):
        assert absent not in text
    inner = result.schema["properties"]["inner"]
    assert inner["nullable"] is True
    assert inner["type"] == "object"
    assert inner["properties"]["v"]["type"] == "integer"


def test_custom_profile_defined_by_a_plugin() -> None:
    no_patterns = SchemaProfile(name="acme", keywords=frozenset({"type", "properties", "required"}))
    schema = obj({"a": {"type": "string", "pattern": "^x", "description": "d"}})
    result = project_schema(schema, no_patterns)
    assert isinstance(result, Adapted)
    assert result.changes == (
        Change(("properties", "a"), "removed pattern", True),
        Change(("properties", "a"), "removed description", False),
    )
    assert result.schema["properties"]["a"] == {"type": "string"}


def test_a_plugin_profile_brings_its_own_node_steps() -> None:
    """A target's own rewrites are node steps: they record changes and may refuse the schema."""

    def upper_enums(out: dict[str, Any], site: Site) -> None:
        if isinstance(out.get("enum"), list):
            out["enum"] = [str(v).upper() for v in out["enum"]]
            site.change("wrote the enum upper-case", constraint="enum")

    def no_booleans(out: dict[str, Any], site: Site) -> None:
        if out.get("type") == "boolean":
            site.reject(f"{site.where()} is a boolean, which acme cannot carry")

    acme = SchemaProfile(name="acme", rewrites=(upper_enums,), completions=(no_booleans,))
    result = project_schema(obj({"c": {"type": "string", "enum": ["a", "b"]}}), acme)
    assert isinstance(result, Adapted)
    assert result.schema["properties"]["c"]["enum"] == ["A", "B"]
    assert result.changes == (Change(("properties", "c"), "wrote the enum upper-case", True),)
    assert result.note == "Constraints not shown to this provider: enum on 'c'."
    refused = project_schema(obj({"flag": {"type": "boolean"}}), acme)
    assert refused == Rejected(
        "'flag' is a boolean, which acme cannot carry", ("properties", "flag")
    )


def test_each_target_lives_in_its_own_module() -> None:
    modules = {p.name: p.rewrites + p.completions for p in PROFILES.values()}
    assert {name: {s.__module__ for s in steps} for name, steps in modules.items()} == {
        "anthropic": set(),
        "openai": set(),
        "openai-strict": {"agentrig.tools._profile_openai_strict"},
        "gemini": {"agentrig.tools._profile_gemini"},
    }


# -- the description note ------------------------------------------------------------------


def test_describe_with_note() -> None:
    schema = obj({"name": {"type": "string", "pattern": "^a", "maxLength": 5}}, closed=True)
    strict = project_schema(schema, OPENAI_STRICT)
    assert describe_with_note("Look a name up.", strict) == (
        "Look a name up. Constraints not shown to this provider: maxLength on 'name'."
    )
    assert describe_with_note("", strict) == strict.note
    assert (
        describe_with_note("Look a name up.", project_schema(schema, ANTHROPIC))
        == "Look a name up."
    )
    annotations_only = project_schema(
        obj({"a": {"type": "string", "default": "x"}}, closed=True), OPENAI_STRICT
    )
    assert isinstance(annotations_only, Adapted)
    assert describe_with_note("D.", annotations_only) == "D."
    assert describe_with_note("D.", project_schema({"type": "array"}, ANTHROPIC)) == "D."


# -- property: never raises, never mutates --------------------------------------------------

_KEYS = st.sampled_from(
    [
        "type", "properties", "items", "required", "additionalProperties", "anyOf", "oneOf",
        "allOf", "not", "enum", "const", "$ref", "$defs", "minLength", "pattern", "default",
        "title", "x-extra", "__proto__", "minimum", "nullable", "format",
    ]
)  # fmt: skip
_TYPES = st.sampled_from(["object", "string", "integer", "number", "array", "null", "boolean"])
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=5),
    _TYPES,
    st.sampled_from(["#/$defs/a", "#", "#/properties", "#/$defs/a~1b", "http://x"]),
)
_JSONISH = st.recursive(
    _LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(_KEYS, st.text(max_size=4)), children, max_size=5),
    ),
    max_leaves=40,
)
_SCHEMAS = st.one_of(
    st.dictionaries(_KEYS, _JSONISH, max_size=6),
    st.fixed_dictionaries(
        {
            "type": st.just("object"),
            "properties": st.dictionaries(st.text(max_size=4), _JSONISH, max_size=5),
        },
        optional={
            "required": st.lists(st.text(max_size=4), max_size=3),
            "$defs": st.dictionaries(st.sampled_from(["a", "a/b"]), _JSONISH, max_size=2),
            "additionalProperties": _JSONISH,
        },
    ),
)


@settings(max_examples=400, deadline=None)
@given(schema=_SCHEMAS, profile=st.sampled_from(list(PROFILES.values())))
def test_property_never_raises_never_mutates(schema: S, profile: SchemaProfile) -> None:
    before = copy.deepcopy(schema)
    result = project_schema(schema, profile)
    assert schema == before
    assert isinstance(result, Adopted | Adapted | Rejected)
    if isinstance(result, Adopted):
        assert result.schema is schema
    elif isinstance(result, Adapted):
        assert result.changes
        assert (result.note is not None) == any(c.constraint_dropped for c in result.changes)
        assert project_schema(schema, profile) == result  # deterministic
    else:
        assert not result.reason.startswith("internal error"), result.reason
