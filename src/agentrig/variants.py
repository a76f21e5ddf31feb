"""Declaration-merged tagged unions.

Session events, stream chunks and content blocks are *families*: each member is a frozen
pydantic model with a literal ``type`` tag.  Core registers its members; a plugin adds new
ones through the ``agentrig.variants`` entry-point group without editing core.  Sealing a
family builds the discriminated union used for parsing.

A record whose tag nobody registered is not an error: it parses into the family's opaque
*unknown* member, which keeps the raw data and dumps it back byte-for-byte equal, so a
session written by a newer plugin survives a round trip through a host that lacks it.
"""

from __future__ import annotations

import threading
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, ClassVar, Generic, TypeVar, cast, final

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    SerializeAsAny,
    Tag,
    TypeAdapter,
    model_serializer,
    model_validator,
)

from agentrig._seams import SEAMS_GROUP, seam_entry
from agentrig.errors import SealedCatalogError, VariantError

__all__ = [
    "UNKNOWN_TAG",
    "SEAMS_GROUP",
    "Variant",
    "VariantRegistry",
    "discovered_members",
]

UNKNOWN_TAG = "__unknown__"
"""The discriminator value used internally for tags no registered member claims."""


class Variant(BaseModel):
    """Base of every family member: frozen, strict about unknown fields, tagged by ``type``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str

    #: Family name; set on each family's base class.
    family: ClassVar[str] = ""

    @property
    def is_unknown(self) -> bool:
        """True for a record whose tag no installed plugin knows."""
        return False


_B = TypeVar("_B", bound=Variant)


def _tag_of(model: type[Variant]) -> str:
    field = model.model_fields.get("type")
    if field is None:
        raise VariantError(f"{model.__qualname__} has no 'type' field")
    args = typing.get_args(field.annotation)
    if typing.get_origin(field.annotation) is not typing.Literal or len(args) != 1:
        raise VariantError(
            f"{model.__qualname__}.type must be annotated Literal['<tag>'] with exactly one tag, "
            f"got {field.annotation!r}"
        )
    tag = args[0]
    if not isinstance(tag, str) or not tag or tag == UNKNOWN_TAG:
        raise VariantError(f"{model.__qualname__}.type has an invalid tag {tag!r}")
    return tag


def _make_unknown(base: type[_B]) -> type[_B]:
    """Create the family's opaque member: any tag, raw data kept and written back unchanged."""

    def _wrap(cls: type[Any], data: Any) -> Any:
        if isinstance(data, Mapping) and "raw" in data and set(data) <= {"type", "raw"}:
            return data
        if not isinstance(data, Mapping):
            raise ValueError(f"a {base.family} record must be an object, got {type(data).__name__}")
        tag = data.get("type")
        return {"type": tag if isinstance(tag, str) else "", "raw": dict(data)}

    def _dump(self: Any) -> dict[str, Any]:
        return dict(self.raw)

    namespace: dict[str, Any] = {
        "__annotations__": {"type": str, "raw": dict[str, Any]},
        "__module__": base.__module__,
        "__doc__": f"A {base.family} record with a tag no installed plugin knows.",
        "model_config": ConfigDict(frozen=True, extra="forbid"),
        "raw": Field(default_factory=dict),
        "_wrap_raw": model_validator(mode="before")(classmethod(_wrap)),  # type: ignore[arg-type]
        "_dump_raw": model_serializer(mode="plain")(_dump),
        "is_unknown": property(lambda self: True),
    }
    return cast(type[_B], type(f"Unknown{base.__name__}", (base,), namespace))


