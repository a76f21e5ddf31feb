"""Golden journal and credential data of version 1 load through today's code.

The journal holds a run suspended on its second tool call (one effect settled, two not
started); the credential file one secret.  Newer versions are refused by name.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from _golden import copy_golden
from make_golden import RUN, journal_records

from agentrig.builtins._credential_file import FileCredentialStore
from agentrig.credentials import CredentialStoreError
from agentrig.ids import RunId
from agentrig.journal import SqliteJournal, dump_record, parse_record
from agentrig.schemas import SchemaTooNewError

pytestmark = pytest.mark.anyio


async def test_golden_sqlite_journal_rebuilds_the_suspended_run(tmp_path: Path) -> None:
    data = copy_golden("v1", tmp_path / "g")
    journal = SqliteJournal(data / "journal.sqlite3")
    try:
        state = await journal.load(RunId(RUN))
    finally:
        await journal.aclose()
    assert state is not None
    assert state.record == journal_records()[0]
    assert [c.call_id for c in state.model_calls] == ["m1"]
    assert state.rounds_used() == 1
    assert list(state.effects) == ["m1/c-a"]
    assert state.unsettled_effects() == []
    settled = state.latest_settled()
    assert settled is not None
    assert settled.result is not None
    assert settled.result.message is not None
    assert [c.id for c in settled.result.message.tool_calls] == ["c-a", "c-b", "c-c"]


def test_journal_records_name_their_version() -> None:
    for record in journal_records():
        body = dump_record(record)
        assert body.startswith('{"v":1,"kind":')
        assert parse_record(body) == record


async def test_a_newer_journal_record_is_refused_by_name(tmp_path: Path) -> None:
    data = copy_golden("v1", tmp_path / "g")
    with sqlite3.connect(data / "journal.sqlite3") as connection:
        (body,) = connection.execute("SELECT body FROM journal WHERE kind='execution'").fetchone()
        newer = json.dumps({"v": 2, **json.loads(body)})
        connection.execute("UPDATE journal SET body = ? WHERE kind='execution'", (newer,))
    journal = SqliteJournal(data / "journal.sqlite3")
    try:
        with pytest.raises(SchemaTooNewError) as caught:
            await journal.load(RunId(RUN))
    finally:
        await journal.aclose()
    assert (caught.value.schema, caught.value.found, caught.value.current) == (
        "agentrig.journal.record",
        2,
        1,
    )


async def test_golden_credential_file_reads(tmp_path: Path) -> None:
    data = copy_golden("v1", tmp_path / "g")
    store = FileCredentialStore(data / "credentials.json")
    assert await store.get("openai", "default") == "sk-golden-not-a-secret"
    await store.set("openai", "second", "x")
    assert json.loads((data / "credentials.json").read_text())["format"] == (
        "agentrig-credentials/1"
    )


async def test_a_newer_credential_file_is_refused_by_name(tmp_path: Path) -> None:
    data = copy_golden("v1", tmp_path / "g")
    path = data / "credentials.json"
    document = json.loads(path.read_text())
    path.write_text(json.dumps({**document, "format": "agentrig-credentials/2"}))
    store = FileCredentialStore(path)
    with pytest.raises(SchemaTooNewError, match="agentrig-credentials data is version 2"):
        await store.get("openai", "default")
    with pytest.raises(SchemaTooNewError):
        await store.set("openai", "default", "y")  # never rewritten
    assert json.loads(path.read_text())["format"] == "agentrig-credentials/2"


async def test_a_malformed_credential_file_names_no_secret(tmp_path: Path) -> None:
    data = copy_golden("v1", tmp_path / "g")
    path = data / "credentials.json"
    path.write_text(json.dumps({"format": "agentrig-credentials/1", "secrets": {"a": "sk-x"}}))
    with pytest.raises(CredentialStoreError, match="malformed 'secrets' table") as caught:
        await FileCredentialStore(path).get("a", "b")
    assert "sk-x" not in str(caught.value)
