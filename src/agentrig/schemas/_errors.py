"""The errors of persisted-payload schemas: each names the schema and the versions involved."""

from __future__ import annotations

from typing import Any

from agentrig.errors import AgentrigError

__all__ = [
    "MigrationFailedError",
    "PersistedSchemaError",
    "SchemaDefinitionError",
    "SchemaTooNewError",
    "UnknownSchemaError",
]


class PersistedSchemaError(AgentrigError):
    """A stored payload's schema or version could not be read, checked or migrated."""

    code = "persisted.error"


class SchemaTooNewError(PersistedSchemaError):
    """Stored data was written by a newer version of its schema than this code reads.

    Refused, never guessed at: ``schema``, ``found`` (the data's version), ``current`` (the
    newest this code reads) and ``upgrade`` (what to install) say what to do.
    """

    code = "persisted.too_new"
    category = "user"

    def __init__(self, schema: str, found: int, current: int, upgrade: str) -> None:
        self.schema = schema
        self.found = found
        self.current = current
        self.upgrade = upgrade
        super().__init__(
            f"stored {schema} data is version {found}, newer than this code reads "
            f"(up to version {current}); upgrade: {upgrade}"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled by DBOS (a refused workflow's error): rebuilt from the same four facts
        return (type(self), (self.schema, self.found, self.current, self.upgrade))


class UnknownSchemaError(PersistedSchemaError):
    """No package registered the schema a payload names."""

    code = "persisted.unknown_schema"
    category = "user"


class MigrationFailedError(PersistedSchemaError, ValueError):
    """A payload did not validate against its version's schema, or a migration step failed.

    Also a ``ValueError``: a store that reports an unreadable record as damage (and goes on
    with the others) treats a record that cannot be migrated the same way.
    """

    code = "persisted.migration_failed"


class SchemaDefinitionError(PersistedSchemaError):
    """A schema or migration was registered wrongly (a version not a positive integer, a
    gap in the migration steps, a second definition of one version)."""

    code = "persisted.definition"
