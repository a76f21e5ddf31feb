"""The process-wide registry of persisted-payload schemas (:data:`SCHEMAS`).

Core packages define their schemas here when imported (``agentrig.session`` its events,
``agentrig.journal`` its records, ...).  Installed plugins' ``agentrig.schemas`` entry points
are read the first time a schema nobody defined is looked up: that reading is the kernel's
plugin discovery (disable switches, the plugin report), which a primitive may not import, so
the core distribution hands it down through its own ``agentrig.seams`` entry point
``schemas`` -- as the variant families get theirs.
"""

from __future__ import annotations

from agentrig._seams import core_seam
from agentrig.schemas._registry import SchemaRegistry

__all__ = ["SCHEMAS"]


def _installed_schemas(registry: SchemaRegistry) -> None:
    # a missing seam is a broken install: core_seam raises PluginError, never drops schemas
    core_seam("schemas")(registry)


SCHEMAS: SchemaRegistry = SchemaRegistry(loader=_installed_schemas)
"""Every persisted schema this process reads and writes, by name."""
