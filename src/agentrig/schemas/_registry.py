"""The registry of persisted-payload schemas and their forward migrations.

A *schema* is a name (``agentrig.session.event``) whose stored payloads carry a positive
integer *version*.  The package that owns the schema defines each version's shape and one
migration step from every version to the next; the newest defined version is *current*.
Reading data of an older version runs the steps in order, checking the payload against each
version's shape before the next step; data of a newer version than current is refused with
:class:`SchemaTooNewError`, never guessed at.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import attrs
from pydantic import BaseModel, TypeAdapter, ValidationError

from agentrig.schemas._errors import (
    MigrationFailedError,
    SchemaDefinitionError,
    SchemaTooNewError,
    UnknownSchemaError,
)

__all__ = ["Migration", "SchemaInfo", "SchemaRegistry", "Shape", "positive_version"]

#: what checks a payload of one version: a pydantic model class, a ``TypeAdapter``, or a
#: callable that raises (``ValueError``, ``TypeError``, ``ValidationError``) when it does not fit
Shape = type[BaseModel] | TypeAdapter[Any] | Callable[[Any], object]
#: one forward step: the payload of version N in, the payload of version N + 1 out
Migration = Callable[[Any], Any]
_M = TypeVar("_M", bound=Migration)


def positive_version(version: object) -> int | None:
    """``version`` when it is a positive integer (never a bool), else None."""
    if isinstance(version, int) and not isinstance(version, bool) and version >= 1:
        return version
    return None


@attrs.frozen(slots=True)
class SchemaInfo:
    """What the registry knows of one schema."""

    name: str
    #: the newest version: what writers write
    current: int
    #: the distribution that owns the schema (installing a newer one reads newer data)
    owner: str
    #: what to do when data is newer than the code (named by :class:`SchemaTooNewError`)
    upgrade: str
    #: the versions this code can read, oldest first
    versions: tuple[int, ...]


@attrs.define(slots=True)
class _Entry:
    owner: str
    upgrade: str
    shapes: dict[int, Shape] = attrs.Factory(dict)
    steps: dict[int, Migration] = attrs.Factory(dict)


def _check(name: str, version: int, shape: Shape, payload: Any) -> None:
    try:
        if isinstance(shape, TypeAdapter):
            shape.validate_python(payload)
        elif isinstance(shape, type):
            if not issubclass(shape, BaseModel):
                raise TypeError(f"{shape.__name__} is a class but not a pydantic model")
            shape.model_validate(payload)
        else:
            check: Callable[[Any], object] = shape
            check(payload)
    except (ValidationError, ValueError, TypeError) as exc:
        first = str(exc).strip().splitlines()
        raise MigrationFailedError(
            f"a stored {name} payload does not fit version {version} of its schema: "
            f"{'; '.join(first[:3]) or type(exc).__name__}"
        ) from exc


class SchemaRegistry:
    """Persisted-payload schemas by name: their versions' shapes and forward migrations.

    ``loader`` (optional) is called once with the registry, the first time a schema is
    looked up that nobody defined yet or the names are listed: it adds the schemas of
    installed plugins (the loader of :data:`~agentrig.schemas.SCHEMAS` reads the
    ``agentrig.schemas`` entry points through the kernel's discovery).
    """

    def __init__(self, *, loader: Callable[[SchemaRegistry], None] | None = None) -> None:
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.RLock()
        self._loader = loader

    # ---- registration ---------------------------------------------------------------------
    def define(
        self,
        name: str,
        version: int,
        shape: Shape,
        *,
        owner: str = "agentrig",
        upgrade: str | None = None,
    ) -> None:
        """Declare version ``version`` of schema ``name``, checked by ``shape``.

        ``owner`` is the distribution that owns the schema; only it defines versions and
        migrations of it.  ``upgrade`` says what to install when data is newer than this
        code (default: a newer ``owner``).
        """
        if not isinstance(name, str) or not name.strip():
            raise SchemaDefinitionError(f"a schema name must be a non-empty string, not {name!r}")
        if positive_version(version) is None:
            raise SchemaDefinitionError(
                f"schema {name}: a version must be a positive integer, not {version!r}"
            )
        with self._lock:
            entry = self._entries.get(name)
            if entry is None:
                hint = upgrade or f"install a newer {owner} (pip install --upgrade {owner})"
                entry = self._entries[name] = _Entry(owner, hint)
            elif entry.owner != owner:
                raise SchemaDefinitionError(
                    f"schema {name} is owned by {entry.owner}; {owner} cannot define its "
                    f"version {version} (choose a schema name of your own)"
                )
            if version in entry.shapes:
                raise SchemaDefinitionError(f"schema {name}: version {version} is defined twice")
            entry.shapes[version] = shape

    def add_migration(
        self, name: str, from_version: int, step: Migration, *, owner: str = "agentrig"
    ) -> None:
        """Register the step from version ``from_version`` of ``name`` to the next version.

        A step is a deterministic function of the payload alone (no clock, no randomness,
        no I/O): it gets its own copy of the payload and returns the next version's.
        """
        if positive_version(from_version) is None:
            raise SchemaDefinitionError(
                f"schema {name}: a migration starts at a positive integer version, "
                f"not {from_version!r}"
            )
        if not callable(step):
            raise SchemaDefinitionError(f"schema {name}: a migration step must be callable")
        with self._lock:
            entry = self._entries.get(name)
            if entry is None or entry.owner != owner:
                raise SchemaDefinitionError(
                    f"schema {name}: define its versions (as {owner}) before its migrations"
                )
            if from_version in entry.steps:
                raise SchemaDefinitionError(
                    f"schema {name}: the migration from version {from_version} is registered twice"
                )
            entry.steps[from_version] = step

    def migration(
        self, name: str, from_version: int, *, owner: str = "agentrig"
    ) -> Callable[[_M], _M]:
        """Decorator form of :meth:`add_migration`."""

        def register(step: _M) -> _M:
            self.add_migration(name, from_version, step, owner=owner)
            return step

        return register

    # ---- lookup ---------------------------------------------------------------------------
    def _load_plugins(self) -> None:
        with self._lock:
            loader, self._loader = self._loader, None
            if loader is not None:
                loader(self)

    def _entry(self, name: str) -> _Entry:
        entry = self._entries.get(name)
        if entry is None:
            self._load_plugins()
            entry = self._entries.get(name)
        if entry is None:
            known = ", ".join(sorted(self._entries)) or "none"
            raise UnknownSchemaError(
                f"no installed package defines the persisted schema {name!r} (known: {known}); "
                "install the plugin that wrote this data"
            )
        return entry

    def names(self) -> tuple[str, ...]:
        """Every defined schema's name (installed plugins' included), sorted."""
        self._load_plugins()
        return tuple(sorted(self._entries))

    def info(self, name: str) -> SchemaInfo:
        """The versions, owner and current version of ``name``; its steps must be complete."""
        entry = self._entry(name)
        versions = tuple(sorted(entry.shapes))
        for version in versions[:-1]:
            if version + 1 not in entry.shapes:
                raise SchemaDefinitionError(
                    f"schema {name}: version {version + 1} is missing between "
                    f"{version} and {versions[-1]}"
                )
            if version not in entry.steps:
                raise SchemaDefinitionError(
                    f"schema {name}: no migration from version {version} to {version + 1}"
                )
        return SchemaInfo(name, versions[-1], entry.owner, entry.upgrade, versions)

    def current(self, name: str) -> int:
        """The version writers of ``name`` write."""
        return self.info(name).current

    def check_version(self, name: str, version: object) -> int:
        """``version`` as a readable version of ``name``; refuses a newer or unreadable one."""
        info = self.info(name)
        found = positive_version(version)
        if found is None:
            raise MigrationFailedError(
                f"stored {name} data names version {version!r}; a version is a positive integer"
            )
        if found > info.current:
            raise SchemaTooNewError(name, found, info.current, info.upgrade)
        if found < info.versions[0]:
            raise MigrationFailedError(
                f"stored {name} data is version {found}; this code reads versions "
                f"{info.versions[0]} to {info.current} only (migrate it with an older release)"
            )
        return found

    def validate(self, name: str, version: int, payload: Any) -> None:
        """Check ``payload`` against version ``version`` of ``name``."""
        entry = self._entry(name)
        shape = entry.shapes.get(version)
        if shape is None:
            raise MigrationFailedError(f"schema {name} has no version {version}")
        _check(name, version, shape, payload)

    def upgrade(self, name: str, version: object, payload: Any) -> Any:
        """``payload`` (of ``version``) migrated to the current version, checked at each step.

        The source is checked against its own version first; each step's output against the
        next version before the step after it runs.  The caller's payload is not changed.
        """
        found = self.check_version(name, version)
        info = self.info(name)
        entry = self._entry(name)
        _check(name, found, entry.shapes[found], payload)
        if found == info.current:
            return payload
        data = copy.deepcopy(payload)
        for step_from in range(found, info.current):
            try:
                data = entry.steps[step_from](data)
            except (KeyError, ValueError, TypeError, AttributeError) as exc:
                raise MigrationFailedError(
                    f"migrating stored {name} data from version {step_from} to "
                    f"{step_from + 1} failed: {type(exc).__name__}: {exc}"
                ) from exc
            _check(name, step_from + 1, entry.shapes[step_from + 1], data)
        return data
