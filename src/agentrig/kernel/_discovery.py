"""Plugin discovery: list entry points without importing them, import on first use.

A :class:`PluginIndex` merges its sources (:mod:`._merge`: replacements recorded, conflicts
kept visible).  A load failure is remembered (the CLI's plugin report shows it) and raised
wherever the entry is required, so a broken plugin breaks only the compositions that use it.

Disabling: by name (``"openai"``, any kind) or kind-qualified (``"providers:openai"``), from
config or from ``AGENTRIG_DISABLE_PLUGINS`` (comma-separated).  With autoloading off
(``AGENTRIG_DISABLE_PLUGIN_AUTOLOAD=1`` or ``plugins.autoload = false``) only the core's and
the ``plugins.enabled`` listener plugins load.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, final

import attrs

from agentrig._plugin_env import (
    CORE_DISTRIBUTION,
    DISABLE_AUTOLOAD_ENV,
    DISABLE_PLUGINS_ENV,
    env_plugin_settings,
)
from agentrig._seams import SEAMS_GROUP
from agentrig.diagnostics import get_logger
from agentrig.errors import (
    Issue,
    PluginConflictError,
    PluginDisabledError,
    PluginLoadError,
    UnknownIdError,
    closest_match,
    did_you_mean,
)
from agentrig.kernel._contracts import KINDS, ContractViolation, group_of
from agentrig.kernel._entry_points import (
    CONTRACTS_GROUP,
    FORMATS_GROUP,
    IMPORTERS_GROUP,
    agentrig_entry_points,
    installation_state,
)
from agentrig.kernel._merge import Merged, conflict_error, merge_sources, prefer_issues

if TYPE_CHECKING:
    from agentrig.schemas import SchemaRegistry
    from agentrig.variants import VariantRegistry

__all__ = [
    "CORE_GROUPS",
    "DISABLE_AUTOLOAD_ENV",
    "DISABLE_PLUGINS_ENV",
    "CORE_DISTRIBUTION",
    "EntryPointSource",
    "EntrySpec",
    "KIND_GROUPS",
    "MemorySource",
    "PluginIndex",
    "PluginSource",
    "builtin_source",
    "env_plugin_settings",
    "register_schemas",
    "register_variants",
]


#: The groups discovery reads: one per plugin kind (from every distribution), and those it
#: reads from the core distribution only (what the core hands the kernel from above it).
KIND_GROUPS: tuple[str, ...] = tuple(group_of(kind) for kind in KINDS)
CORE_GROUPS = frozenset({CONTRACTS_GROUP, FORMATS_GROUP, IMPORTERS_GROUP, SEAMS_GROUP})
_log = get_logger("plugins")


@final
@attrs.frozen(slots=True)
class EntrySpec:
    """One discoverable contribution, not yet imported."""

    kind: str
    name: str
    value: str
    distribution: str | None
    version: str | None
    load: Callable[[], object] = attrs.field(eq=False, repr=False)

    @property
    def group(self) -> str:
        return group_of(self.kind)

    def describe(self) -> str:
        dist = f"{self.distribution} {self.version or ''}".strip() if self.distribution else "?"
        return f"{dist}: entry point {self.group}:{self.name} = {self.value}"


class PluginSource(Protocol):
    """Anything that can list entries (without importing them)."""

    def entries(self) -> Iterable[EntrySpec]: ...


@final
class EntryPointSource:
    """Installed distributions' entry points, one group per kind (read once, lazily), of
    ``distributions`` only when given (:func:`builtin_source` is the core's own)."""

    def __init__(
        self, kinds: Iterable[str] | None = None, *, distributions: Iterable[str] | None = None
    ) -> None:
        self._kinds = tuple(kinds) if kinds is not None else tuple(KINDS)
        self._distributions = frozenset(distributions) if distributions is not None else None
        self._cache: tuple[EntrySpec, ...] | None = None

    def entries(self) -> Iterable[EntrySpec]:
        if self._cache is None:
            state = installation_state()
            key = (self._kinds, state)
            cached = _LISTINGS.get(key)
            if cached is None:
                cached = _LISTINGS[key] = self._read(state)
            if self._distributions is not None:
                cached = tuple(e for e in cached if e.distribution in self._distributions)
            self._cache = cached
        return self._cache

    def _read(self, state: tuple[tuple[str, int], ...]) -> tuple[EntrySpec, ...]:
        installed = agentrig_entry_points(state)
        return tuple(
            EntrySpec(
                kind=kind,
                name=found.entry.name,
                value=found.entry.value,
                distribution=found.distribution,
                version=found.version,
                load=found.entry.load,
            )
            for kind in self._kinds
            for found in installed.get(group_of(kind), ())
        )


# A process opening many runtimes reads the installed entry points once per installation
# state (see ``agentrig.kernel._entry_points``) and builds each kinds' listing once.
_LISTINGS: dict[tuple[tuple[str, ...], tuple[tuple[str, int], ...]], tuple[EntrySpec, ...]] = {}


def builtin_source(kinds: Iterable[str] | None = None) -> EntryPointSource:
    """The core distribution's own entry points (of ``kinds``; default all): no third party.

    Tests compose from the built-ins alone with ``sources=[builtin_source()]``.
    """
    return EntryPointSource(kinds, distributions=(CORE_DISTRIBUTION,))


@final
class MemorySource:
    """In-memory entries for tests: add, replace and remove without installing anything."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], EntrySpec] = {}

    def add(
        self,
        kind: str,
        name: str,
        obj: object,
        *,
        distribution: str = "memory",
        version: str | None = None,
    ) -> None:
        """Contribute ``obj`` as ``kind`` entry ``name`` (replacing an installed one)."""
        self.add_lazy(kind, name, lambda: obj, distribution=distribution, version=version)

    def add_lazy(
        self,
        kind: str,
        name: str,
        load: Callable[[], object],
        *,
        distribution: str = "memory",
        version: str | None = None,
    ) -> None:
        """Contribute an entry whose object is produced by ``load`` on first use."""
        if kind not in KINDS:
            raise UnknownIdError(
                f"unknown plugin kind {kind!r} (known: {', '.join(KINDS)})",
                id=kind,
                known=tuple(KINDS),
                suggestion=None,
            )
        self._entries[(kind, name)] = EntrySpec(kind, name, "<memory>", distribution, version, load)

    def remove(self, kind: str, name: str) -> None:
        self._entries.pop((kind, name), None)

    def entries(self) -> Iterable[EntrySpec]:
        return tuple(self._entries.values())


@final
class PluginIndex:
    """Every discoverable entry and its load state."""

    def __init__(
        self,
        sources: Sequence[PluginSource] | None = None,
        *,
        disabled: Iterable[str] = (),
        autoload: bool = True,
        enabled: Iterable[str] = (),
        prefer: Mapping[str, str] | None = None,
    ) -> None:
        self._sources = tuple(sources) if sources is not None else (EntryPointSource(),)
        self.disabled = frozenset(disabled)
        self.autoload = autoload
        self.enabled = frozenset(enabled)
        self.prefer: Mapping[str, str] = dict(prefer or {})
        self._merged: Merged | None = None
        self._listing: tuple[EntrySpec, ...] = ()
        self._by_kind: dict[str | None, tuple[EntrySpec, ...]] = {}
        self._loaded: dict[tuple[str, str], object] = {}
        self._errors: dict[tuple[str, str], PluginLoadError] = {}

    # ---- listing -----------------------------------------------------------------------------
    def merged(self) -> Merged:
        """The sources merged (read once): each (kind, name)'s entry, conflicts, replacements."""
        if self._merged is None:
            listings = [tuple(source.entries()) for source in self._sources]
            self._listing = tuple(e for listing in listings for e in listing)
            self._merged = merge_sources(listings, self.prefer)
        return self._merged

    def conflict_error(self, kind: str, name: str) -> PluginConflictError:
        """The error naming every distribution that registers ``kind:name``."""
        return conflict_error(kind, name, self.merged().conflicts.get((kind, name), ()))

    def setting_issues(self, disabled: Sequence[str] = ()) -> list[Issue]:
        """Problems of the plugin switches themselves: a ``[plugins.prefer]`` entry choosing
        nothing, a ``[plugins] disabled`` name (pass the config's list) matching nothing."""
        self.merged()
        issues = prefer_issues(self.prefer, self._listing)
        if not disabled:
            return issues
        names = sorted({e.name for e in self._listing})
        for position, item in enumerate(disabled):
            kind, sep, name = item.rpartition(":")
            found = any(e.name == name and (not sep or e.kind == kind) for e in self._listing)
            if found:
                continue
            hint = did_you_mean(name, names)
            issues.append(
                Issue(
                    "config.plugin_unknown",
                    f"no installed plugin is named {item!r}{hint} -- a name that matches "
                    "nothing disables nothing",
                    ("plugins", "disabled", position),
                )
            )
        return issues

    def entries(self, kind: str | None = None) -> tuple[EntrySpec, ...]:
        """Entries (of one kind, or all), without importing anything."""
        found = self._by_kind.get(kind)
        if found is None:
            chosen = self.merged().chosen.values()
            found = tuple(e for e in chosen if kind is None or e.kind == kind)
            self._by_kind[kind] = found
        return found

    def names(self, kind: str) -> tuple[str, ...]:
        return tuple(e.name for e in self.entries(kind))

    def find(self, kind: str, name: str) -> EntrySpec | None:
        return self.merged().chosen.get((kind, name))

    def is_disabled(self, kind: str, name: str) -> bool:
        return name in self.disabled or f"{kind}:{name}" in self.disabled

    # ---- loading -------------------------------------------------------------------------------
    def require_entry(self, kind: str, name: str) -> EntrySpec:
        entry = self.find(kind, name)
        if entry is None:
            known = sorted(self.names(kind))
            hint = did_you_mean(name, known)
            raise UnknownIdError(
                f"no {kind} plugin named {name!r} is installed{hint} "
                f"(installed: {', '.join(known) or 'none'}; entry-point group {group_of(kind)})",
                id=name,
                known=known,
                suggestion=closest_match(name, known),
            )
        return entry

    def load(self, kind: str, name: str) -> object:
        """Import, check and cache one entry; raises on unknown, disabled or broken entries."""
        key = (kind, name)
        if key in self._loaded:
            return self._loaded[key]
        if key in self._errors:
            raise self._errors[key]
        entry = self.require_entry(kind, name)
        if self.is_disabled(kind, name):
            raise PluginDisabledError(
                f"{kind} plugin {name!r} is disabled ({entry.describe()}); remove it from "
                f"plugins.disabled / {DISABLE_PLUGINS_ENV} to use it"
            )
        candidates = self.merged().conflicts.get(key)
        if candidates is not None:
            raise conflict_error(kind, name, candidates)
        try:
            obj = entry.load()
        except Exception as exc:
            error = self._fail(entry, f"import failed: {type(exc).__name__}: {exc}")
            raise error from exc
        try:
            checked = KINDS[kind](obj, name)
        except ContractViolation as exc:
            raise self._fail(entry, exc.rule) from None
        except Exception as exc:
            error = self._fail(entry, f"contract check crashed: {type(exc).__name__}: {exc}")
            raise error from exc
        self._loaded[key] = obj if checked is None else checked
        return self._loaded[key]

    def fail(self, kind: str, name: str, rule: str) -> PluginLoadError:
        """Record a failure found after loading (e.g. a factory producing a broken object)."""
        self._loaded.pop((kind, name), None)
        return self._fail(self.require_entry(kind, name), rule)

    def _fail(self, entry: EntrySpec, rule: str) -> PluginLoadError:
        error = PluginLoadError(
            f"plugin {entry.describe()} is broken: {rule}",
            kind=entry.kind,
            name=entry.name,
            distribution=entry.distribution,
            entry_point=f"{entry.group}:{entry.name}",
            rule=rule,
        )
        self._errors[(entry.kind, entry.name)] = error
        return error

    def autoload_names(self, kind: str = "plugins") -> tuple[str, ...]:
        """Names of listener plugins this index would load into a runtime."""
        entries = self.entries(kind)
        if self.autoload:
            chosen = tuple(e.name for e in entries)
        else:
            chosen = tuple(
                e.name
                for e in entries
                if e.distribution == CORE_DISTRIBUTION
                or e.name in self.enabled
                or f"{kind}:{e.name}" in self.enabled
            )
        return tuple(n for n in chosen if not self.is_disabled(kind, n))

    # ---- state -------------------------------------------------------------------------------
    def failure(self, kind: str, name: str) -> PluginLoadError | None:
        """The error that entry's load failed with (remembered: it is raised again)."""
        return self._errors.get((kind, name))

    def is_loaded(self, kind: str, name: str) -> bool:
        return (kind, name) in self._loaded


def _usable_entries(kind: str, index: PluginIndex | None) -> Iterator[tuple[EntrySpec, Any]]:
    """The loaded enabled entries of ``kind``; a broken one is logged (and remembered by
    :meth:`PluginIndex.load`) and skipped.  ``index`` defaults to the
    installed entry points with the environment's plugin switches."""
    if index is None:
        index = PluginIndex(disabled=env_plugin_settings(os.environ)[0])
    for entry in index.entries(kind):
        if index.is_disabled(entry.kind, entry.name):
            continue
        try:
            loaded = index.load(entry.kind, entry.name)
        except Exception as exc:  # load() remembered it; the others still load
            _log.warning("%s entry %s was not loaded: %s", kind, entry.name, exc)
            continue
        yield entry, loaded


def register_variants(registry: VariantRegistry[Any], index: PluginIndex | None = None) -> None:
    """Register the members of ``registry``'s family contributed by ``agentrig.variants`` entries.

    A family's ``loader`` (``VariantRegistry(Base, loader=register_variants)``): it runs once,
    when the family is sealed.
    """
    for entry, members in _usable_entries("variants", index):
        for member in members:
            if member.family == registry.family:
                registry.register(member, source=entry.describe())


def register_schemas(registry: SchemaRegistry, index: PluginIndex | None = None) -> None:
    """Let every ``agentrig.schemas`` entry (``register(registry)``) define its persisted
    schemas in ``registry``: the loader of ``agentrig.schemas.SCHEMAS`` (agentrig's
    ``agentrig.seams`` entry point ``schemas``), run once, when a schema
    nobody defined is looked up or the names are listed."""
    for entry, register in _usable_entries("schemas", index):
        try:
            register(registry)
        except Exception as exc:  # one plugin's broken registrar leaves the others' schemas
            _log.warning("schemas entry %s failed: %s", entry.name, exc)
