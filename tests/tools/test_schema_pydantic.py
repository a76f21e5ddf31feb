"""pydantic models to the canonical tool-schema shape, and the pydantic schema adapter."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Literal, Optional

import pytest
from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator

from agentrig.errors import AgentrigError, error_info
from agentrig.tools.schema import (
    Limits,
    PydanticSchemaAdapter,
    SchemaAdapter,
    SchemaConversionError,
    SchemaValidationError,
    parse_with,
    tool_input_schema,
    validate_json,
)


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    street: str
    zip: Annotated[str, Field(pattern=r"^\d{5}$")]


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    a: int


class Ignoring(BaseModel):
    a: int


def _prop(model: type[BaseModel], name: str) -> dict[str, Any]:
    schema = tool_input_schema(model)
    return schema["properties"][name]  # type: ignore[no-any-return]


class _Optional(BaseModel):
    x: Optional[int] = None  # noqa: UP045 - the spelling under test


class _Nullable(BaseModel):
    x: int | None


class _Enum(BaseModel):
    x: Color


class _IntEnum(BaseModel):
    x: Level


class _Nested(BaseModel):
    x: Address = Field(description="where")


class _ListOfModels(BaseModel):
    x: list[Address]


class _Dict(BaseModel):
    x: dict[str, int]


class _FreeDict(BaseModel):
    x: dict[str, Any]


class _Literal(BaseModel):
    x: Literal["a", "b"]


class _MixedLiteral(BaseModel):
    x: Literal["a", 1]


class _Const(BaseModel):
    x: Literal["only"]


class _Annotated(BaseModel):
    x: Annotated[str, Field(min_length=2, max_length=5, pattern="^[a-z]+$")]


class _Bounded(BaseModel):
    x: Annotated[int, Field(ge=0, lt=10, multiple_of=2)]


class _OptionalModel(BaseModel):
    x: Address | None = None


class _Set(BaseModel):
    x: set[int]


class _VarTuple(BaseModel):
    x: tuple[int, ...]


class _Cat(BaseModel):
    kind: Literal["cat"]
    meows: bool


class _Dog(BaseModel):
    kind: Literal["dog"]
    barks: bool


class _Discriminated(BaseModel):
    pet: Annotated[_Cat | _Dog, Field(discriminator="kind")]


CONVERSION_ROWS: list[tuple[str, type[BaseModel], str, dict[str, Any]]] = [
    (
        "optional",
        _Optional,
        "x",
        {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None, "title": "X"},
    ),
    ("nullable", _Nullable, "x", {"anyOf": [{"type": "integer"}, {"type": "null"}], "title": "X"}),
    (
        "enum-values-only",
        _Enum,
        "x",
        {"enum": ["red", "green"], "title": "Color", "type": "string"},
    ),
    ("int-enum", _IntEnum, "x", {"enum": [1, 2], "title": "Level", "type": "integer"}),
    (
        "nested-model-inlined",
        _Nested,
        "x",
        {
            "type": "object",
            "title": "Address",
            "description": "where",
            "properties": {
                "street": {"title": "Street", "type": "string"},
                "zip": {"pattern": r"^\d{5}$", "title": "Zip", "type": "string"},
            },
            "required": ["street", "zip"],
            "additionalProperties": True,
        },
    ),
    (
        "dict-of-int",
        _Dict,
        "x",
        {"type": "object", "additionalProperties": {"type": "integer"}, "title": "X"},
    ),
    ("free-dict", _FreeDict, "x", {"type": "object", "additionalProperties": True, "title": "X"}),
    ("literal", _Literal, "x", {"enum": ["a", "b"], "type": "string", "title": "X"}),
    (
        "mixed-literal",
        _MixedLiteral,
        "x",
        {"enum": ["a", 1], "type": ["string", "integer"], "title": "X"},
    ),
    ("const", _Const, "x", {"const": "only", "type": "string", "title": "X"}),
    (
        "annotated-string",
        _Annotated,
        "x",
        {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$", "title": "X"},
    ),
    (
        "annotated-int",
        _Bounded,
        "x",
        {"type": "integer", "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 2, "title": "X"},
    ),
    (
        "set",
        _Set,
        "x",
        {"type": "array", "items": {"type": "integer"}, "uniqueItems": True, "title": "X"},
    ),
    (
        "variadic-tuple",
        _VarTuple,
        "x",
        {"type": "array", "items": {"type": "integer"}, "title": "X"},
    ),
]


@pytest.mark.parametrize(
    ("model", "field", "expected"),
    [pytest.param(m, f, e, id=i) for i, m, f, e in CONVERSION_ROWS],
)
def test_conversion(model: type[BaseModel], field: str, expected: dict[str, Any]) -> None:
    assert _prop(model, field) == expected


def test_list_of_models_names_properties_in_items() -> None:
    items = _prop(_ListOfModels, "x")["items"]
    assert items["type"] == "object"
    assert set(items["properties"]) == {"street", "zip"}


def test_optional_model_keeps_null_half_and_inlines() -> None:
    node = _prop(_OptionalModel, "x")
    assert node["anyOf"][1] == {"type": "null"}
    assert node["anyOf"][0]["properties"]["street"] == {"title": "Street", "type": "string"}


def test_discriminated_union_becomes_anyof() -> None:
    node = _prop(_Discriminated, "pet")
    assert "oneOf" not in node
    assert "discriminator" not in node
    assert [b["properties"]["kind"]["const"] for b in node["anyOf"]] == ["cat", "dog"]


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        pytest.param(Closed, False, id="forbid"),
        pytest.param(Open, True, id="allow"),
        pytest.param(Ignoring, True, id="ignore-accepts-and-drops"),
    ],
)
def test_extra_modes(model: type[BaseModel], expected: bool) -> None:
    assert tool_input_schema(model)["additionalProperties"] is expected


def test_no_refs_and_no_defs_remain() -> None:
    text = repr(tool_input_schema(_ListOfModels))
    assert "$ref" not in text
    assert "$defs" not in text


def _every_node(node: Any) -> Any:
    yield node
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            yield from _every_node(node[key])
    for sub in node.get("properties", {}).values():
        yield from _every_node(sub)
    for sub in node.get("anyOf", []):
        yield from _every_node(sub)


@pytest.mark.parametrize(
    "model", [row[1] for row in CONVERSION_ROWS] + [_Discriminated, _OptionalModel]
)
def test_every_node_has_exactly_one_of_type_or_anyof(model: type[BaseModel]) -> None:
    for node in _every_node(tool_input_schema(model)):
        assert ("type" in node) != ("anyOf" in node), node


# -- refusals -------------------------------------------------------------------------------


class _Tuple(BaseModel):
    pair: tuple[int, str]


class _Node(BaseModel):
    name: str
    children: list[_Node] = []


class _A(BaseModel):
    b: _B | None = None


class _B(BaseModel):
    a: _A | None = None


class _Any(BaseModel):
    blob: Any


class _ListAny(BaseModel):
    blobs: list[Any]


class _Deep(BaseModel):
    inner: _Tuple


REFUSAL_ROWS: list[tuple[str, object, str, str, tuple[str, ...]]] = [
    ("tuple", _Tuple, "tuple", "_Tuple.pair", ("tuple", "list[X]", "small model")),
    ("nested-tuple", _Deep, "tuple", "_Deep.inner.pair", ("tuple",)),
    ("recursive", _Node, "recursive", "_Node.children[]", ("recursive", "_Node", "by id")),
    ("mutual-recursion", _A, "recursive", "_A.b.a", ("recursive", "_A -> _B -> _A")),
    ("any", _Any, "any", "_Any.blob", ("typing.Any", "dict[str, Any]")),
    ("list-of-any", _ListAny, "any", "_ListAny.blobs[]", ("typing.Any",)),
    (
        "root-int",
        RootModel[int],
        "non_object_root",
        "RootModel[int]",
        ("not an object", "named fields"),
    ),
    (
        "root-list",
        RootModel[list[str]],
        "non_object_root",
        "RootModel[list[str]]",
        ("not an object",),
    ),
    ("plain-type", int, "not_a_model", "int", ("pydantic model", "BaseModel")),
    ("instance", Closed(a=1), "not_a_model", "", ("pydantic model",)),
]


@pytest.mark.parametrize(
    ("model", "construct", "field_path", "fragments"),
    [pytest.param(m, c, p, f, id=i) for i, m, c, p, f in REFUSAL_ROWS],
)
def test_refusals_name_construct_path_and_suggestion(
    model: object, construct: str, field_path: str, fragments: tuple[str, ...]
) -> None:
    with pytest.raises(SchemaConversionError) as caught:
        tool_input_schema(model)
    error = caught.value
    assert isinstance(error, AgentrigError)
    assert error.code == f"schema.conversion.{construct}"
    assert error.construct == construct
    if field_path:
        assert error.field_path == field_path
        assert str(error).startswith(field_path)
    assert error.suggestion
    assert " Use " in str(error)
    for fragment in fragments:
        assert fragment in str(error)
    assert error_info(error).category == "user"


def test_root_model_wrapping_a_model_is_an_object_root() -> None:
    schema = tool_input_schema(RootModel[Address])
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"street", "zip"}


def test_serialization_mode() -> None:
    class WithDefault(BaseModel):
        a: int = 1

    assert tool_input_schema(WithDefault, mode="serialization")["type"] == "object"


# -- the adapter ----------------------------------------------------------------------------


class Order(BaseModel):
    sku: Annotated[str, Field(min_length=3)]
    qty: Annotated[int, Field(ge=1)] = 1
    note: str | None = None
    color: Color = Color.RED

    @field_validator("sku")
    @classmethod
    def _no_test_skus(cls, value: str) -> str:
        if value.startswith("TEST"):
            raise ValueError("test SKUs are not orderable")
        return value


def test_adapter_is_a_schema_adapter() -> None:
    adapter = PydanticSchemaAdapter(Order)
    assert isinstance(adapter, SchemaAdapter)
    assert adapter.json_schema is adapter.json_schema
    assert adapter.json_schema == tool_input_schema(Order)
    assert adapter.model_type is Order


def test_adapter_parses_a_valid_value() -> None:
    order = parse_with(PydanticSchemaAdapter(Order), {"sku": "ABC", "qty": 2, "color": "green"})
    assert order == Order(sku="ABC", qty=2, color=Color.GREEN)


def test_adapter_reports_keyword_codes() -> None:
    with pytest.raises(SchemaValidationError) as caught:
        PydanticSchemaAdapter(Order).parse({"sku": "AB", "qty": True})
    codes = {(i.code, i.path) for i in caught.value.issues}
    assert codes == {("value.minLength", ("sku",)), ("value.type", ("qty",))}
    assert caught.value.recoverable


class Tags(BaseModel):
    tags: list[str]
    seen: ClassVar[list[object]] = []

    @field_validator("tags", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        cls.seen.append(value)
        return value.split(",") if isinstance(value, str) else value


def test_adapter_validates_once_with_the_model() -> None:
    """One validation: the model's own. A JSON-Schema pass in front of it would refuse the
    comma-separated string the model's ``before`` validator accepts."""
    Tags.seen.clear()
    parsed = PydanticSchemaAdapter(Tags).parse({"tags": "a,b"})
    assert Tags.seen == ["a,b"]  # the validator ran once, on the value as sent
    assert parsed.tags == ["a", "b"]


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ({"sku": "ABC", "qty": "5"}, "value.type"),  # no string-to-number coercion
        ({"sku": "ABC", "qty": 2.0}, "value.type"),  # strict: a whole float is not an int
        ({"sku": "ABC", "qty": float("nan")}, "value.not_json"),
        ({"sku": "\ud800", "qty": 1}, "value.json_invalid"),  # a lone surrogate: no JSON text
        (MappingProxyType({"sku": "ABC", "qty": 1}), "value.not_json"),  # a Mapping, no dict
        ({"sku": "ABC", "qty": 0}, "value.minimum"),
        ({"qty": 2}, "value.required"),
    ],
)
def test_adapter_validates_with_json_semantics(value: Mapping[str, object], code: str) -> None:
    with pytest.raises(SchemaValidationError) as caught:
        PydanticSchemaAdapter(Order).parse(value)
    assert caught.value.issues[0].code == code


