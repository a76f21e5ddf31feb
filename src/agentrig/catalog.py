"""Read-only catalogs and sealable registries keyed by branded IDs (DESIGN §4.2).

A :class:`Registry` collects definitions until :meth:`Registry.seal`, then stays a stable
:class:`ReadonlyCatalog`.  A duplicate id needs ``replace=True`` and every replacement is
recorded, so shadowing is visible; ``require`` names the known ids and the closest match;
pure data is copied and frozen, objects with behaviour are stored as given; the internal
mapping is never handed out.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, Generic, TypeVar, cast, final

import attrs

from agentrig.errors import (
    DuplicateIdError,
    SealedCatalogError,
    UnknownIdError,
    closest_match,
    did_you_mean,
)

__all__ = ["CatalogKey", "ReadonlyCatalog", "Registry", "Replacement", "freeze_data"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@final
@attrs.frozen(slots=True)
class CatalogKey(Generic[K, V]):
    """The typed name of one runtime catalog: ``rt.catalog(TOOLS)`` is a
    ``ReadonlyCatalog[ToolId, Tool]``.  Each layer declares the key of the catalog it defines
    (``agentrig.tools.TOOLS``, ``agentrig.llm.PROVIDERS``, ...), so the kernel names no type
    above it and mypy still checks both the id and the definition."""

    name: str

    def __str__(self) -> str:
        return self.name


@attrs.frozen(slots=True)
class Replacement:
    """A record that ``id`` was re-registered: ``previous`` by ``replaced_by``."""

    id: str
    previous: str | None
    replaced_by: str | None


def freeze_data(value: Any) -> Any:
    """A deep, immutable copy of JSON-like data: mappings become read-only, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze_data(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze_data(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(freeze_data(v) for v in value)
    return value


def _store(definition: Any) -> Any:
    # Pure data is copied so a caller's later mutation cannot reach the catalog.
    if isinstance(definition, Mapping | list | tuple):
        return freeze_data(definition)
    model_copy = getattr(type(definition), "model_copy", None)
    if model_copy is not None and hasattr(type(definition), "model_fields"):
        if definition.model_config.get("frozen"):
            return definition  # already immutable
        return model_copy(definition, deep=True)
    return definition


def _default_id(definition: Any) -> Any:
    if isinstance(definition, Mapping):
        return definition["id"]
    return definition.id


class ReadonlyCatalog(Generic[K, V]):
    """A read-only view of id → definition."""

    __slots__ = ("_items", "_kind")

    def __init__(self, kind: str, items: Mapping[K, V] | None = None) -> None:
        self._kind = kind
        self._items: dict[K, V] = dict(items or {})

    @property
    def kind(self) -> str:
        """What the catalog holds (used in error messages), e.g. ``"provider"``."""
        return self._kind

    def ids(self) -> tuple[K, ...]:
        return tuple(self._items)

    def values(self) -> Iterator[V]:
        return iter(tuple(self._items.values()))

    def entries(self) -> Iterator[tuple[K, V]]:
        return iter(tuple(self._items.items()))

    def has(self, id: K) -> bool:
        return id in self._items

    def get(self, id: K) -> V | None:
        return self._items.get(id)

    def require(self, id: K) -> V:
        """The definition for ``id``, or an error naming the known ids and the closest match."""
        try:
            return self._items[id]
        except KeyError:
            known = sorted(str(k) for k in self._items)
            listing = ", ".join(repr(k) for k in known) if known else "none"
            raise UnknownIdError(
                f"unknown {self._kind} id {id!r}{did_you_mean(str(id), known)} (known: {listing})",
                id=str(id),
                known=known,
                suggestion=closest_match(str(id), known),
            ) from None

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, id: object) -> bool:
        return id in self._items

    def __iter__(self) -> Iterator[K]:
        return iter(tuple(self._items))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._kind} ids={list(self._items)!r}>"


@final
class Registry(ReadonlyCatalog[K, V]):
    """A catalog that accepts registrations until it is sealed."""

    __slots__ = ("_id_of", "_replacements", "_sealed", "_sources")

    def __init__(self, kind: str, *, id_of: Callable[[V], K] | None = None) -> None:
        super().__init__(kind)
        self._id_of: Callable[[V], K] = id_of or cast(Callable[[V], K], _default_id)
        self._sealed = False
        self._sources: dict[K, str | None] = {}
        self._replacements: list[Replacement] = []

    @property
    def sealed(self) -> bool:
        return self._sealed

    def register(
        self,
        definition: V,
        *,
        id: K | None = None,
        replace: bool = False,
        source: str | None = None,
    ) -> V:
        """Add ``definition`` under its id (or ``id``); returns what was stored."""
        if self._sealed:
            raise SealedCatalogError(
                f"the {self._kind} catalog is sealed; register {id or self._id_of(definition)!r} "
                "while composing the runtime, not after"
            )
        key = self._id_of(definition) if id is None else id
        if key in self._items and not replace:
            previous = self._sources.get(key)
            by = f" (registered by {previous})" if previous else ""
            raise DuplicateIdError(
                f"duplicate {self._kind} id {key!r}{by}; pass replace=True to replace it"
            )
        if key in self._items:
            self._replacements.append(Replacement(str(key), self._sources.get(key), source))
        stored = cast(V, _store(definition))
        self._items[key] = stored
        self._sources[key] = source
        return stored

    def register_all(self, definitions: Iterable[V], *, source: str | None = None) -> None:
        """Register each definition; does not seal."""
        for definition in definitions:
            self.register(definition, source=source)

    def seal(self) -> ReadonlyCatalog[K, V]:
        """Refuse further registrations; returns self as a read-only catalog."""
        self._sealed = True
        return self

    def source_of(self, id: K) -> str | None:
        """Who registered ``id`` (a distribution/entry point, or None)."""
        return self._sources.get(id)

    def replacements(self) -> tuple[Replacement, ...]:
        return tuple(self._replacements)
