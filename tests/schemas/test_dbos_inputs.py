"""agentrig-dbos versions the workflow inputs DBOS stores in PostgreSQL (a real server).

A run starts its workflow with one envelope naming its version; a workflow an older release
queued with bare positional arguments (version 1) is migrated when a worker takes it and
finishes; an envelope of a newer version is refused by name (``persisted.too_new``) and its
run does nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from _durable_support import (  # type: ignore[import-not-found]  # tests/plugins, on sys.path
    durable_runtime,
    marker_lines,
)
from agentrig_dbos import DURABLE
from agentrig_dbos._host import WORKFLOW
from agentrig_dbos._schemas import WORKFLOW_INPUT_SCHEMA, read_input, workflow_input
from dbos import DBOSClient

from agentrig.schemas import SCHEMAS, MigrationFailedError, SchemaTooNewError

pytestmark = [pytest.mark.anyio, pytest.mark.integration, pytest.mark.slow]


def _enqueue(dsn: str, workflow_id: str, *args: Any) -> None:
    """Queue a run the way another process (of this or an older release) does."""
    client = DBOSClient(system_database_url=dsn)
    try:
        options: Any = {
            "workflow_name": WORKFLOW,
            "queue_name": "agentrig",
            "workflow_id": workflow_id,
        }
        client.enqueue(options, *args)
    finally:
        client.destroy()


def _stored_input(dsn: str, workflow_id: str) -> Any:
    client = DBOSClient(system_database_url=dsn)
    try:
        (row,) = client.list_workflows(workflow_ids=[workflow_id], load_input=True)
        return row.input
    finally:
        client.destroy()


async def test_workflow_inputs_are_versioned_migrated_and_refused_when_newer(
    tmp_path: Path, pg_dsn: str
) -> None:
    async with durable_runtime(tmp_path, dbos={"system_database_url": pg_dsn}) as rt:
        durable = rt.services.require(DURABLE)
        with anyio.fail_after(120):
            done = await durable.run("assistant", "go", run_id="new1")
        assert done.text == "done"
        stored = await anyio.to_thread.run_sync(_stored_input, pg_dsn, "new1")
        assert stored["kwargs"] == {}
        assert list(stored["args"]) == [
            {
                "v": 2,
                "agent": "assistant",
                "prompt": "go",
                "origin": None,
                "decisions": [],
                "link": 0,
            }
        ]

        # an older release queued its runs with bare positional arguments: migrated, run
        await anyio.to_thread.run_sync(_enqueue, pg_dsn, "old1", "assistant", "go")
        with anyio.fail_after(120):
            old = await durable.result("old1")
        assert (old.text, old.agent, old.session_id) == ("done", "assistant", "ses-old1")

        # a newer release's envelope: refused by name, nothing runs
        newer = {"v": 3, "agent": "assistant", "prompt": "go", "budget": 5}
        await anyio.to_thread.run_sync(_enqueue, pg_dsn, "new3", newer)
        with anyio.fail_after(120), pytest.raises(SchemaTooNewError) as caught:
            await durable.result("new3")
    assert caught.value.code == "persisted.too_new"
    assert (caught.value.schema, caught.value.found, caught.value.current) == (
        WORKFLOW_INPUT_SCHEMA,
        3,
        2,
    )
    assert "pip install --upgrade agentrig-dbos" in caught.value.message
    assert marker_lines(tmp_path) == [
        "assistant.new1:one",
        "assistant.new1:two",
        "assistant.old1:one",
        "assistant.old1:two",
    ]


def test_the_input_schema_migrates_each_old_form_and_checks_each_version() -> None:
    info = SCHEMAS.info(WORKFLOW_INPUT_SCHEMA)
    assert (info.owner, info.versions) == ("agentrig-dbos", (1, 2))
    link = read_input(("assistant", "", "r1", [{"call_id": "c", "allow": True}], 2), {})
    assert (link.origin, link.decisions, link.link) == ("r1", [{"call_id": "c", "allow": True}], 2)
    first = read_input(("assistant", "hi"), {})
    assert (first.agent, first.prompt, first.origin, first.link) == ("assistant", "hi", None, 0)
    current = workflow_input("assistant", "hi", origin="r1", link=1)
    assert read_input((current,), {}).model_dump() == current
    for bad in [("assistant",), ("assistant", "hi", "r1")]:
        with pytest.raises(MigrationFailedError):
            read_input(bad, {})  # version 1 never had these shapes
    with pytest.raises(MigrationFailedError, match="keyword arguments"):
        read_input(("assistant", "hi"), {"link": 1})
    with pytest.raises(MigrationFailedError):
        read_input(({"agent": "assistant", "prompt": "hi"},), {})  # an envelope names its v
    with pytest.raises(MigrationFailedError):
        read_input(({"v": 2, "agent": "assistant"},), {})  # checked against version 2