def test_adapter_reports_model_validators_as_issues() -> None:
    with pytest.raises(SchemaValidationError) as caught:
        PydanticSchemaAdapter(Order).parse({"sku": "TEST1"})
    (issue,) = caught.value.issues
    assert issue.path == ("sku",)
    assert "not orderable" in issue.message


def test_adapter_ignore_mode_accepts_and_drops_extra_keys() -> None:
    assert validate_json({"a": 1, "b": 2}, tool_input_schema(Ignoring)) == ()
    parsed = PydanticSchemaAdapter(Ignoring).parse({"a": 1, "b": 2})
    assert parsed.model_dump() == {"a": 1}


def test_adapter_forbid_mode_rejects_extra_keys() -> None:
    with pytest.raises(SchemaValidationError) as caught:
        PydanticSchemaAdapter(Closed).parse({"a": 1, "b": 2})
    assert caught.value.issues[0].code == "value.additionalProperties"


def test_adapter_refuses_unconvertible_models_at_construction() -> None:
    with pytest.raises(SchemaConversionError):
        PydanticSchemaAdapter(_Node)


def test_adapter_bounds_hold() -> None:
    with pytest.raises(SchemaValidationError) as caught:
        PydanticSchemaAdapter(Order).parse({"sku": "x" * 2_000_000})
    assert caught.value.issues[0].code == "limit.string_length"


class Nested(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tree: dict[str, Any]


def _nested(depth: int) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for _ in range(depth):
        tree = {"a": tree}
    return tree


def test_adapter_reads_deep_input() -> None:
    adapter = PydanticSchemaAdapter(Nested, limits=Limits(max_depth=150))
    assert adapter.parse({"tree": _nested(100)}).tree == _nested(100)


def test_adapter_reports_input_too_deep_for_the_json_parser_as_before() -> None:
    # pydantic-core's encoder refuses nesting past about 250 levels, json's writes it, and
    # pydantic's JSON parser refuses it past 200: the issue is the parser's, as it always was
    adapter = PydanticSchemaAdapter(Nested, limits=Limits(max_depth=400))
    with pytest.raises(SchemaValidationError) as caught:
        adapter.parse({"tree": _nested(300)})
    assert [issue.code for issue in caught.value.issues] == ["value.json_invalid"]
    assert "recursion limit" in caught.value.issues[0].message
