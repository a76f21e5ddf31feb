"""pydantic models to agentrig's canonical tool-schema shape, and the pydantic schema adapter.

:func:`tool_input_schema` starts from ``model.model_json_schema()`` and post-processes it into
the one shape every tool and structured-output schema has in agentrig:

* every node has exactly one of ``type`` / ``anyOf`` -- a node with both is refused, and so is a
  node with neither (``typing.Any``), because a model shown "anything" learns nothing;
* ``$defs`` are inlined, so each nested object names its own ``properties`` right where it is
  used and no provider has to follow a reference; a model that refers to itself (directly or
  through others) is therefore refused -- the subsets providers accept cannot carry it;
* ``Optional[X]`` keeps its ``null`` half (``anyOf: [X, {"type": "null"}]``): dropping it would
  make the model believe ``null`` is rejected when the author's model accepts it;
* ``Enum`` fields list only the enum's values (pydantic's own behaviour, kept);
* a single-member ``allOf`` (pydantic's wrapper for a field that adds annotations to a
  referenced model) is unwrapped; ``oneOf`` from a discriminated union becomes ``anyOf`` (the
  tag already makes the branches exclusive);
* fixed-position tuples (``prefixItems``) are refused: flattening them to a list would tell the
  model a laxer contract than the author wrote;
* every model states ``additionalProperties``: ``extra="forbid"`` gives ``false``;
  ``extra="allow"`` and the default ``extra="ignore"`` both give ``true`` -- with ``ignore`` the
  extra keys are accepted at the boundary and dropped by pydantic afterwards, so advertising
  ``false`` would tell consumers to reject payloads the model actually accepts;
* a root that is not an object (``RootModel[int]``, a plain type) is refused rather than
  turned into an empty object schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, PydanticUserError, ValidationError
from pydantic_core import PydanticSerializationError, to_json

from agentrig.errors import AgentrigError, Category, Issue

from ._jsonschema import DEFAULT_LIMITS, Limits, SchemaValidationError, check_bounds

__all__ = ["PydanticSchemaAdapter", "SchemaConversionError", "tool_input_schema"]

JsonSchemaMode = Literal["validation", "serialization"]
_M = TypeVar("_M", bound=BaseModel)

_VALUE_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"))


class SchemaConversionError(AgentrigError, ValueError):
    """A pydantic model uses a construct tool schemas cannot carry.

    ``code`` is ``schema.conversion.<construct>``; ``construct`` names it, ``field_path`` says
    where (``"Order.lines[].sku"``) and ``suggestion`` what to write instead.
    """

    code = "schema.conversion"
    category: Category = "user"

    def __init__(self, *, construct: str, field_path: str, why: str, suggestion: str) -> None:
        where = field_path or "the model"
        super().__init__(
            f"{where}: {_CONSTRUCT_NAMES.get(construct, construct)} cannot be used in a tool "
            f"schema -- {why}. Use {suggestion} instead.",
            code=f"schema.conversion.{construct}",
        )
        self.construct = construct
        self.field_path = field_path
        self.suggestion = suggestion


_CONSTRUCT_NAMES = {
    "not_a_model": "a value that is not a pydantic model class",
    "non_object_root": "a root that is not an object",
    "tuple": "a fixed-position tuple (tuple[X, Y])",
    "recursive": "a recursive (self-referencing) model",
    "any": "typing.Any (a value with no type)",
    "type_and_anyof": "a node declaring both type and anyOf",
    "intersection": "an intersection (allOf with several members)",
    "unsupported_type": "a type pydantic cannot describe in JSON Schema",
    "unresolved_ref": "a reference to an unknown definition",
}


def tool_input_schema(model: object, *, mode: JsonSchemaMode = "validation") -> dict[str, Any]:
    """The canonical JSON Schema of a pydantic model used as a tool's input.

    Raises :class:`SchemaConversionError` naming the construct, the field and an alternative
    when the model uses something the canonical shape refuses (see the module docstring).
    """
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise SchemaConversionError(
            construct="not_a_model",
            field_path=getattr(model, "__name__", repr(model)),
            why="a tool's input is described by a pydantic model",
            suggestion="a BaseModel subclass, e.g. class Input(BaseModel): value: int",
        )
    name = model.__name__
    try:
        raw = model.model_json_schema(mode=mode)
    except PydanticUserError as exc:
        raise SchemaConversionError(
            construct="unsupported_type",
            field_path=name,
            why=str(exc).splitlines()[0],
            suggestion="JSON-compatible field types (str, int, float, bool, list, dict, models)",
        ) from exc
    defs = raw.get("$defs", {})
    converter = _Converter(defs if isinstance(defs, Mapping) else {}, name)
    root = {k: v for k, v in raw.items() if k != "$defs"}
    out = converter.node(root, [], ())
    if out.get("type") != "object":
        raise SchemaConversionError(
            construct="non_object_root",
            field_path=name,
            why="a tool receives named arguments, so its input must be an object",
            suggestion="a model with named fields, e.g. class Input(BaseModel): value: int",
        )
    return out


class _Converter:
    def __init__(self, defs: Mapping[str, Any], model_name: str) -> None:
        self._defs = defs
        self._model = model_name

    def _where(self, path: list[str]) -> str:
        out = self._model
        for part in path:
            out += part if part.startswith("[") else f".{part}"
        return out

    def node(self, schema: object, path: list[str], stack: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(schema, Mapping) or not schema:
            raise self._untyped(path)
        node = dict(schema)
        ref = node.pop("$ref", None)
        if isinstance(ref, str):
            return self._merge(self._inline(ref, path, stack), node, path, stack)
        all_of = node.pop("allOf", None)
        if isinstance(all_of, list):
            if len(all_of) != 1:
                raise SchemaConversionError(
                    construct="intersection",
                    field_path=self._where(path),
                    why="the canonical shape has one type per node",
                    suggestion="one model that declares all the fields",
                )
            return self._merge(self.node(all_of[0], path, stack), node, path, stack)
        if "prefixItems" in node:
            raise SchemaConversionError(
                construct="tuple",
                field_path=self._where(path),
                why="the schema subset has no positional items, and a list of any type would "
                "hide the per-position types",
                suggestion="list[X] of one type, or a small model with one named field per "
                "position",
            )
        if "oneOf" in node:  # discriminated unions: the tag already keeps branches exclusive
            node["anyOf"] = node.pop("oneOf")
            node.pop("discriminator", None)
        return self._finish(node, path, stack)

    def _finish(
        self, node: dict[str, Any], path: list[str], stack: tuple[str, ...]
    ) -> dict[str, Any]:
        if "anyOf" in node:
            node["anyOf"] = [self.node(branch, path, stack) for branch in node["anyOf"]]
        if isinstance(node.get("properties"), Mapping):
            node["properties"] = {
                key: self.node(sub, [*path, key], stack) for key, sub in node["properties"].items()
            }
        if "items" in node:
            node["items"] = self.node(node["items"], [*path, "[]"], stack)
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping):
            node["additionalProperties"] = (
                True if not extra else self.node(extra, [*path, "{}"], stack)
            )
        if "type" not in node and "anyOf" not in node:
            derived = _type_of_values(node)
            if derived is None:
                raise self._untyped(path)
            node["type"] = derived
        if "type" in node and "anyOf" in node:
            raise SchemaConversionError(
                construct="type_and_anyof",
                field_path=self._where(path),
                why="a provider applies both and rejects whichever branch fails",
                suggestion="a plain union (X | Y) without extra type constraints",
            )
        if node.get("type") == "object" and "additionalProperties" not in node:
            # pydantic omits the member only for extra="ignore" (and plain dicts): both accept
            # unknown keys, so say so explicitly instead of leaving it to each reader.
            node["additionalProperties"] = True
        return node

    def _inline(self, ref: str, path: list[str], stack: tuple[str, ...]) -> dict[str, Any]:
        prefix = "#/$defs/"
        name = ref[len(prefix) :] if ref.startswith(prefix) else None
        if name is None or name not in self._defs:
            raise SchemaConversionError(
                construct="unresolved_ref",
                field_path=self._where(path),
                why=f"'{ref}' is not among the model's definitions",
                suggestion="ordinary model and field types",
            )
        if name in stack:
            cycle = " -> ".join((*stack[stack.index(name) :], name))
            raise SchemaConversionError(
                construct="recursive",
                field_path=self._where(path),
                why=f"'{name}' refers back to itself ({cycle}) and the schema subsets providers "
                "accept cannot carry a self-reference",
                suggestion="a bounded shape -- a separate child model without the "
                "back-reference, or children referred to by id (list[str])",
            )
        return self.node(self._defs[name], path, (*stack, name))

    def _merge(
        self,
        base: dict[str, Any],
        siblings: dict[str, Any],
        path: list[str],
        stack: tuple[str, ...],
    ) -> dict[str, Any]:
        if not siblings:
            return base
        # Field-level annotations (description, default, title) override the referenced ones.
        extra = self._finish_siblings(siblings, path, stack)
        merged = {**base, **extra}
        if "type" in merged and "anyOf" in merged:
            raise SchemaConversionError(
                construct="type_and_anyof",
                field_path=self._where(path),
                why="a provider applies both and rejects whichever branch fails",
                suggestion="a plain union (X | Y) without extra type constraints",
            )
        return merged

    def _finish_siblings(
        self, siblings: dict[str, Any], path: list[str], stack: tuple[str, ...]
    ) -> dict[str, Any]:
        structural = {"anyOf", "properties", "items", "additionalProperties", "oneOf"}
        if not structural.intersection(siblings):
            return siblings
        node = dict(siblings)
        if "oneOf" in node:
            node["anyOf"] = node.pop("oneOf")
        if "anyOf" in node:
            node["anyOf"] = [self.node(b, path, stack) for b in node["anyOf"]]
        if isinstance(node.get("properties"), Mapping):
            node["properties"] = {
                k: self.node(v, [*path, k], stack) for k, v in node["properties"].items()
            }
        if "items" in node:
            node["items"] = self.node(node["items"], [*path, "[]"], stack)
        return node

    def _untyped(self, path: list[str]) -> SchemaConversionError:
        return SchemaConversionError(
            construct="any",
            field_path=self._where(path),
            why="a node with neither type nor anyOf tells the model nothing about the value",
            suggestion="dict[str, Any] for a free-form object, or a concrete type or union",
        )


def _type_of_values(node: Mapping[str, Any]) -> str | list[str] | None:
    """The JSON types of an ``enum``/``const`` without a declared type (``Literal["a", 1]``)."""
    if "enum" in node and isinstance(node["enum"], list) and node["enum"]:
        values = list(node["enum"])
    elif "const" in node:
        values = [node["const"]]
    else:
        return None
    names: list[str] = []
    for value in values:
        name = "null" if value is None else None
        for python_type, json_name in _VALUE_TYPES:
            if name is None and isinstance(value, python_type):
                name = json_name
        if name is None:
            return None
        if name not in names:
            names.append(name)
    return names[0] if len(names) == 1 else names


class PydanticSchemaAdapter(Generic[_M]):
    """A :class:`~agentrig.tools.schema.SchemaAdapter` generated from a pydantic model.

    ``json_schema`` is :func:`tool_input_schema` of the model (computed once; treat it as
    read-only).  ``parse`` validates ONCE, with the model itself: the value is checked against
    the bounds (:func:`check_bounds`, no schema), then ``model_validate_json`` in strict mode
    runs the model's types, constraints and validators -- JSON semantics without coercion, so
    ``true`` is not an integer and ``"5"`` not a number, as the schema shown to the model says.
    """

    __slots__ = ("_limits", "_model", "_schema")

    def __init__(
        self,
        model_type: type[_M],
        *,
        limits: Limits = DEFAULT_LIMITS,
        mode: JsonSchemaMode = "validation",
    ) -> None:
        self._model = model_type
        self._schema = tool_input_schema(model_type, mode=mode)
        self._limits = limits

    @property
    def model_type(self) -> type[_M]:
        return self._model

    @property
    def json_schema(self) -> Mapping[str, Any]:
        return self._schema

    def parse(self, value: object) -> _M:
        """Validate ``value`` and return the model; :class:`SchemaValidationError` if invalid."""
        issues = check_bounds(value, self._limits)
        if issues:
            raise SchemaValidationError(issues, subject=self._subject())
        try:
            text = _json_text(value)
        except (TypeError, ValueError) as exc:  # a Mapping that is not a dict
            issue = Issue("value.not_json", f"the input cannot be written as JSON: {exc}")
            raise SchemaValidationError([issue], subject=self._subject()) from None
        try:
            return self._model.model_validate_json(text, strict=True)
        except ValidationError as exc:
            raise SchemaValidationError(_issues_of(exc), subject=self._subject()) from exc

    def _subject(self) -> str:
        return f"input for {self._model.__name__}"

    def __repr__(self) -> str:
        return f"PydanticSchemaAdapter({self._model.__name__})"


def _json_text(value: object) -> str | bytes:
    """``value`` (within the bounds: JSON values only, no NaN) as JSON text.

    pydantic-core's encoder writes what ``json.dumps`` would at about a fifth of its cost
    (13.7 k instructions for ``{"x": 1}``: json builds its C encoder on every call);
    what it refuses -- a lone surrogate, nesting deeper than its own limit (about 250) --
    goes to json's, as before.
    """
    try:
        return to_json(value)
    except PydanticSerializationError:
        return _ENCODE(value)


# one shared encoder: ``json.dumps`` with a keyword builds a new one per call
_ENCODE = json.JSONEncoder(allow_nan=False).encode

# pydantic's error types named by the JSON Schema keyword they enforce, so a pydantic-backed
# tool reports the same ``value.<keyword>`` codes as every other schema adapter.
_KEYWORD_OF = {
    "missing": "required",
    "extra_forbidden": "additionalProperties",
    "string_too_short": "minLength",
    "string_too_long": "maxLength",
    "too_short": "minItems",
    "too_long": "maxItems",
    "greater_than_equal": "minimum",
    "less_than_equal": "maximum",
    "greater_than": "exclusiveMinimum",
    "less_than": "exclusiveMaximum",
    "multiple_of": "multipleOf",
    "string_pattern_mismatch": "pattern",
    "enum": "enum",
    "literal_error": "enum",
}


def _code(kind: str) -> str:
    keyword = _KEYWORD_OF.get(kind)
    if keyword is None and kind.endswith("_type"):
        keyword = "type"
    return f"value.{keyword or kind}"


def _issues_of(error: ValidationError) -> list[Issue]:
    return [
        Issue(
            code=_code(item["type"]),
            message=item["msg"],
            path=tuple(p for p in item["loc"] if isinstance(p, str | int)),
        )
        for item in error.errors(include_url=False)
    ]
