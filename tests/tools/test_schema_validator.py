"""The JSON-Schema subset validator: one row per keyword case, bounds, references, adapters."""

from __future__ import annotations

import asyncio
import copy
import enum
import gc
import warnings
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentrig.errors import Issue
from agentrig.tools.schema import (
    Limits,
    SchemaContractError,
    check_bounds,
    parse_with,
    validate_json,
)

S = dict[str, Any]

# (id, schema, value, expected issue codes -- () means valid)
KEYWORD_ROWS: list[tuple[str, S | bool, object, tuple[str, ...]]] = [
    # type
    ("type-string-ok", {"type": "string"}, "x", ()),
    ("type-string-int", {"type": "string"}, 1, ("value.type",)),
    ("type-integer-int", {"type": "integer"}, 3, ()),
    ("type-integer-integral-float", {"type": "integer"}, 1.0, ()),
    ("type-integer-fraction", {"type": "integer"}, 1.5, ("value.type",)),
    ("type-integer-bool", {"type": "integer"}, True, ("value.type",)),
    ("type-number-int", {"type": "number"}, 3, ()),
    ("type-number-float", {"type": "number"}, 3.25, ()),
    ("type-number-bool", {"type": "number"}, False, ("value.type",)),
    ("type-number-nan", {"type": "number"}, float("nan"), ("value.not_json",)),
    ("type-boolean-ok", {"type": "boolean"}, True, ()),
    ("type-boolean-int", {"type": "boolean"}, 1, ("value.type",)),
    ("type-null-ok", {"type": "null"}, None, ()),
    ("type-null-empty-string", {"type": "null"}, "", ("value.type",)),
    ("type-array-list", {"type": "array"}, [1], ()),
    ("type-array-tuple", {"type": "array"}, (1, 2), ()),
    ("type-array-string", {"type": "array"}, "ab", ("value.type",)),
    ("type-object-ok", {"type": "object"}, {"a": 1}, ()),
    ("type-object-list", {"type": "object"}, [], ("value.type",)),
    ("type-list-ok", {"type": ["string", "null"]}, None, ()),
    ("type-list-second", {"type": ["string", "integer"]}, 4, ()),
    ("type-list-bad", {"type": ["string", "null"]}, 4, ("value.type",)),
    ("not-json-set", {}, {1, 2}, ("value.not_json",)),
    ("not-json-key", {"type": "object"}, {1: "a"}, ("value.not_json",)),
    # enum / const (JSON equality)
    ("enum-ok", {"enum": ["a", "b"]}, "b", ()),
    ("enum-bad", {"enum": ["a", "b"]}, "c", ("value.enum",)),
    ("enum-int-float", {"enum": [1, 2]}, 1.0, ()),
    ("enum-true-not-1", {"enum": [1, 2]}, True, ("value.enum",)),
    ("enum-1-not-true", {"enum": [True]}, 1, ("value.enum",)),
    ("enum-null", {"enum": [None, "a"]}, None, ()),
    ("enum-object", {"enum": [{"a": 1}]}, {"a": 1.0}, ()),
    ("enum-object-bad", {"enum": [{"a": 1}]}, {"a": True}, ("value.enum",)),
    ("enum-array", {"enum": [[1, "x"]]}, [1, "x"], ()),
    ("const-ok", {"const": "x"}, "x", ()),
    ("const-bad", {"const": "x"}, "y", ("value.const",)),
    ("const-false-not-0", {"const": False}, 0, ("value.const",)),
    ("const-0-not-false", {"const": 0}, False, ("value.const",)),
    ("const-null", {"const": None}, None, ()),
    ("const-null-bad", {"const": None}, 0, ("value.const",)),
    # numbers
    ("minimum-ok", {"minimum": 1}, 1, ()),
    ("minimum-bad", {"minimum": 1}, 0.5, ("value.minimum",)),
    ("maximum-ok", {"maximum": 10}, 10, ()),
    ("maximum-bad", {"maximum": 10}, 10.01, ("value.maximum",)),
    ("exclusive-min-ok", {"exclusiveMinimum": 0}, 0.001, ()),
    ("exclusive-min-bad", {"exclusiveMinimum": 0}, 0, ("value.exclusiveMinimum",)),
    ("exclusive-max-ok", {"exclusiveMaximum": 5}, 4, ()),
    ("exclusive-max-bad", {"exclusiveMaximum": 5}, 5, ("value.exclusiveMaximum",)),
    ("exclusive-draft4", {"minimum": 0, "exclusiveMinimum": True}, 0, ("value.exclusiveMinimum",)),
    ("multiple-ok", {"multipleOf": 3}, 9, ()),
    ("multiple-bad", {"multipleOf": 3}, 10, ("value.multipleOf",)),
    ("multiple-decimal-ok", {"multipleOf": 0.1}, 0.3, ()),
    ("multiple-decimal-bad", {"multipleOf": 0.1}, 0.35, ("value.multipleOf",)),
    ("multiple-float-of-int", {"multipleOf": 2}, 4.0, ()),
    ("number-keywords-skip-string", {"minimum": 5}, "a", ()),
    ("number-keywords-skip-bool", {"minimum": 5}, True, ()),
    ("big-int", {"type": "integer", "maximum": 10**30}, 10**31, ("value.maximum",)),
    # strings
    ("minlength-ok", {"minLength": 2}, "ab", ()),
    ("minlength-bad", {"minLength": 2}, "a", ("value.minLength",)),
    ("maxlength-ok", {"maxLength": 2}, "ab", ()),
    ("maxlength-bad", {"maxLength": 2}, "abc", ("value.maxLength",)),
    ("maxlength-astral-one", {"maxLength": 1}, "\U0001f600", ()),
    ("minlength-astral-two", {"minLength": 2}, "\U0001f600", ("value.minLength",)),
    ("maxlength-combining", {"maxLength": 1}, "e\u0301", ("value.maxLength",)),
    ("pattern-ok", {"pattern": "^[a-z]+$"}, "abc", ()),
    ("pattern-bad", {"pattern": "^[a-z]+$"}, "abC", ("value.pattern",)),
    ("pattern-search", {"pattern": "b"}, "abc", ()),
    ("pattern-dollar-newline", {"pattern": "^a$"}, "a\n", ("value.pattern",)),
    ("pattern-ascii-digit", {"pattern": "^\\d+$"}, "\u0661\u0662", ("value.pattern",)),
    ("pattern-digit-ok", {"pattern": "^\\d+$"}, "12", ()),
    ("pattern-escaped-dollar", {"pattern": "\\$$"}, "5$", ()),
    ("pattern-dollar-in-class", {"pattern": "^[$]+$"}, "$$", ()),
    ("pattern-invalid", {"pattern": "(?<name>a)"}, "a", ("schema.pattern_invalid",)),
    ("string-keywords-skip-int", {"maxLength": 1}, 12345, ()),
    # arrays
    ("minitems-ok", {"minItems": 1}, [1], ()),
    ("minitems-bad", {"minItems": 1}, [], ("value.minItems",)),
    ("maxitems-ok", {"maxItems": 2}, [1, 2], ()),
    ("maxitems-bad", {"maxItems": 2}, [1, 2, 3], ("value.maxItems",)),
    ("unique-ok", {"uniqueItems": True}, [1, "1", True], ()),
    ("unique-int-float", {"uniqueItems": True}, [1, 1.0], ("value.uniqueItems",)),
    ("unique-true-and-1", {"uniqueItems": True}, [True, 1], ()),
    ("unique-objects", {"uniqueItems": True}, [{"a": 1}, {"a": 1}], ("value.uniqueItems",)),
    ("unique-false", {"uniqueItems": False}, [1, 1], ()),
    ("items-ok", {"items": {"type": "integer"}}, [1, 2], ()),
    ("items-bad", {"items": {"type": "integer"}}, [1, "x"], ("value.type",)),
    ("items-empty-array", {"items": {"type": "integer"}}, [], ()),
    ("items-false", {"items": False}, [1], ("value.false_schema",)),
    ("array-keywords-skip-object", {"minItems": 3}, {"a": 1}, ()),
    # objects
    ("required-ok", {"required": ["a"]}, {"a": None}, ()),
    ("required-bad", {"required": ["a", "b"]}, {"a": 1}, ("value.required",)),
    ("required-proto", {"required": ["__proto__"]}, {}, ("value.required",)),
    ("required-proto-own", {"required": ["__proto__"]}, {"__proto__": 1}, ()),
    ("required-constructor", {"required": ["constructor"]}, {}, ("value.required",)),
    ("properties-ok", {"properties": {"a": {"type": "string"}}}, {"a": "x"}, ()),
    ("properties-bad", {"properties": {"a": {"type": "string"}}}, {"a": 1}, ("value.type",)),
    ("properties-absent-ok", {"properties": {"a": {"type": "string"}}}, {}, ()),
    (
        "additional-false",
        {"properties": {"a": {}}, "additionalProperties": False},
        {"a": 1, "b": 2},
        ("value.additionalProperties",),
    ),
    ("additional-default-open", {"properties": {"a": {}}}, {"b": 2}, ()),
    ("additional-true", {"additionalProperties": True}, {"b": 2}, ()),
    ("additional-schema-ok", {"additionalProperties": {"type": "integer"}}, {"b": 2}, ()),
    (
        "additional-schema-bad",
        {"additionalProperties": {"type": "integer"}},
        {"b": "x"},
        ("value.type",),
    ),
    ("minproperties-ok", {"minProperties": 1}, {"a": 1}, ()),
    ("minproperties-bad", {"minProperties": 1}, {}, ("value.minProperties",)),
    ("maxproperties-ok", {"maxProperties": 1}, {"a": 1}, ()),
    ("maxproperties-bad", {"maxProperties": 1}, {"a": 1, "b": 2}, ("value.maxProperties",)),
    # combinators
    ("allof-ok", {"allOf": [{"type": "integer"}, {"minimum": 2}]}, 3, ()),
    ("allof-bad", {"allOf": [{"type": "integer"}, {"minimum": 2}]}, 1, ("value.minimum",)),
    ("anyof-first", {"anyOf": [{"type": "string"}, {"type": "null"}]}, "x", ()),
    ("anyof-second", {"anyOf": [{"type": "string"}, {"type": "null"}]}, None, ()),
    ("anyof-none", {"anyOf": [{"type": "string"}, {"type": "null"}]}, 3, ("value.anyOf",)),
    ("oneof-one", {"oneOf": [{"type": "integer"}, {"type": "string"}]}, 3, ()),
    (
        "oneof-two",
        {"oneOf": [{"type": "integer"}, {"minimum": 0}]},
        3,
        ("value.oneOf",),
    ),
    ("oneof-none", {"oneOf": [{"type": "integer"}, {"type": "string"}]}, None, ("value.oneOf",)),
    ("not-ok", {"not": {"type": "string"}}, 3, ()),
    ("not-bad", {"not": {"type": "string"}}, "x", ("value.not",)),
    (
        "size-bound-on-union",
        {"anyOf": [{"type": "string"}], "maxLength": 2},
        "abc",
        ("value.maxLength",),
    ),
    ("size-bound-on-union-ok", {"anyOf": [{"type": "string"}], "maxLength": 2}, "ab", ()),
    ("true-schema", True, {"anything": [1]}, ()),
    ("false-schema", False, 1, ("value.false_schema",)),
    ("empty-schema", {}, [None, {"a": "b"}], ()),
    ("unknown-keywords-ignored", {"format": "email", "x-custom": 1, "prefixItems": []}, "nope", ()),
    ("malformed-subschema", {"properties": {"a": 5}}, {"a": 1}, ("schema.malformed",)),
    # $ref
    ("ref-defs-ok", {"$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"}, 1, ()),
    (
        "ref-defs-bad",
        {"$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"},
        "x",
        ("value.type",),
    ),
    (
        "ref-definitions",
        {"definitions": {"n": {"type": "integer"}}, "$ref": "#/definitions/n"},
        1,
        (),
    ),
    (
        "ref-escape-slash",
        {"$defs": {"a/b": {"type": "integer"}}, "$ref": "#/$defs/a~1b"},
        "x",
        ("value.type",),
    ),
    (
        "ref-escape-tilde",
        {"$defs": {"a~b": {"type": "integer"}}, "$ref": "#/$defs/a~0b"},
        "x",
        ("value.type",),
    ),
    ("ref-percent", {"$defs": {"a b": {"type": "integer"}}, "$ref": "#/$defs/a%20b"}, 2, ()),
    (
        "ref-root",
        {"properties": {"a": {"$ref": "#"}}, "type": "object"},
        {"a": {"a": 1}},
        ("value.type",),
    ),
    ("ref-missing", {"$ref": "#/$defs/nope"}, 1, ("schema.ref_unresolved",)),
    ("ref-remote", {"$ref": "https://example.com/s.json"}, 1, ("schema.ref_unsupported",)),
    ("ref-anchor", {"$ref": "#anchor"}, 1, ("schema.ref_unsupported",)),
    (
        "ref-self-cycle",
        {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
        1,
        ("schema.ref_cycle",),
    ),
    (
        "ref-mutual-cycle",
        {
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}},
            "$ref": "#/$defs/a",
        },
        1,
        ("value.anyOf",),
    ),
    (
        "ref-siblings-apply",
        {"$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n", "minimum": 5},
        3,
        ("value.minimum",),
    ),
]


