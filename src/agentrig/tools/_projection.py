"""Projection of a tool's input schema onto what one provider's wire format accepts.

:func:`project_schema` is pure and deterministic: it never raises and never mutates its input.
Its outcome is one of

* :class:`Adopted` -- the provider takes the schema as it is; ``schema`` *is* the input object;
* :class:`Adapted` -- a projected deep copy plus the :class:`Change` list, and a ``note`` when a
  real constraint (something :func:`~agentrig.tools.schema.validate_json` enforces) was not
  shown to the provider; :func:`describe_with_note` appends it to the tool's description;
* :class:`Rejected` -- the provider cannot be given this schema, with the reason.

A projection only changes what goes on the wire.  Tool-call arguments are always validated
against the unprojected schema, so a relaxation made for wire compatibility -- e.g. OpenAI
strict mode's "optional becomes required-and-nullable" -- never widens what a call may contain.

The profiles are data (:class:`SchemaProfile`); a provider plugin with its own dialect defines
its own instance instead of branching on provider names.  Keyword support was checked against
the vendors' documentation in 2025 (OpenAI "Structured Outputs -- supported schemas"; Google
Gemini API / Vertex AI ``Schema`` reference, an OpenAPI 3.0 subset).  Vendors widen their
subsets over time; a stale profile only costs a dropped keyword, reported in the changes.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any, Literal

import attrs

from ._jsonschema import _resolve_pointer, validate_json

__all__ = [
    "ANTHROPIC",
    "GEMINI",
    "OPENAI",
    "OPENAI_STRICT",
    "Adapted",
    "Adopted",
    "Change",
    "ProjectionResult",
    "Rejected",
    "SchemaProfile",
    "describe_with_note",
    "project_schema",
]

Path = tuple[str | int, ...]

# Keywords the validator enforces: dropping one removes a real constraint.
CONSTRAINT_KEYWORDS = frozenset(
    {
        "type", "enum", "const", "properties", "required", "additionalProperties", "items",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems",
        "minProperties", "maxProperties", "allOf", "anyOf", "oneOf", "not", "$ref",
    }
)  # fmt: skip
# Keywords that describe without restricting (the validator ignores them).
ANNOTATION_KEYWORDS = frozenset(
    {
        "title", "description", "default", "examples", "example", "$comment", "$schema", "$id",
        "format", "deprecated", "readOnly", "writeOnly", "nullable", "propertyOrdering",
        "contentEncoding", "contentMediaType", "discriminator",
    }
)  # fmt: skip
_DEFS = ("$defs", "definitions")
KNOWN_KEYWORDS = CONSTRAINT_KEYWORDS | ANNOTATION_KEYWORDS | frozenset(_DEFS)
DANGEROUS_NAMES = frozenset({"__proto__", "constructor", "prototype"})
_TYPED_MARKERS = ("type", "anyOf", "$ref", "enum", "const")


@attrs.frozen(slots=True)
class SchemaProfile:
    """What one provider's tool-schema dialect accepts, as switches.

    ``keywords`` lists the known keywords the provider carries (``None``: all of them); a
    known keyword outside it is rewritten where an equivalent exists (``const`` -> one-value
    ``enum``, ``oneOf`` -> ``anyOf``, single-type ``allOf`` merged) and dropped otherwise.
    ``unknown_keywords`` says what happens to a keyword agentrig does not know.
    """

    name: str
    keywords: frozenset[str] | None = None
    formats: frozenset[str] | None = None
    unknown_keywords: Literal["keep", "strip", "reject"] = "keep"
    type_with_anyof: Literal["keep", "reject"] = "keep"
    array_items: Literal["optional", "declare", "require"] = "optional"
    object_properties: bool = False
    close_objects: bool = False
    require_all_properties: bool = False
    require_typed_nodes: bool = False
    inline_refs: bool = False
    nullable_flag: bool = False
    string_enums_only: bool = False
    max_depth: int = 64
    max_nodes: int = 10_000
    max_object_depth: int | None = None
    max_total_properties: int | None = None


# OpenAI docs, "Supported schemas" (checked 2025).
_OPENAI_STRICT_KEYWORDS = frozenset(
    {
        "type", "enum", "const", "properties", "required", "additionalProperties", "items",
        "anyOf", "$ref", "$defs", "definitions", "pattern", "format", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "title",
        "description",
    }
)  # fmt: skip
# Gemini API / Vertex AI Schema reference (checked 2025).
_GEMINI_KEYWORDS = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "items", "minItems",
        "maxItems", "properties", "required", "minProperties", "maxProperties", "minLength",
        "maxLength", "pattern", "minimum", "maximum", "anyOf", "default", "example",
        "propertyOrdering",
    }
)  # fmt: skip


ANTHROPIC = SchemaProfile(name="anthropic")
"""Standard JSON Schema with an object root: adopted unless it must be refused."""

OPENAI = SchemaProfile(name="openai", array_items="declare", object_properties=True)
"""OpenAI function calling without strict mode: arrays declare items, objects properties."""

OPENAI_STRICT = SchemaProfile(
    name="openai-strict",
    # OpenAI docs, "Supported schemas" (checked 2025): strings carry pattern and format;
    # numbers minimum/maximum/exclusive bounds/multipleOf; arrays minItems/maxItems.  Not
    # carried: minLength/maxLength, minProperties/maxProperties, uniqueItems, default, allOf,
    # not, and schema-valued additionalProperties.  Limits: 10 nesting levels, 5000 properties.
    keywords=_OPENAI_STRICT_KEYWORDS,
    formats=frozenset(
        {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
    ),
    unknown_keywords="reject",
    type_with_anyof="reject",
    array_items="require",
    object_properties=True,
    close_objects=True,
    require_all_properties=True,
    require_typed_nodes=True,
    max_object_depth=10,
    max_total_properties=5000,
)
"""OpenAI strict mode: closed objects, every property required (optional ones nullable)."""

GEMINI = SchemaProfile(
    name="gemini",
    # Gemini API / Vertex AI ``Schema`` reference (checked 2025): an OpenAPI 3.0 subset with
    # type, format, title, description, nullable, enum (strings), items, min/maxItems,
    # properties, required, min/maxProperties, min/maxLength, pattern, minimum/maximum,
    # anyOf, default, example, propertyOrdering.  No additionalProperties, $ref/$defs, const,
    # oneOf/allOf/not, exclusive bounds, multipleOf or uniqueItems; ``null`` is a flag.
    keywords=_GEMINI_KEYWORDS,
    formats=frozenset({"enum", "date-time"}),
    unknown_keywords="strip",
    type_with_anyof="reject",
    array_items="require",
    require_typed_nodes=True,
    inline_refs=True,
    nullable_flag=True,
    string_enums_only=True,
)
"""Gemini function declarations: OpenAPI 3.0 subset, references inlined, ``nullable`` flag."""


@attrs.frozen(slots=True)
class Change:
    """One adaptation: where (a path into the schema), what, and whether a constraint was lost."""

    path: Path
    what: str
    constraint_dropped: bool = False


@attrs.frozen(slots=True)
class Adopted:
    """The provider takes the schema unchanged; ``schema`` is the very object passed in."""

    schema: Mapping[str, Any]

    @property
    def changes(self) -> tuple[Change, ...]:
        return ()

    @property
    def note(self) -> str | None:
        return None


@attrs.frozen(slots=True)
class Adapted:
    """A projected copy of the schema with what changed and, if constraints were dropped, a note."""

    schema: dict[str, Any]
    changes: tuple[Change, ...]
    note: str | None = None


@attrs.frozen(slots=True)
class Rejected:
    """The schema cannot be given to this provider; ``reason`` says why, ``path`` where."""

    reason: str
    path: Path = ()

    @property
    def note(self) -> str | None:
        return None


ProjectionResult = Adopted | Adapted | Rejected


def describe_with_note(description: str, result: ProjectionResult) -> str:
    """The tool description to send with ``result``: the note, if any, as a trailing sentence."""
    note = result.note
    if not note:
        return description
    text = description.rstrip()
    return f"{text} {note}" if text else note


def project_schema(schema: Mapping[str, Any], profile: SchemaProfile) -> ProjectionResult:
    """Project ``schema`` for ``profile``: adopted, adapted or rejected -- never an exception."""
    try:
        return _Projection(schema, profile).run()
    except _Reject as rejection:
        return Rejected(rejection.reason, rejection.path)
    except Exception as exc:  # the contract is "never throws"; report instead
        return Rejected(f"internal error while projecting: {type(exc).__name__}: {exc}")


class _Reject(Exception):
    def __init__(self, reason: str, path: Path = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path


def _where(path: Path) -> str:
    """A reader's label for a schema path: ``'address.zip'``, ``'tags[]'``, ``the input``."""
    out = ""
    parts = list(path)
    i = 0
    while i < len(parts):
        part = parts[i]
        if part in ("properties", *_DEFS) and i + 1 < len(parts):
            name = str(parts[i + 1])
            out = f"{out}.{name}" if out else name
            i += 2
            continue
        if part == "items":
            out += "[]"
        elif part == "additionalProperties":
            out += "{}"
        i += 1
    return f"'{out}'" if out else "the input"


