"""The persisted schemas of what a durable run leaves in DBOS: workflow inputs and outputs.

DBOS stores each link's input (the arguments its workflow was started with) and output
(the answer, or the question it waits on) in its system database -- in PostgreSQL when the
runs are shared.  Both name their version: an output as ``v`` (one without it was written
before outputs were versioned: version 1); an input is one envelope ``{"v": 2, ...}`` (the
bare positional arguments of earlier releases are version 1 and are migrated when such a
workflow is recovered or dequeued).  The schemas are declared through the
``agentrig.schemas`` entry point, so data of a newer version is refused by name
(``persisted.too_new``), never guessed at.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agentrig.schemas import SCHEMAS, MigrationFailedError, SchemaRegistry

__all__ = [
    "LINK_OUTPUT_SCHEMA",
    "LINK_OUTPUT_VERSION",
    "WORKFLOW_INPUT_SCHEMA",
    "WORKFLOW_INPUT_VERSION",
    "WorkflowInput",
    "checked_output",
    "read_input",
    "register",
    "versioned",
    "workflow_input",
]

LINK_OUTPUT_SCHEMA = "agentrig_dbos.link_output"
LINK_OUTPUT_VERSION = 1
WORKFLOW_INPUT_SCHEMA = "agentrig_dbos.workflow_input"
WORKFLOW_INPUT_VERSION = 2
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


#: version 1 of a workflow input: the positional arguments ``(agent, prompt)`` of a run, or
#: ``(agent, prompt, origin, decisions, link)`` of a continuation link
_INPUT_V1 = TypeAdapter(
    tuple[str, str] | tuple[str, str, str | None, list[dict[str, Any]] | None, int]
)


class WorkflowInput(BaseModel):
    """Version 2 (current): one envelope naming its version.

    ``origin`` is the run a continuation link belongs to (None for the run's first link),
    ``decisions`` the answers it has not used yet, ``link`` its number.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    v: int = WORKFLOW_INPUT_VERSION
    agent: str
    prompt: str
    origin: str | None = None
    decisions: list[dict[str, Any]] = Field(default_factory=list)
    link: int = Field(default=0, ge=0)


def _input_1_to_2(args: Sequence[Any]) -> dict[str, Any]:
    agent, prompt = args[0], args[1]
    origin, decisions, link = args[2:] if len(args) == 5 else (None, None, 0)
    return {
        "v": 2,
        "agent": agent,
        "prompt": prompt,
        "origin": origin,
        "decisions": list(decisions or []),
        "link": link,
    }


def register(registry: SchemaRegistry) -> None:
    """Entry point ``agentrig.schemas:agentrig-dbos``."""
    registry.define(LINK_OUTPUT_SCHEMA, 1, LinkOutputV1, owner=_OWNER)
    registry.define(WORKFLOW_INPUT_SCHEMA, 1, _INPUT_V1, owner=_OWNER)
    registry.define(WORKFLOW_INPUT_SCHEMA, 2, WorkflowInput, owner=_OWNER)
    registry.add_migration(WORKFLOW_INPUT_SCHEMA, 1, _input_1_to_2, owner=_OWNER)


def versioned(output: dict[str, Any]) -> dict[str, Any]:
    """A link's output as stored: naming the current version."""
    return {"v": LINK_OUTPUT_VERSION, **output}


def checked_output(value: Any) -> Any:
    """A stored link output, refused (``SchemaTooNewError``) when newer than this plugin."""
    if isinstance(value, dict):
        SCHEMAS.check_version(LINK_OUTPUT_SCHEMA, value.get("v", 1))
    return value


def workflow_input(
    agent: str,
    prompt: str,
    *,
    origin: str | None = None,
    decisions: Sequence[dict[str, Any]] = (),
    link: int = 0,
) -> dict[str, Any]:
    """The one argument a link's workflow is started with: the current input envelope."""
    envelope = WorkflowInput(
        agent=agent, prompt=prompt, origin=origin, decisions=list(decisions), link=link
    )
    return envelope.model_dump()


def read_input(args: tuple[Any, ...], kwargs: dict[str, Any]) -> WorkflowInput:
    """A stored workflow input (the arguments DBOS replays), migrated to the current version.

    One dict is an envelope naming its version; anything else is the positional form of
    version 1.  A newer envelope raises :class:`~agentrig.schemas.SchemaTooNewError`.
    """
    if kwargs:
        raise MigrationFailedError(
            f"stored {WORKFLOW_INPUT_SCHEMA} data passes keyword arguments "
            f"({', '.join(sorted(kwargs))}); no version of it does"
        )
    payload: Any
    if len(args) == 1 and isinstance(args[0], dict):
        version, payload = args[0].get("v"), args[0]
    else:
        version, payload = 1, list(args)
    data = SCHEMAS.upgrade(WORKFLOW_INPUT_SCHEMA, version, payload)
    return WorkflowInput.model_validate(data)
