"""Persisted-payload schemas: names, positive integer versions and forward migrations.

Everything agentrig (or a plugin) stores -- session events, journal records, credential
files, sealed artifacts -- names its schema and version.  The owning package defines each
version's shape and a migration step from each version to the next in a
:class:`SchemaRegistry` (the process's is :data:`SCHEMAS`); reading older data
migrates it, data newer than the code is refused with :class:`SchemaTooNewError`.  See
docs/migrations.md.
"""

from __future__ import annotations

from agentrig.schemas._codec import VERSION_KEY, VersionedJson
from agentrig.schemas._errors import (
    MigrationFailedError,
    PersistedSchemaError,
    SchemaDefinitionError,
    SchemaTooNewError,
    UnknownSchemaError,
)
from agentrig.schemas._process import SCHEMAS
from agentrig.schemas._registry import (
    Migration,
    SchemaInfo,
    SchemaRegistry,
    Shape,
    positive_version,
)

__all__ = [
    "SCHEMAS",
    "VERSION_KEY",
    "VersionedJson",
    "Migration",
    "MigrationFailedError",
    "PersistedSchemaError",
    "SchemaDefinitionError",
    "SchemaInfo",
    "SchemaRegistry",
    "SchemaTooNewError",
    "Shape",
    "UnknownSchemaError",
    "positive_version",
]