def _subschemas(node: Mapping[str, Any]) -> Iterator[tuple[Path, object]]:
    """The subschemas of a node (as written), with their relative paths."""
    for key in ("items", "not", "additionalProperties"):
        if key in node and isinstance(node[key], Mapping | bool):
            yield (key,), node[key]
    for key in ("properties", *_DEFS):
        members = node.get(key)
        if isinstance(members, Mapping):
            for name, sub in members.items():
                yield (key, name), sub
    for key in ("anyOf", "oneOf", "allOf"):
        members = node.get(key)
        if isinstance(members, list | tuple):
            for index, sub in enumerate(members):
                yield (key, index), sub


class _Projection:
    def __init__(self, schema: Mapping[str, Any], profile: SchemaProfile) -> None:
        self._schema = schema
        self._profile = profile
        self._changes: list[Change] = []
        self._dropped: list[str] = []
        self._nodes = 0
        self._properties = 0

    def run(self) -> ProjectionResult:
        schema, profile = self._schema, self._profile
        if not isinstance(schema, Mapping):
            raise _Reject(f"the root is a {type(schema).__name__}, not an object schema")
        _check_structure(schema, profile)
        if schema.get("type") != "object":
            raise _Reject("the root schema must be an object (type: object)")
        _check_refs(schema, profile)
        root: Mapping[str, Any] = schema
        if profile.inline_refs:
            root = self._inline(schema, ())
        self._nodes = 0
        projected = self._node(root, (), 0)
        if not self._changes:
            return Adopted(schema)
        note = None
        if self._dropped:
            listed = ", ".join(dict.fromkeys(self._dropped))
            note = f"Constraints not shown to this provider: {listed}."
        result = copy.deepcopy(projected)
        return Adapted(result, tuple(self._changes), note)

    # -- bookkeeping --------------------------------------------------------------------------

    def _change(self, path: Path, what: str, *, constraint: str | None = None) -> None:
        self._changes.append(Change(path, what, constraint is not None))
        if constraint is not None:
            self._dropped.append(f"{constraint} on {_where(path)}")

    def _count(self, path: Path) -> None:
        self._nodes += 1
        if self._nodes > self._profile.max_nodes:
            raise _Reject(f"the schema has more than {self._profile.max_nodes} nodes", path)

    # -- $ref inlining (profiles without references) ----------------------------------------

    def _inline(self, node: object, path: Path) -> Any:
        self._count(path)
        if not isinstance(node, Mapping):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DEFS:
                self._change((*path, key), f"removed {key} (references are inlined)")
                continue
            out[key] = value
        for rel, sub in _subschemas(node):
            key = str(rel[0])
            if key in _DEFS:
                continue
            inlined = self._inline(sub, (*path, *rel))
            if len(rel) == 1:
                out[key] = inlined
            elif isinstance(out[key], Mapping):
                out[key] = {**out[key], rel[1]: inlined}
            else:
                out[key] = [inlined if i == rel[1] else s for i, s in enumerate(out[key])]
        ref = out.pop("$ref", None)
        if not isinstance(ref, str):
            if ref is not None:
                out["$ref"] = ref
            return out
        target, _ = _resolve_pointer(self._schema, ref)
        self._change(path, f"inlined $ref '{ref}'")
        base = self._inline(target, path)
        if not isinstance(base, Mapping):
            base = {} if base is True else {"not": {}}
        return _merge(dict(base), out, path)

    # -- the projection of one node ---------------------------------------------------------

    def _node(self, node: object, path: Path, level: int, *, branch: bool = False) -> Any:
        profile = self._profile
        self._count(path)
        if isinstance(node, bool):
            if profile.require_typed_nodes:
                raise _Reject(
                    f"{_where(path)} is a boolean schema; this provider needs a type", path
                )
            return node
        if not isinstance(node, Mapping):
            raise _Reject(f"the schema at {_where(path)} is not an object", path)
        if profile.type_with_anyof == "reject" and "type" in node and "anyOf" in node:
            raise _Reject(f"{_where(path)} declares both type and anyOf", path)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key not in KNOWN_KEYWORDS:
                if profile.unknown_keywords == "reject":
                    raise _Reject(f"unrecognised keyword '{key}' at {_where(path)}", path)
                if profile.unknown_keywords == "strip":
                    self._change(path, f"removed unrecognised keyword '{key}'")
                    continue
            if key in ("not", "additionalProperties") and not self._carries(key):
                out[key] = value  # dropped by _rewrite; its subschema is never shown
            else:
                out[key] = self._children(key, value, path, level)
        self._rewrite(out, path, branch)
        self._complete(out, path)
        return out

    def _carries(self, key: str) -> bool:
        keywords = self._profile.keywords
        return keywords is None or key in keywords

    def _children(self, key: str, value: object, path: Path, level: int) -> Any:
        if key == "properties" and isinstance(value, Mapping):
            limit = self._profile.max_object_depth
            if limit is not None and level + 1 > limit:
                raise _Reject(f"objects nest more than {limit} levels deep", path)
            self._properties += len(value)
            total = self._profile.max_total_properties
            if total is not None and self._properties > total:
                raise _Reject(f"the schema declares more than {total} properties", path)
            return {
                name: self._node(sub, (*path, key, name), level + 1) for name, sub in value.items()
            }
        if key in _DEFS and isinstance(value, Mapping):
            return {name: self._node(sub, (*path, key, name), level) for name, sub in value.items()}
        if key in ("items", "not") and isinstance(value, Mapping | bool):
            return self._node(value, (*path, key), level)
        if key == "additionalProperties" and isinstance(value, Mapping):
            return self._node(value, (*path, key), level)
        if key in ("anyOf", "oneOf", "allOf") and isinstance(value, list | tuple):
            return [
                self._node(sub, (*path, key, i), level, branch=key != "allOf")
                for i, sub in enumerate(value)
            ]
        return value

    def _rewrite(self, out: dict[str, Any], path: Path, branch: bool) -> None:
        profile = self._profile
        carried = profile.keywords
        if carried is None:
            return
        if "const" in out and "const" not in carried:
            value = out.pop("const")
            if (
                "enum" in carried
                and "enum" not in out
                and not (profile.string_enums_only and not isinstance(value, str))
            ):
                out["enum"] = [value]
                self._change(path, "wrote const as a one-value enum")
            else:
                self._change(path, "removed const", constraint="const")
        if "oneOf" in out and "oneOf" not in carried:
            members = out.pop("oneOf")
            if "anyOf" in carried and "anyOf" not in out:
                out["anyOf"] = members
                self._change(
                    path, "wrote oneOf as anyOf (exclusivity not shown)", constraint="oneOf"
                )
            else:
                self._change(path, "removed oneOf", constraint="oneOf")
        if "allOf" in out and "allOf" not in carried:
            members = out.pop("allOf")
            merged: dict[str, Any] = {}
            for member in members if isinstance(members, list) else []:
                if isinstance(member, Mapping):
                    merged = _merge(merged, dict(member), path)
            combined = _merge(merged, dict(out), path)
            out.clear()
            out.update(combined)
            self._change(path, "merged allOf members into the node")
        if profile.nullable_flag:
            self._nullable_flag(out, path, branch)
        if profile.string_enums_only and isinstance(out.get("enum"), list):
            values = out["enum"]
            if None in values:
                out["enum"] = [v for v in values if v is not None]
                out["nullable"] = True
                self._change(path, "wrote null in enum as nullable: true")
            if not all(isinstance(v, str) for v in out["enum"]):
                del out["enum"]
                self._change(path, "removed a non-string enum", constraint="enum")
        fmt = out.get("format")
        known_format = (
            isinstance(fmt, str) and profile.formats is not None and fmt in profile.formats
        )
        if profile.formats is not None and "format" in out and not known_format:
            self._change(path, f"removed format {out.pop('format')!r}")
        for key in list(out):
            if key in KNOWN_KEYWORDS and key not in carried:
                value = out.pop(key)
                # additionalProperties: true (or {}) allows everything: removing it loses nothing
                lost = key in CONSTRAINT_KEYWORDS and not (
                    key == "additionalProperties" and (value is True or value == {})
                )
                self._change(path, f"removed {key}", constraint=key if lost else None)

    def _nullable_flag(self, out: dict[str, Any], path: Path, branch: bool) -> None:
        declared = out.get("type")
        if branch and _is_null_only(out):
            return  # the enclosing union turns it into nullable: true
        if declared == "null" or (isinstance(declared, list) and declared == ["null"]):
            raise _Reject(
                f"{_where(path)} only accepts null, which this provider cannot express", path
            )
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
            self._change(path, f"wrote the type list as {shape}{null}")
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
            self._change(path, "wrote the null alternative as nullable: true")

    def _complete(self, out: dict[str, Any], path: Path) -> None:
        profile = self._profile
        types = _declared_types(out)
        if "array" in types and "items" not in out:
            if profile.array_items == "declare":
                out["items"] = {}
                self._change(path, "declared items: {} (any value)")
            elif profile.array_items == "require":
                raise _Reject(f"the array {_where(path)} must declare typed items", path)
        if "object" in types:
            if profile.object_properties and "properties" not in out:
                out["properties"] = {}
                self._change(path, "declared properties: {}")
            if profile.close_objects and out.get("additionalProperties") is not False:
                if isinstance(out.get("additionalProperties"), Mapping):
                    what = "replaced schema-valued additionalProperties with false"
                else:
                    what = "closed the object (additionalProperties: false)"
                out["additionalProperties"] = False
                self._change(path, what)
            if profile.require_all_properties and isinstance(out.get("properties"), Mapping):
                self._require_all(out, path)
        if profile.require_typed_nodes and not any(k in out for k in _TYPED_MARKERS):
            raise _Reject(f"{_where(path)} declares no type; this provider needs one", path)

    def _require_all(self, out: dict[str, Any], path: Path) -> None:
        properties = dict(out["properties"])
        required = out.get("required")
        listed = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
        missing = [name for name in properties if name not in listed]
        if not missing:
            return
        for name in missing:
            sub = properties[name]
            if _accepts_null(sub, self._schema):
                self._change((*path, "properties", name), "made required (it already accepts null)")
            else:
                properties[name] = _with_null(sub)
                self._change(
                    (*path, "properties", name), "made required and nullable (it was optional)"
                )
        out["properties"] = properties
        out["required"] = listed + missing