@pytest.mark.parametrize(
    ("schema", "value", "codes"),
    [pytest.param(s, v, c, id=i) for i, s, v, c in KEYWORD_ROWS],
)
def test_keyword(schema: Any, value: object, codes: tuple[str, ...]) -> None:
    found = validate_json(value, schema)
    assert tuple(issue.code for issue in found) == codes, found


def test_keyword_table_is_large() -> None:
    assert len(KEYWORD_ROWS) >= 100
    assert len({row[0] for row in KEYWORD_ROWS}) == len(KEYWORD_ROWS)


def test_issues_carry_json_paths() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name", "qty"],
                },
            }
        },
    }
    found = validate_json({"items": [{"name": 5}]}, schema)
    assert [(i.code, i.path) for i in found] == [
        ("value.required", ("items", 0, "qty")),
        ("value.type", ("items", 0, "name")),
    ]
    assert found[1].location() == "items[0].name"


def test_additional_property_issue_names_the_key() -> None:
    (issue,) = validate_json({"x": 1}, {"properties": {}, "additionalProperties": False})
    assert issue.path == ("x",)
    assert "'x'" in issue.message


def test_anyof_message_lists_each_alternative() -> None:
    (issue,) = validate_json(3, {"anyOf": [{"type": "string"}, {"type": "null"}]})
    assert "expected string" in issue.message
    assert "expected null" in issue.message