@final
class VariantRegistry(Generic[_B]):
    """The members of one tagged-union family, fixed by ``seal`` (or the first ``parse``).

    A duplicate tag is refused unless ``replace=True`` (and the replacement is recorded).
    """

    def __init__(
        self,
        base: type[_B],
        *,
        loader: Callable[[VariantRegistry[_B]], None] | None = None,
    ) -> None:
        if not base.family:
            raise VariantError(f"{base.__qualname__} must set the ClassVar 'family'")
        self.base = base
        self.family = base.family
        self.unknown_type: type[_B] = _make_unknown(base)
        self._members: dict[str, type[_B]] = {}
        self._sources: dict[str, str | None] = {}
        self._replacements: list[tuple[str, str | None, str | None]] = []
        #: the compiled union (set by ``seal``)
        self._compiled: TypeAdapter[Any] | None = None
        self._loader = loader
        self._lock = threading.Lock()

    # registration -----------------------------------------------------------------
    def register(
        self, model: type[_B], *, replace: bool = False, source: str | None = None
    ) -> type[_B]:
        """Add a member; returns the model so it can be used as a class decorator."""
        if self._compiled is not None:
            raise SealedCatalogError(
                f"variant family {self.family!r} is sealed; register {model.__qualname__} "
                "before the first parse (or through the agentrig.variants entry points)"
            )
        if not (isinstance(model, type) and issubclass(model, self.base)):
            raise VariantError(
                f"{getattr(model, '__qualname__', model)!r} is not a subclass of "
                f"{self.base.__qualname__} (family {self.family!r})"
            )
        tag = _tag_of(model)
        if tag in self._members and not replace:
            raise VariantError(
                f"tag {tag!r} of family {self.family!r} is already registered by "
                f"{self._members[tag].__qualname__}; pass replace=True to shadow it"
            )
        if tag in self._members:
            self._replacements.append((tag, self._sources.get(tag), source))
        self._members[tag] = model
        self._sources[tag] = source
        return model

    def register_all(self, models: Iterable[type[_B]], *, source: str | None = None) -> None:
        for model in models:
            self.register(model, source=source)

    @property
    def sealed(self) -> bool:
        return self._compiled is not None

    def seal(self) -> None:
        """Fix the family and compile the discriminated union (idempotent)."""
        if self._compiled is not None:
            return
        with self._lock:
            if self.sealed:  # another thread sealed it while we waited
                return
            if self._loader is not None:
                loader, self._loader = self._loader, None
                loader(self)
            members = dict(self._members)

            def discriminate(value: Any) -> str:
                tag = (
                    value.get("type")
                    if isinstance(value, Mapping)
                    else getattr(value, "type", None)
                )
                if isinstance(value, Variant) and value.is_unknown:
                    return UNKNOWN_TAG
                return tag if isinstance(tag, str) and tag in members else UNKNOWN_TAG

            choices = [Annotated[m, Tag(t)] for t, m in members.items()]
            choices.append(Annotated[self.unknown_type, Tag(UNKNOWN_TAG)])
            union: Any = Annotated[typing.Union[tuple(choices)], Discriminator(discriminate)]  # noqa: UP007
            self._compiled = TypeAdapter(union)

    # queries ----------------------------------------------------------------------
    def tags(self) -> tuple[str, ...]:
        return tuple(self._members)

    def member(self, tag: str) -> type[_B] | None:
        return self._members.get(tag)

    def replacements(self) -> tuple[tuple[str, str | None, str | None], ...]:
        """``(tag, replaced_source, replacing_source)`` for every shadowed tag."""
        return tuple(self._replacements)

    # parsing ----------------------------------------------------------------------
    def _adapter(self) -> TypeAdapter[Any]:
        """The compiled union, sealing the family on first use."""
        if self._compiled is None:
            self.seal()
        assert self._compiled is not None
        return self._compiled

    def parse(self, data: Any) -> _B:
        """Parse one record; an unregistered tag gives the opaque unknown member."""
        if isinstance(data, self.base):
            return data
        return cast(_B, (self._compiled or self._adapter()).validate_python(data))

    def parse_json(self, raw: str | bytes) -> _B:
        return cast(_B, self._adapter().validate_json(raw))

    def dump(self, value: _B) -> dict[str, Any]:
        """JSON-ready dict of a member; an unknown member gives back its raw data unchanged."""
        return value.model_dump(mode="json")

    def annotation(self) -> Any:
        """A field annotation for one member of this family (parsed through this registry)."""
        member: Any = _serialize_as_any(self.base)
        return Annotated[member, BeforeValidator(self.parse)]

    def many_annotation(self) -> Any:
        """A field annotation for a tuple of members of this family."""
        member: Any = _serialize_as_any(self.base)
        many: Any = tuple.__class_getitem__((member, ...))
        return Annotated[many, BeforeValidator(self._coerce_many)]

    def _coerce_many(self, value: Any) -> Any:
        if type(value) is tuple:  # built members pass as they are (the loop's every message)
            base = self.base
            for item in value:
                if not isinstance(item, base):
                    break
            else:
                return value
        if isinstance(value, list | tuple):
            return tuple(self.parse(v) for v in value)
        return value


def _serialize_as_any(base: type[Variant]) -> Any:
    # SerializeAsAny[base] with a runtime class: dump the actual member's fields, not the base's.
    wrapper: Any = SerializeAsAny
    return wrapper[base]


def discovered_members(registry: VariantRegistry[Any]) -> None:
    """A family's ``loader`` that registers the members plugins contribute.

    The members are found by the kernel's plugin discovery (disable switches, the plugin
    report).  A primitive imports nothing above it, so the core distribution hands that
    function down through its own ``agentrig.seams`` entry point ``variants``; when the
    entry point is missing (a broken install) sealing fails instead of dropping members.
    """
    entry = seam_entry("variants")
    if entry is None:
        raise VariantError(
            f"family {registry.family!r} cannot load plugin members: agentrig's own entry "
            f"point {SEAMS_GROUP}:variants is missing (reinstall agentrig)"
        )
    entry.load()(registry)
