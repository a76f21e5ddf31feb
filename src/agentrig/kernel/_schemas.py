"""The process-wide registry of persisted-payload schemas.

Core packages define their schemas here when imported (``agentrig.session`` its events,
``agentrig.journal`` its records, ...); installed plugins' ``agentrig.schemas`` entry points
are read the first time a schema nobody defined is looked up (:func:`register_schemas`).
"""

from __future__ import annotations

from agentrig.kernel._discovery import register_schemas
from agentrig.schemas import SchemaRegistry

__all__ = ["SCHEMAS"]

SCHEMAS: SchemaRegistry = SchemaRegistry(loader=register_schemas)
"""Every persisted schema this process reads and writes, by name."""
