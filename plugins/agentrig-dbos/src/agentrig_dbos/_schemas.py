"""The persisted schema of what a durable-run link leaves in DBOS: its workflow output.

DBOS stores each link's output (the answer, or the question it waits on) in its system
database; the output names its version as ``v`` (an output without one was written before
outputs were versioned: version 1).  The schema is declared through the ``agentrig.schemas``
entry point, so an output of a newer version is refused by name, never guessed at.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from agentrig.kernel import SCHEMAS
from agentrig.schemas import SchemaRegistry

__all__ = ["LINK_OUTPUT_SCHEMA", "LINK_OUTPUT_VERSION", "checked_output", "register", "versioned"]

LINK_OUTPUT_SCHEMA = "agentrig_dbos.link_output"
LINK_OUTPUT_VERSION = 1
_OWNER = "agentrig-dbos"


class LinkOutputV1(BaseModel):
    """Version 1: the agent, its session and answer; a waiting link also its question."""

    model_config = ConfigDict(extra="forbid")

    v: int = 1
    agent: str
    session_id: str
    text: str
    waiting: dict[str, Any] | None = None
    unproven: dict[str, Any] | None = None
    next: str | None = None
    decisions: list[dict[str, Any]] | None = None


def register(registry: SchemaRegistry) -> None:
    """Entry point ``agentrig.schemas:agentrig-dbos``."""
    registry.define(LINK_OUTPUT_SCHEMA, 1, LinkOutputV1, owner=_OWNER)


def versioned(output: dict[str, Any]) -> dict[str, Any]:
    """A link's output as stored: naming the current version."""
    return {"v": LINK_OUTPUT_VERSION, **output}


def checked_output(value: Any) -> Any:
    """A stored link output, refused (``SchemaTooNewError``) when newer than this plugin."""
    if isinstance(value, dict):
        SCHEMAS.check_version(LINK_OUTPUT_SCHEMA, value.get("v", 1))
    return value
