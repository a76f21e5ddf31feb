"""The JSON-Schema subset validator and the schema-adapter contract.

:func:`validate_json` is the one traversal that checks a value against a tool's input schema
(or a structured-output schema).  It implements a documented subset of JSON Schema and owns
the depth and size bounds, so no caller keeps a second, possibly disagreeing, copy of either.

Why not the ``jsonschema`` library?  It is well kept and its keyword semantics match ours (it
counts code points, tells ``True`` from ``1``), but it does not fit the bounds: it recurses
once per nesting level with no depth or node budget (a 10,000-level list ends in
``RecursionError``), it has no size limits on strings, arrays or objects, and its error paths
would still need translating into :class:`~agentrig.errors.Issue`.  Wrapping it would mean a
bounds pre-pass over the value -- a second traversal, the thing this module exists to avoid --
plus a new dependency (``jsonschema`` pulls in ``referencing`` and the native ``rpds-py``) for
a subset that fits in one small function.  So the subset is implemented here.

Semantics worth knowing:

* ``integer`` accepts ``1`` and ``1.0`` (JSON has one number type); ``bool`` is never a number.
* ``enum``, ``const`` and ``uniqueItems`` compare by JSON equality: ``1 == 1.0`` but
  ``True != 1``.
* ``minLength``/``maxLength`` count code points (Python ``len``), so an emoji is one.
* ``pattern`` is searched, not anchored, as JSON Schema says.  Patterns are written for
  ECMA-262 but run on Python's ``re``: the flag ``re.ASCII`` keeps ``\\d``/``\\w``/``\\b`` to
  ASCII as ECMA does, and an unescaped ``$`` outside a character class is read as end of input
  (Python's ``$`` would also match before a trailing newline).  ECMA-only syntax such as
  ``(?<name>...)`` or ``\\p{L}`` does not compile; such a schema fails closed with a
  ``schema.pattern_invalid`` issue.  ``\\s`` stays ASCII whitespace under ``re.ASCII``.
* A keyword applies to the value according to the value's JSON type, whatever the node's
  declared ``type``: ``maxLength`` on an ``anyOf`` node still bounds a string.
* ``additionalProperties`` absent means extra keys are allowed (standard JSON Schema).  Schemas
  converted from pydantic always state it, so the question never arises for them.
* Unknown keywords (``format``, ``title``, ``prefixItems``, ...) are ignored: handlers own
  business rules.  Properties are looked up as the mapping's own keys; ``"__proto__"`` is just
  a key.
* ``$ref`` resolves local JSON pointers only (``#``, ``#/$defs/X``, ``#/definitions/X``, with
  ``~0``/``~1`` escapes); a reference cycle that never descends into the value is reported as
  ``schema.ref_cycle`` instead of looping.

Bounds (:class:`Limits`) are about the value, and exceeding one stops validation with a single
``limit.*`` issue -- never a ``RecursionError``.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Protocol, TypeGuard, TypeVar, runtime_checkable
from urllib.parse import unquote

import attrs

from agentrig.errors import AgentrigError, Category, Issue

__all__ = [
    "DEFAULT_LIMITS",
    "Limits",
    "SchemaAdapter",
    "SchemaContractError",
    "SchemaValidationError",
    "check_bounds",
    "parse_with",
    "validate_json",
]

PathPart = str | int
Path = tuple[PathPart, ...]

_T_co = TypeVar("_T_co", covariant=True)
_T = TypeVar("_T")

# Keywords that apply a subschema to the same value.  A node carrying one of them leaves the
# walk of the value's children to those subschemas instead of walking them itself.
_APPLICATORS = frozenset(("$ref", "allOf", "anyOf", "oneOf"))
_STRUCTURE = frozenset(("items", "properties", "additionalProperties"))
# Set tests on the schema's keys let a node skip the keyword groups it does not use: a tool
# input is validated on every call, and most nodes use two or three keywords.
_APPLICATORS_AND_NOT = _APPLICATORS | {"not"}
_NUMBER_KEYWORDS = frozenset(
    ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
)
_STRING_KEYWORDS = frozenset(("minLength", "maxLength", "pattern"))


@attrs.frozen(slots=True)
class Limits:
    """Bounds on the value being validated; exceeding one is a ``limit.*`` issue.

    ``max_depth`` counts nested arrays/objects; ``max_nodes`` counts (value, subschema) visits,
    so it also bounds the work of unions; ``max_schema_depth`` bounds subschemas applied to one
    value without descending into it (``$ref`` chains, nested ``allOf``).
    """

    max_depth: int = 64
    max_nodes: int = 100_000
    max_string_length: int = 1_000_000
    max_items: int = 100_000
    max_properties: int = 10_000
    max_schema_depth: int = 256


DEFAULT_LIMITS = Limits()


class SchemaValidationError(AgentrigError, ValueError):
    """A value does not satisfy its schema; ``issues`` say where and why."""

    code = "schema.validation"
    category: Category = "user"
    recoverable = True

    def __init__(self, issues: Sequence[Issue], *, subject: str = "value") -> None:
        lines = "\n  ".join(str(issue) for issue in issues)
        super().__init__(f"invalid {subject}:\n  {lines}", issues=issues)


class SchemaContractError(AgentrigError, TypeError):
    """A schema adapter broke its contract (for example ``parse`` returned an awaitable)."""

    code = "schema.contract"


@runtime_checkable
class SchemaAdapter(Protocol[_T_co]):
    """A tool's input (or output) schema: the JSON Schema shown to the model plus a parser.

    ``parse`` is synchronous: it validates and converts, returns the value, and raises on bad
    input.  Returning an awaitable is a contract error (see :func:`parse_with`).
    """

    @property
    def json_schema(self) -> Mapping[str, Any]: ...

    def parse(self, value: object) -> _T_co: ...


def parse_with(adapter: SchemaAdapter[_T], value: object) -> _T:
    """Run ``adapter.parse(value)``, refusing an awaitable result.

    An awaitable is never taken for a parsed value: a coroutine is closed (so it never runs and
    never warns "was never awaited"), a future is cancelled and its outcome consumed (so a late
    failure is not reported as unhandled), then :class:`SchemaContractError` is raised.
    """
    result = adapter.parse(value)
    if inspect.isawaitable(result):
        _discard_awaitable(result)
        raise SchemaContractError(
            f"{type(adapter).__name__}.parse returned an awaitable "
            f"({type(result).__name__}); parse must be synchronous -- validate eagerly and do "
            "asynchronous work in the tool's execute"
        )
    return result


def _discard_awaitable(awaitable: object) -> None:
    close = getattr(awaitable, "close", None)
    if inspect.iscoroutine(awaitable) or inspect.isgenerator(awaitable):
        awaitable.close()
        return
    add_done_callback = getattr(awaitable, "add_done_callback", None)
    cancel = getattr(awaitable, "cancel", None)
    if callable(add_done_callback) and callable(cancel):
        add_done_callback(_consume_outcome)
        cancel()
    elif callable(close):
        close()


def _consume_outcome(future: Any) -> None:
    if not future.cancelled():
        future.exception()


def validate_json(
    value: object, schema: Mapping[str, Any] | bool, *, limits: Limits = DEFAULT_LIMITS
) -> tuple[Issue, ...]:
    """Check ``value`` against ``schema``; an empty tuple means valid.

    Every problem found is an :class:`~agentrig.errors.Issue` whose ``path`` leads to the
    offending part of the value (``("items", 0, "name")``).  A bound of ``limits`` that is
    exceeded stops the walk with one ``limit.*`` issue.
    """
    walker = _Walker(schema, limits)
    try:
        return tuple(walker.check(value, schema, (), 0, 0))
    except _Stop as stop:
        return (stop.issue,)
    except RecursionError:  # a caller already deep in its own stack; still an issue, not a crash
        return (Issue("limit.schema_depth", "the schema nests too deeply to check"),)


def check_bounds(value: object, limits: Limits = DEFAULT_LIMITS) -> tuple[Issue, ...]:
    """Check only that ``value`` is JSON within ``limits`` -- no schema.

    The guard in front of a validator without bounds of its own (pydantic), so a value is
    still validated once: by that validator.
    """
    if type(value) is dict and _flat_within(value, limits):
        return ()
    walker = _Walker(True, limits)
    try:
        walker.bounds(value, (), 0)
    except _Stop as stop:
        return (stop.issue,)
    return ()


_SCALARS = frozenset({int, bool, type(None)})


def _flat_within(value: dict[Any, Any], limits: Limits) -> bool:
    """True when ``value`` is a flat object of plain scalars the walk would pass.

    Most tool inputs are; the walk costs a few microseconds per call on the loop's path.
    Anything else (nesting, subclasses, a non-finite float, a bound reached) is left to it.
    """
    if len(value) > limits.max_properties or len(value) >= limits.max_nodes:
        return False
    if limits.max_depth < 1:
        return False
    longest = limits.max_string_length
    for key, item in value.items():
        if type(key) is not str:
            return False
        kind = type(item)
        if kind is str:
            if len(item) > longest:
                return False
        elif kind is float:
            if not math.isfinite(item):
                return False
        elif kind not in _SCALARS:
            return False
    return True


class _Stop(Exception):
    def __init__(self, issue: Issue) -> None:
        super().__init__(issue.message)
        self.issue = issue


def _json_type(value: object) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number" if math.isfinite(value) else None
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return None


def _has_type(value: object, kind: str, name: object) -> bool:
    if name == "number":
        return kind in ("integer", "number")
    if name == "integer":
        return kind == "integer" or (kind == "number" and float(value).is_integer())  # type: ignore[arg-type]
    return kind == name


def _is_number(x: object) -> TypeGuard[int | float]:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _describe(kind: str, value: object) -> str:
    if kind == "number" and isinstance(value, float) and value.is_integer():
        return "number"
    return kind


class _Walker:
    __slots__ = ("_active", "_limits", "_nodes", "_refs", "_root")

    def __init__(self, root: object, limits: Limits) -> None:
        self._root = root
        self._limits = limits
        self._nodes = 0
        self._refs: dict[str, tuple[object, str | None]] = {}
        self._active: set[tuple[str, int, int]] = set()

    # -- the traversal --------------------------------------------------------------------

    def _step(self, path: Path, depth: int) -> None:
        limits = self._limits
        self._nodes += 1
        if self._nodes > limits.max_nodes:
            raise _Stop(
                Issue("limit.nodes", f"validation stopped after {limits.max_nodes} steps", path)
            )
        if depth > limits.max_depth:
            raise _Stop(
                Issue("limit.depth", f"value nests deeper than {limits.max_depth} levels", path)
            )

    def bounds(self, value: object, path: Path, depth: int) -> None:
        """Walk ``value`` checking the limits and JSON-ness only (see :func:`check_bounds`)."""
        self._step(path, depth)
        kind = _json_type(value)
        if kind is None:
            raise _Stop(
                Issue("value.not_json", f"a {type(value).__name__} is not a JSON value", path)
            )
        self._check_size(value, kind, path)
        if isinstance(value, list | tuple):
            for index, item in enumerate(value):
                self.bounds(item, (*path, index), depth + 1)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise _Stop(Issue("value.not_json", f"the key {key!r} is not a string", path))
                self.bounds(item, (*path, key), depth + 1)

    def check(
        self, value: object, schema: object, path: Path, depth: int, hops: int
    ) -> list[Issue]:
        limits = self._limits
        self._step(path, depth)
        if hops > limits.max_schema_depth:
            raise _Stop(
                Issue(
                    "limit.schema_depth",
                    f"schema applies more than {limits.max_schema_depth} nested subschemas",
                    path,
                )
            )
        kind = _json_type(value)
        if kind is None:
            return [Issue("value.not_json", f"a {type(value).__name__} is not a JSON value", path)]
        self._check_size(value, kind, path)
        if schema is True:
            schema = {}
        elif schema is False:
            return [Issue("value.false_schema", "no value is allowed here", path)]
        elif not isinstance(schema, Mapping):
            return [
                Issue(
                    "schema.malformed",
                    f"the schema here is a {type(schema).__name__}, not an object or boolean",
                    path,
                )
            ]
        out: list[Issue] = []
        self._check_value_keywords(value, kind, schema, path, out)
        if kind == "array":
            self._check_array(value, schema, path, depth, hops, out)  # type: ignore[arg-type]
        elif kind == "object":
            self._check_object(value, schema, path, depth, hops, out)  # type: ignore[arg-type]
        self._check_applicators(value, schema, path, depth, hops, out)
        return out

    def _check_size(self, value: object, kind: str, path: Path) -> None:
        limits = self._limits
        if kind == "string" and len(value) > limits.max_string_length:  # type: ignore[arg-type]
            raise _Stop(
                Issue(
                    "limit.string_length",
                    f"string is longer than {limits.max_string_length} characters",
                    path,
                )
            )
        if kind == "array" and len(value) > limits.max_items:  # type: ignore[arg-type]
            raise _Stop(Issue("limit.items", f"array has more than {limits.max_items} items", path))
        if kind == "object" and len(value) > limits.max_properties:  # type: ignore[arg-type]
            raise _Stop(
                Issue(
                    "limit.properties",
                    f"object has more than {limits.max_properties} properties",
                    path,
                )
            )

    def _check_value_keywords(
        self, value: Any, kind: str, schema: Mapping[str, Any], path: Path, out: list[Issue]
    ) -> None:
        keys = schema.keys()
        declared = schema.get("type")
        if declared is not None:
            names = declared if isinstance(declared, list | tuple) else [declared]
            if not any(_has_type(value, kind, name) for name in names):
                wanted = " or ".join(str(n) for n in names)
                out.append(
                    Issue("value.type", f"expected {wanted}, got {_describe(kind, value)}", path)
                )
        if "enum" in schema and isinstance(schema["enum"], list | tuple):
            key = self._canon(value, 0)
            if not any(key == self._canon(option, 0) for option in schema["enum"]):
                shown = ", ".join(_short(o) for o in schema["enum"][:10])
                out.append(Issue("value.enum", f"expected one of: {shown}", path))
        if "const" in schema and self._canon(value, 0) != self._canon(schema["const"], 0):
            out.append(Issue("value.const", f"expected {_short(schema['const'])}", path))
        if kind in ("integer", "number"):
            if not keys.isdisjoint(_NUMBER_KEYWORDS):
                _check_number(value, schema, path, out)
        elif kind == "string" and not keys.isdisjoint(_STRING_KEYWORDS):
            _check_string(value, schema, path, out)

    def _check_array(
        self,
        value: Sequence[Any],
        schema: Mapping[str, Any],
        path: Path,
        depth: int,
        hops: int,
        out: list[Issue],
    ) -> None:
        size = len(value)
        low, high = schema.get("minItems"), schema.get("maxItems")
        if _is_number(low) and size < low:
            out.append(Issue("value.minItems", f"expected at least {low} items, got {size}", path))
        if _is_number(high) and size > high:
            out.append(Issue("value.maxItems", f"expected at most {high} items, got {size}", path))
        items = schema.get("items", True)
        if isinstance(items, list | tuple):  # the pre-2020 tuple form is outside the subset
            items = True
        if "items" in schema or schema.keys().isdisjoint(_APPLICATORS):
            for index, item in enumerate(value):
                out += self.check(item, items, (*path, index), depth + 1, hops + 1)
        if schema.get("uniqueItems") is True:
            seen: dict[object, int] = {}
            for index, item in enumerate(value):
                key = self._canon(item, 0)
                if key in seen:
                    out.append(
                        Issue(
                            "value.uniqueItems",
                            f"item {index} repeats item {seen[key]}; items must be unique",
                            path,
                        )
                    )
                    break
                seen[key] = index

    def _check_object(
        self,
        value: Mapping[Any, Any],
        schema: Mapping[str, Any],
        path: Path,
        depth: int,
        hops: int,
        out: list[Issue],
    ) -> None:
        _check_object_bounds(value, schema, path, out)
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            properties = {}
        extra = schema.get("additionalProperties", True)
        keys = schema.keys()
        walk_all = not keys.isdisjoint(_STRUCTURE) or keys.isdisjoint(_APPLICATORS)
        for key, child in value.items():
            if not isinstance(key, str):
                out.append(
                    Issue(
                        "value.not_json", f"object key {key!r} is not a string", (*path, str(key))
                    )
                )
                continue
            if len(key) > self._limits.max_string_length:
                raise _Stop(Issue("limit.string_length", "a property name is too long", path))
            if key in properties:
                sub = properties[key]
            elif extra is False:
                out.append(
                    Issue(
                        "value.additionalProperties",
                        f"property '{key}' is not allowed here",
                        (*path, key),
                    )
                )
                continue
            else:
                sub = extra
            if walk_all:
                out += self.check(child, sub, (*path, key), depth + 1, hops + 1)

    def _check_applicators(
        self,
        value: object,
        schema: Mapping[str, Any],
        path: Path,
        depth: int,
        hops: int,
        out: list[Issue],
    ) -> None:
        if schema.keys().isdisjoint(_APPLICATORS_AND_NOT):
            return
        ref = schema.get("$ref")
        if isinstance(ref, str):
            out += self._check_ref(value, ref, path, depth, hops)
        all_of = schema.get("allOf")
        if isinstance(all_of, list | tuple):
            for sub in all_of:
                out += self.check(value, sub, path, depth, hops + 1)
        any_of = schema.get("anyOf")
        if isinstance(any_of, list | tuple):
            failures: list[list[Issue]] = []
            for sub in any_of:
                found = self.check(value, sub, path, depth, hops + 1)
                if not found:
                    break
                failures.append(found)
            else:
                out.append(_no_match("value.anyOf", failures, path))
        one_of = schema.get("oneOf")
        if isinstance(one_of, list | tuple):
            matched: list[int] = []
            failures = []
            for index, sub in enumerate(one_of):
                found = self.check(value, sub, path, depth, hops + 1)
                if found:
                    failures.append(found)
                else:
                    matched.append(index + 1)
            if not matched:
                out.append(_no_match("value.oneOf", failures, path))
            elif len(matched) > 1:
                which = " and ".join(str(i) for i in matched)
                out.append(
                    Issue(
                        "value.oneOf",
                        f"value matches alternatives {which}; exactly one must match",
                        path,
                    )
                )
        if "not" in schema and not self.check(value, schema["not"], path, depth, hops + 1):
            out.append(Issue("value.not", "value matches a schema it must not match", path))

    def _check_ref(self, value: object, ref: str, path: Path, depth: int, hops: int) -> list[Issue]:
        target, problem = self._resolve(ref)
        if problem is not None:
            return [Issue(problem, f"cannot resolve $ref '{ref}'", path)]
        key = (ref, depth, id(value))
        if key in self._active:
            return [
                Issue("schema.ref_cycle", f"$ref '{ref}' refers back to itself", path),
            ]
        self._active.add(key)
        try:
            return self.check(value, target, path, depth, hops + 1)
        finally:
            self._active.discard(key)

    def _resolve(self, ref: str) -> tuple[object, str | None]:
        cached = self._refs.get(ref)
        if cached is None:
            cached = _resolve_pointer(self._root, ref)
            self._refs[ref] = cached
        return cached

    # -- JSON equality ----------------------------------------------------------------------

    def _canon(self, value: object, depth: int) -> object:
        """A hashable key equal for JSON-equal values: ``1`` and ``1.0`` meet, ``True`` does not."""
        if depth > self._limits.max_depth:
            raise _Stop(Issue("limit.depth", "value nests too deeply to compare"))
        if isinstance(value, bool) or value is None:
            return ("b", value)
        if isinstance(value, int | float):
            return ("n", value)
        if isinstance(value, str):
            return ("s", value)
        if isinstance(value, list | tuple):
            return ("a", tuple(self._canon(v, depth + 1) for v in value))
        if isinstance(value, Mapping):
            return ("o", frozenset((k, self._canon(v, depth + 1)) for k, v in value.items()))
        return ("?", id(value))


def _resolve_pointer(root: object, ref: str) -> tuple[object, str | None]:
    if not ref.startswith("#"):
        return None, "schema.ref_unsupported"
    fragment = unquote(ref[1:])
    if fragment == "":
        return root, None
    if not fragment.startswith("/"):
        return None, "schema.ref_unsupported"
    node = root
    for raw in fragment[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list | tuple) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None, "schema.ref_unresolved"
    return node, None


def _no_match(code: str, failures: list[list[Issue]], path: Path) -> Issue:
    reasons = "; ".join(
        f"({i}) {found[0].message}"
        + (f" at {found[0].location()}" if found[0].path != path else "")
        for i, found in enumerate(failures, 1)
        if found
    )
    return Issue(code, f"value matches none of the {len(failures)} alternatives: {reasons}", path)


def _short(value: object) -> str:
    text = repr(value) if not isinstance(value, str) else f"'{value}'"
    if value is None:
        text = "null"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    return text if len(text) <= 40 else text[:37] + "..."


def _check_number(value: Any, schema: Mapping[str, Any], path: Path, out: list[Issue]) -> None:
    minimum, maximum = schema.get("minimum"), schema.get("maximum")
    ex_min, ex_max = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if ex_min is True and _is_number(minimum):  # the draft-4 boolean form
        ex_min, minimum = minimum, None
    if ex_max is True and _is_number(maximum):
        ex_max, maximum = maximum, None
    if _is_number(minimum) and value < minimum:
        out.append(Issue("value.minimum", f"expected at least {minimum}, got {value}", path))
    if _is_number(maximum) and value > maximum:
        out.append(Issue("value.maximum", f"expected at most {maximum}, got {value}", path))
    if _is_number(ex_min) and value <= ex_min:
        out.append(
            Issue("value.exclusiveMinimum", f"expected more than {ex_min}, got {value}", path)
        )
    if _is_number(ex_max) and value >= ex_max:
        out.append(
            Issue("value.exclusiveMaximum", f"expected less than {ex_max}, got {value}", path)
        )
    step = schema.get("multipleOf")
    if _is_number(step) and step > 0 and not _is_multiple(value, step):
        out.append(Issue("value.multipleOf", f"expected a multiple of {step}, got {value}", path))


def _is_multiple(value: int | float, step: int | float) -> bool:
    if isinstance(value, int) and isinstance(step, int):
        return value % step == 0
    try:
        # Decimal of the shortest repr makes 0.3 a multiple of 0.1, as a JSON reader expects.
        return Decimal(repr(value)) % Decimal(repr(step)) == 0
    except (InvalidOperation, ArithmeticError):
        quotient = value / step
        return math.isfinite(quotient) and quotient == round(quotient)


def _check_string(value: str, schema: Mapping[str, Any], path: Path, out: list[Issue]) -> None:
    size = len(value)
    low, high = schema.get("minLength"), schema.get("maxLength")
    if _is_number(low) and size < low:
        out.append(
            Issue("value.minLength", f"expected at least {low} characters, got {size}", path)
        )
    if _is_number(high) and size > high:
        out.append(
            Issue("value.maxLength", f"expected at most {high} characters, got {size}", path)
        )
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        compiled = _compile_pattern(pattern)
        if compiled is None:
            out.append(
                Issue(
                    "schema.pattern_invalid",
                    f"the schema's pattern {pattern!r} is not a supported regular expression",
                    path,
                )
            )
        elif compiled.search(value) is None:
            out.append(Issue("value.pattern", f"does not match the pattern {pattern!r}", path))


@lru_cache(maxsize=512)
def _compile_pattern(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(_ecma_anchors(pattern), re.ASCII)
    except (re.error, OverflowError, RecursionError):
        return None


def _ecma_anchors(pattern: str) -> str:
    """Rewrite each unescaped ``$`` outside a character class to ``\\Z`` (end of input)."""
    out: list[str] = []
    escaped = in_class = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            out.append(r"\Z")
            continue
        out.append(char)
    return "".join(out)


def _check_object_bounds(
    value: Mapping[Any, Any], schema: Mapping[str, Any], path: Path, out: list[Issue]
) -> None:
    """``minProperties``, ``maxProperties`` and ``required`` of an object."""
    size = len(value)
    low, high = schema.get("minProperties"), schema.get("maxProperties")
    if _is_number(low) and size < low:
        out.append(
            Issue("value.minProperties", f"expected at least {low} properties, got {size}", path)
        )
    if _is_number(high) and size > high:
        out.append(
            Issue("value.maxProperties", f"expected at most {high} properties, got {size}", path)
        )
    required = schema.get("required")
    if isinstance(required, list | tuple):
        for name in required:
            if isinstance(name, str) and name not in value:
                out.append(
                    Issue("value.required", f"missing required property '{name}'", (*path, name))
                )
