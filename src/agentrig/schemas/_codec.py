"""Stored JSON records that carry their schema version as their first key.

A store that fills a file or table with records of one schema (session events, journal
records) writes each record as ``{"v":<version>,...}``: the store names the schema, the
record its version.  Records written before versions existed have no ``v``: version 1.
Reading a current record costs one prefix check; an older one is migrated through the
registry.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from agentrig.schemas._registry import SchemaRegistry, positive_version

__all__ = ["VERSION_KEY", "VersionedJson"]

#: the key of a record's version
VERSION_KEY = "v"

_T = TypeVar("_T")


class VersionedJson(Generic[_T]):
    """The stored form of one schema's records: dump at the current version, parse any.

    ``from_json`` parses the JSON text of a current record (the version key removed);
    ``from_data`` validates a migrated payload.  Both build the in-memory record.
    """

    def __init__(
        self,
        registry: SchemaRegistry,
        schema: str,
        *,
        from_json: Callable[[str | bytes], _T],
        from_data: Callable[[dict[str, Any]], _T],
    ) -> None:
        self.registry = registry
        self.schema = schema
        self.version = registry.current(schema)
        self.prefix = '{"' + VERSION_KEY + '":' + str(self.version) + ","
        self._prefix_bytes = self.prefix.encode("ascii")
        self._from_json = from_json
        self._from_data = from_data

    def dump(self, body: str) -> str:
        """``body`` (a compact JSON object) with the current version as its first key."""
        return self.prefix + body[1:]

    def parse(self, data: str | bytes | dict[str, Any]) -> _T:
        """A stored record of any readable version, migrated to the current one.

        A version newer than the code raises :class:`~agentrig.schemas.SchemaTooNewError`;
        a record that does not fit its version raises
        :class:`~agentrig.schemas.MigrationFailedError` (also a ``ValueError``).
        """
        document: Any = data
        if isinstance(data, str):
            if data.startswith(self.prefix):
                return self._from_json("{" + data[len(self.prefix) :])
            document = json.loads(data)
        elif isinstance(data, bytes | bytearray):
            if data.startswith(self._prefix_bytes):
                return self._from_json(b"{" + data[len(self._prefix_bytes) :])
            document = json.loads(data)
        if not isinstance(document, dict):
            raise ValueError(
                f"a stored {self.schema} record is a JSON object, not {type(document).__name__}"
            )
        payload = dict(document)
        version = payload.pop(VERSION_KEY, 1)
        if version != self.version:
            payload = self.registry.upgrade(self.schema, version, payload)
        return self._from_data(payload)

    def version_of(self, data: str | bytes) -> int | None:
        """The version a stored record names (1 when none); None when it is not a JSON
        object or its version is not a positive integer."""
        if isinstance(data, str) and data.startswith(self.prefix):
            return self.version
        if isinstance(data, bytes) and data.startswith(self._prefix_bytes):
            return self.version
        try:
            document = json.loads(data)
        except ValueError:
            return None
        if not isinstance(document, dict):
            return None
        return positive_version(document.get(VERSION_KEY, 1))