def test_ref_recursion_through_value_is_fine() -> None:
    schema = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"child": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}},
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/node",
    }
    assert validate_json({"child": {"child": {"child": None}}}, schema) == ()
    assert validate_json({"child": {"child": {"x": 1}}}, schema)[0].code == "value.anyOf"


# -- bounds -------------------------------------------------------------------------------


def _nested_lists(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def test_ten_thousand_nested_lists_is_a_depth_issue_not_recursion_error() -> None:
    (issue,) = validate_json(_nested_lists(10_000), {"type": "array"})
    assert issue.code == "limit.depth"


def test_deep_nesting_under_an_items_schema() -> None:
    schema: dict[str, Any] = {"$defs": {"l": {"type": "array", "items": {"$ref": "#/$defs/l"}}}}
    schema["$ref"] = "#/$defs/l"
    (issue,) = validate_json(_nested_lists(10_000), schema)
    assert issue.code == "limit.depth"


def test_deep_objects() -> None:
    value: dict[str, Any] = {}
    for _ in range(5000):
        value = {"a": value}
    (issue,) = validate_json(value, {})
    assert issue.code == "limit.depth"


def test_depth_at_the_limit_is_fine() -> None:
    limits = Limits(max_depth=5)
    assert validate_json(_nested_lists(5), {}, limits=limits) == ()
    assert validate_json(_nested_lists(6), {}, limits=limits)[0].code == "limit.depth"


def test_python_cyclic_value_is_bounded() -> None:
    value: list[Any] = []
    value.append(value)
    (issue,) = validate_json(value, {"type": "array"})
    assert issue.code == "limit.depth"


def test_huge_string_is_a_limit_issue_even_without_string_keywords() -> None:
    (issue,) = validate_json({"a": "x" * 1_000_001}, {"type": "object"})
    assert issue.code == "limit.string_length"
    assert issue.path == ("a",)


def test_string_limit_counts_code_points() -> None:
    limits = Limits(max_string_length=3)
    assert validate_json("\U0001f600" * 3, {}, limits=limits) == ()
    assert validate_json("\U0001f600" * 4, {}, limits=limits)[0].code == "limit.string_length"


def test_huge_string_never_reaches_the_pattern() -> None:
    (issue,) = validate_json("a" * 2_000_000, {"pattern": "^(a+)+$"})
    assert issue.code == "limit.string_length"


def test_items_and_properties_limits() -> None:
    limits = Limits(max_items=3, max_properties=2)
    assert validate_json([1, 2, 3, 4], {}, limits=limits)[0].code == "limit.items"
    assert validate_json({"a": 1, "b": 2, "c": 3}, {}, limits=limits)[0].code == "limit.properties"
    assert validate_json([1, 2, 3], {}, limits=limits) == ()


def test_node_budget_bounds_unions() -> None:
    schema = {"anyOf": [{"type": "array", "items": {"type": "string"}}] * 10 + [{"type": "array"}]}
    (issue,) = validate_json(list(range(500)), schema, limits=Limits(max_nodes=1000))
    assert issue.code == "limit.nodes"


def test_schema_depth_limit_on_long_ref_chain() -> None:
    defs = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(2000)}
    defs["d2000"] = {"type": "integer"}
    (issue,) = validate_json(1, {"$defs": defs, "$ref": "#/$defs/d0"})
    assert issue.code == "limit.schema_depth"