def _check_structure(schema: Mapping[str, Any], profile: SchemaProfile) -> None:
    """Refuse object cycles, excessive depth or size, non-JSON values and dangerous names."""
    on_path: set[int] = set()
    count = 0
    stack: list[tuple[object, Iterator[tuple[object, object]], int]] = []

    def enter(obj: object, depth: int) -> None:
        nonlocal count
        count += 1
        if count > profile.max_nodes:
            raise _Reject(f"the schema has more than {profile.max_nodes} nodes")
        if depth > profile.max_depth:
            raise _Reject(f"the schema nests deeper than {profile.max_depth} levels")
        if id(obj) in on_path:
            raise _Reject("the schema contains a cycle (an object that contains itself)")
        on_path.add(id(obj))
        if isinstance(obj, Mapping):
            for key in obj:
                if not isinstance(key, str):
                    raise _Reject(f"the schema has a non-string key {key!r}")
                if key in DANGEROUS_NAMES:
                    raise _Reject(f"the schema uses the dangerous property name '{key}'")
            required = obj.get("required")
            if isinstance(required, list | tuple):
                for name in required:
                    if isinstance(name, str) and name in DANGEROUS_NAMES:
                        raise _Reject(f"the schema requires the dangerous property name '{name}'")
            items: Iterator[tuple[object, object]] = iter(obj.items())
        else:
            items = iter(enumerate(obj))  # type: ignore[arg-type]
        stack.append((obj, items, depth))

    enter(schema, 0)
    while stack:
        obj, items, depth = stack[-1]
        for _, child in items:
            if isinstance(child, Mapping | list | tuple):
                enter(child, depth + 1)
                break
            if not (child is None or isinstance(child, str | int | float)):
                raise _Reject(f"the schema holds a non-JSON value ({type(child).__name__})")
        else:
            stack.pop()
            on_path.discard(id(obj))


