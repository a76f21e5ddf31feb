"""The persisted schema of session events, ``agentrig.session.event``, and its migrations.

Every stored event carries its version as the first key of its JSON object (``{"v":2,
"seq":...}``); the schema name is the store's: every session store holds this schema only.
An event without ``v`` was written before events were versioned: version 1.

Version history:

1. the first format (no ``v`` key);
2. ``tool/result/stored`` names its units: ``size`` -> ``size_bytes``, ``shown`` ->
   ``shown_bytes``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from agentrig.schemas import SCHEMAS, VersionedJson
from agentrig.session._events import SessionEvent

__all__ = ["SESSION_EVENT_CODEC", "SESSION_EVENT_SCHEMA", "SESSION_EVENT_VERSION"]

SESSION_EVENT_SCHEMA = "agentrig.session.event"
#: the version every writer writes
SESSION_EVENT_VERSION = 2


class _StoredV1(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["tool/result/stored"]
    call_id: str
    invocation_id: str
    path: str
    size: int
    shown: int


class SessionEventV1(BaseModel):
    """Version 1 of a stored event: the envelope, and the one variant version 2 changed."""

    model_config = ConfigDict(extra="forbid")

    seq: int
    time: float
    data: dict[str, Any]
    trace: dict[str, str] | None = None

    @model_validator(mode="after")
    def _changed_variant(self) -> SessionEventV1:
        if self.data.get("type") == "tool/result/stored":
            _StoredV1.model_validate(self.data)
        return self


def _v1_to_v2(event: dict[str, Any]) -> dict[str, Any]:
    data = event["data"]
    if data.get("type") == "tool/result/stored":
        data["size_bytes"] = data.pop("size")
        data["shown_bytes"] = data.pop("shown")
    return event


SCHEMAS.define(SESSION_EVENT_SCHEMA, 1, SessionEventV1)
SCHEMAS.define(SESSION_EVENT_SCHEMA, 2, SessionEvent)
SCHEMAS.add_migration(SESSION_EVENT_SCHEMA, 1, _v1_to_v2)

SESSION_EVENT_CODEC: VersionedJson[SessionEvent] = VersionedJson(
    SCHEMAS,
    SESSION_EVENT_SCHEMA,
    from_json=SessionEvent.model_validate_json,
    from_data=SessionEvent.model_validate,
)
"""The stored form of session events (``dump_event`` / ``parse_event`` use it)."""