def test_size_bound_applies_on_union_nodes() -> None:
    schema = {"anyOf": [{"type": "string"}, {"type": "null"}], "maxLength": 3}
    assert [i.code for i in validate_json("abcd", schema)] == ["value.maxLength"]


def test_limits_are_frozen_values() -> None:
    limits = Limits()
    assert (limits.max_depth, limits.max_nodes, limits.max_string_length) == (
        64,
        100_000,
        1_000_000,
    )
    assert (limits.max_items, limits.max_properties) == (100_000, 10_000)
    with pytest.raises(AttributeError):
        limits.max_depth = 3  # type: ignore[misc]


def test_validation_does_not_mutate() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["b"]}
    value = {"a": "x"}
    validate_json(value, schema)
    assert schema == {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["b"]}
    assert value == {"a": "x"}


def test_issue_type() -> None:
    found = validate_json(1, {"type": "string"})
    assert isinstance(found, tuple)
    assert isinstance(found[0], Issue)


# -- parse_with: the synchronous-parse contract --------------------------------------------


class _SyncAdapter:
    json_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012

    def parse(self, value: object) -> object:
        return {"parsed": value}


class _CoroutineAdapter:
    json_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012

    def __init__(self) -> None:
        self.ran = False

    def parse(self, value: object) -> object:
        async def late() -> object:
            self.ran = True
            raise ValueError("late failure")

        return late()


