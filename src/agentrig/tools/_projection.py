"""The engine that projects a tool's input schema onto what one provider's wire format accepts.

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

A target is a :class:`SchemaProfile`: switches for the rewrites every dialect shares, plus the
target's own node steps.  Each target lives in its own module (``_profile_openai``,
``_profile_openai_strict``, ``_profile_anthropic``, ``_profile_gemini``), as pydantic-ai keeps
one profile per provider; a provider plugin with its own dialect defines its own profile.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, NoReturn

import attrs

from ._jsonschema import _resolve_pointer

__all__ = [
    "Adapted",
    "Adopted",
    "Change",
    "ProjectionResult",
    "Rejected",
    "NodeStep",
    "SchemaProfile",
    "Site",
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
class Site:
    """Where a target's node step works: the path, whether the node is a union branch, and the
    means to record a change or refuse the schema."""

    path: Path
    branch: bool
    root: Mapping[str, Any]
    _projection: _Projection

    def where(self, path: Path | None = None) -> str:
        """A reader's label for ``path`` (default: this node), e.g. ``'address.zip'``."""
        return _where(self.path if path is None else path)

    def change(self, what: str, *, constraint: str | None = None, at: Path | None = None) -> None:
        """Record an adaptation; ``constraint`` names a real constraint that was not shown."""
        self._projection.change(self.path if at is None else at, what, constraint=constraint)

    def reject(self, reason: str) -> NoReturn:
        """Refuse the whole schema for this target."""
        raise _Reject(reason, self.path)


NodeStep = Callable[[dict[str, Any], Site], None]
"""A target's own rewrite of one projected node (edits the node in place)."""


@attrs.frozen(slots=True)
class SchemaProfile:
    """What one provider's tool-schema dialect accepts: shared switches plus its own steps.

    ``keywords`` lists the known keywords the provider carries (``None``: all of them); a
    known keyword outside it is rewritten where an equivalent exists (``const`` -> one-value
    ``enum``, ``oneOf`` -> ``anyOf``, single-type ``allOf`` merged) and dropped otherwise.
    ``unknown_keywords`` says what happens to a keyword agentrig does not know.  ``rewrites``
    run on each node after the shared rewrites (before uncarried keywords are dropped);
    ``completions`` run after the shared completions (items, properties, closing objects).
    """

    name: str
    keywords: frozenset[str] | None = None
    formats: frozenset[str] | None = None
    unknown_keywords: Literal["keep", "strip", "reject"] = "keep"
    type_with_anyof: Literal["keep", "reject"] = "keep"
    array_items: Literal["optional", "declare", "require"] = "optional"
    object_properties: bool = False
    close_objects: bool = False
    require_typed_nodes: bool = False
    inline_refs: bool = False
    string_enums_only: bool = False
    max_depth: int = 64
    max_nodes: int = 10_000
    max_object_depth: int | None = None
    max_total_properties: int | None = None
    rewrites: tuple[NodeStep, ...] = ()
    completions: tuple[NodeStep, ...] = ()


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

    def change(self, path: Path, what: str, *, constraint: str | None = None) -> None:
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
                self.change((*path, key), f"removed {key} (references are inlined)")
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
        self.change(path, f"inlined $ref '{ref}'")
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
                    self.change(path, f"removed unrecognised keyword '{key}'")
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
        if carried is not None:
            self._equivalents(out, path, carried)
        if profile.rewrites:
            site = Site(path, branch, self._schema, self)
            for step in profile.rewrites:
                step(out, site)
        if carried is not None:
            self._drop_uncarried(out, path, carried)

    def _equivalents(self, out: dict[str, Any], path: Path, carried: frozenset[str]) -> None:
        """Write uncarried ``const`` / ``oneOf`` / ``allOf`` as what the target carries."""
        profile = self._profile
        if "const" in out and "const" not in carried:
            value = out.pop("const")
            if (
                "enum" in carried
                and "enum" not in out
                and not (profile.string_enums_only and not isinstance(value, str))
            ):
                out["enum"] = [value]
                self.change(path, "wrote const as a one-value enum")
            else:
                self.change(path, "removed const", constraint="const")
        if "oneOf" in out and "oneOf" not in carried:
            members = out.pop("oneOf")
            if "anyOf" in carried and "anyOf" not in out:
                out["anyOf"] = members
                self.change(
                    path, "wrote oneOf as anyOf (exclusivity not shown)", constraint="oneOf"
                )
            else:
                self.change(path, "removed oneOf", constraint="oneOf")
        if "allOf" in out and "allOf" not in carried:
            members = out.pop("allOf")
            merged: dict[str, Any] = {}
            for member in members if isinstance(members, list) else []:
                if isinstance(member, Mapping):
                    merged = _merge(merged, dict(member), path)
            combined = _merge(merged, dict(out), path)
            out.clear()
            out.update(combined)
            self.change(path, "merged allOf members into the node")

    def _drop_uncarried(self, out: dict[str, Any], path: Path, carried: frozenset[str]) -> None:
        profile = self._profile
        fmt = out.get("format")
        known_format = (
            isinstance(fmt, str) and profile.formats is not None and fmt in profile.formats
        )
        if profile.formats is not None and "format" in out and not known_format:
            self.change(path, f"removed format {out.pop('format')!r}")
        for key in list(out):
            if key in KNOWN_KEYWORDS and key not in carried:
                value = out.pop(key)
                # additionalProperties: true (or {}) allows everything: removing it loses nothing
                lost = key in CONSTRAINT_KEYWORDS and not (
                    key == "additionalProperties" and (value is True or value == {})
                )
                self.change(path, f"removed {key}", constraint=key if lost else None)

    def _complete(self, out: dict[str, Any], path: Path) -> None:
        profile = self._profile
        types = _declared_types(out)
        if "array" in types and "items" not in out:
            if profile.array_items == "declare":
                out["items"] = {}
                self.change(path, "declared items: {} (any value)")
            elif profile.array_items == "require":
                raise _Reject(f"the array {_where(path)} must declare typed items", path)
        if "object" in types:
            if profile.object_properties and "properties" not in out:
                out["properties"] = {}
                self.change(path, "declared properties: {}")
            if profile.close_objects and out.get("additionalProperties") is not False:
                if isinstance(out.get("additionalProperties"), Mapping):
                    what = "replaced schema-valued additionalProperties with false"
                else:
                    what = "closed the object (additionalProperties: false)"
                out["additionalProperties"] = False
                self.change(path, what)
        if profile.completions:
            site = Site(path, False, self._schema, self)
            for step in profile.completions:
                step(out, site)
        if profile.require_typed_nodes and not any(k in out for k in _TYPED_MARKERS):
            raise _Reject(f"{_where(path)} declares no type; this provider needs one", path)


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
