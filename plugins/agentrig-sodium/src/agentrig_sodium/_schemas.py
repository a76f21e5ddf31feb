"""The persisted schemas of the sealer's key files (``sealer.pub``, ``sealer.key``).

Each key file says ``"format": "<schema>/<version>"``; the schemas are declared through the
``agentrig.schemas`` entry point, so a key file of a newer version is refused by name
(:class:`~agentrig.schemas.SchemaTooNewError`), never read as damaged or replaced.
"""

from __future__ import annotations

from typing import Any

from agentrig.schemas import SCHEMAS, SchemaRegistry

__all__ = ["PUBLIC_SCHEMA", "SECRET_SCHEMA", "check_newer", "register"]

PUBLIC_SCHEMA = "agentrig-sodium-public"
SECRET_SCHEMA = "agentrig-sodium-secret"
_OWNER = "agentrig-sodium"


def _key_file(document: Any) -> None:
    """Version 1's shape (named without quoting anything: the values are keys)."""
    if not isinstance(document, dict) or not {"box", "sign"} <= document.keys():
        raise ValueError("a key file holds 'box' and 'sign'")


def register(registry: SchemaRegistry) -> None:
    """Entry point ``agentrig.schemas:agentrig-sodium``."""
    for name in (PUBLIC_SCHEMA, SECRET_SCHEMA):
        registry.define(name, 1, _key_file, owner=_OWNER)


def check_newer(label: object) -> None:
    """Refuse a ``format`` label naming a newer version of one of the key-file schemas."""
    if not isinstance(label, str) or "/" not in label:
        return
    name, _, version = label.partition("/")
    if name in (PUBLIC_SCHEMA, SECRET_SCHEMA) and version.isdigit():
        SCHEMAS.check_version(name, int(version))