def test_parse_with_returns_the_value() -> None:
    assert parse_with(_SyncAdapter(), 1) == {"parsed": 1}


def test_parse_with_refuses_a_coroutine_and_closes_it() -> None:
    adapter = _CoroutineAdapter()
    gc.collect()  # what earlier tests left (an unclosed socket's ResourceWarning) goes first
    with warnings.catch_warnings():
        # "coroutine ... was never awaited" (a RuntimeWarning) would be an error
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(SchemaContractError) as caught:
            parse_with(adapter, {})
        gc.collect()
    assert caught.value.code == "schema.contract"
    assert "synchronous" in str(caught.value)
    assert adapter.ran is False


def test_parse_with_refuses_a_future_and_consumes_its_outcome() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[object] = loop.create_future()

        class FutureAdapter:
            json_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012

            def parse(self, value: object) -> object:
                return future

        with pytest.raises(SchemaContractError):
            parse_with(FutureAdapter(), {})
        await asyncio.sleep(0)
        assert future.cancelled()

    asyncio.run(main())


# -- property: the validator never raises ---------------------------------------------------

_LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6))
_JSON = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=30,
)
_KEYWORD = st.sampled_from(
    [
        "type", "enum", "const", "properties", "required", "additionalProperties", "items",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
        "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "minProperties",
        "maxProperties", "allOf", "anyOf", "oneOf", "not", "$ref", "$defs",
    ]
)  # fmt: skip
_SCHEMA = st.recursive(
    st.one_of(st.booleans(), st.dictionaries(_KEYWORD, _JSON, max_size=4)),
    lambda inner: st.one_of(
        st.dictionaries(_KEYWORD, inner, max_size=4),
        st.fixed_dictionaries({"anyOf": st.lists(inner, max_size=3)}),
        st.fixed_dictionaries({"properties": st.dictionaries(st.text(max_size=3), inner)}),
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(value=_JSON, schema=_SCHEMA)
def test_property_validator_never_raises(value: object, schema: Any) -> None:
    before = copy.deepcopy(schema)
    found = validate_json(value, schema)
    assert isinstance(found, tuple)
    assert all(isinstance(issue, Issue) for issue in found)
    assert schema == before


class _Level(enum.IntEnum):
    LOW = 1


# (id, flat object, limits, the issue code check_bounds gives -- None means within bounds)
FLAT_BOUNDS_ROWS: list[tuple[str, dict[Any, Any], Limits, str | None]] = [
    ("scalars", {"s": "x", "i": 1, "b": True, "n": None, "f": 1.5}, Limits(), None),
    ("empty", {}, Limits(), None),
    ("long-string", {"s": "x" * 11}, Limits(max_string_length=10), "limit.string_length"),
    ("string-at-limit", {"s": "x" * 10}, Limits(max_string_length=10), None),
    ("nan", {"f": float("nan")}, Limits(), "value.not_json"),
    ("infinity", {"f": float("-inf")}, Limits(), "value.not_json"),
    ("int-key", {1: "a"}, Limits(), "value.not_json"),
    ("int-subclass", {"e": _Level.LOW}, Limits(), None),
    ("object-value", {"o": object()}, Limits(), "value.not_json"),
    ("nested", {"l": [1, {"a": "x" * 11}]}, Limits(max_string_length=10), "limit.string_length"),
    ("properties", {"a": 1, "b": 2}, Limits(max_properties=1), "limit.properties"),
    ("nodes", {"a": 1, "b": 2}, Limits(max_nodes=2), "limit.nodes"),
    ("nodes-at-limit", {"a": 1, "b": 2}, Limits(max_nodes=3), None),
    ("depth", {"a": 1}, Limits(max_depth=0), "limit.depth"),
    ("empty-depth-0", {}, Limits(max_depth=0), None),
]


@pytest.mark.parametrize(
    ("value", "limits", "code"),
    [row[1:] for row in FLAT_BOUNDS_ROWS],
    ids=[row[0] for row in FLAT_BOUNDS_ROWS],
)
def test_flat_object_bounds_match_the_walk(
    value: dict[Any, Any], limits: Limits, code: str | None
) -> None:
    # a plain dict may take the flat fast path; the same items behind a read-only mapping
    # always take the general walk: both give the same issues
    issues = check_bounds(value, limits)
    assert issues == check_bounds(MappingProxyType(value), limits)
    assert [issue.code for issue in issues] == ([] if code is None else [code])