def _check_refs(schema: Mapping[str, Any], profile: SchemaProfile) -> None:
    """Refuse unresolvable or non-local references, reference cycles and excessive depth."""
    done: dict[str, int] = {}
    active: list[str] = []

    def height(node: object, depth: int) -> int:
        if depth > profile.max_depth:
            raise _Reject(
                f"the schema nests deeper than {profile.max_depth} levels with references"
            )
        if not isinstance(node, Mapping):
            return 0
        best = 0
        ref = node.get("$ref")
        if isinstance(ref, str):
            best = 1 + ref_height(ref, depth + 1)
        for _, sub in _subschemas(node):
            best = max(best, 1 + height(sub, depth + 1))
        return best

    def ref_height(ref: str, depth: int) -> int:
        if ref in active:
            cycle = " -> ".join((*active[active.index(ref) :], ref))
            raise _Reject(f"the schema has a reference cycle ({cycle})")
        if ref not in done:
            target, problem = _resolve_pointer(schema, ref)
            if problem is not None:
                raise _Reject(f"the $ref '{ref}' cannot be resolved locally")
            active.append(ref)
            done[ref] = height(target, depth)
            active.pop()
        if depth + done[ref] > profile.max_depth:
            raise _Reject(
                f"the schema nests deeper than {profile.max_depth} levels with references"
            )
        return done[ref]

    height(schema, 0)


def _merge(base: dict[str, Any], extra: dict[str, Any], path: Path) -> dict[str, Any]:
    """Combine two subschemas that both apply (``$ref`` siblings, ``allOf`` members)."""
    for key, value in extra.items():
        if key not in base or base[key] == value or key in ANNOTATION_KEYWORDS:
            base[key] = value
        elif key == "required" and isinstance(value, list) and isinstance(base[key], list):
            base[key] = base[key] + [n for n in value if n not in base[key]]
        elif (
            key == "properties"
            and isinstance(value, Mapping)
            and isinstance(base[key], Mapping)
            and not set(value).intersection(base[key])
        ):
            base[key] = {**base[key], **value}
        else:
            raise _Reject(f"cannot combine two different '{key}' at {_where(path)}", path)
    return base


def _declared_types(node: Mapping[str, Any]) -> set[str]:
    declared = node.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    return set()


def _is_null_only(node: object) -> bool:
    return isinstance(node, Mapping) and node.get("type") == "null" and "enum" not in node


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
