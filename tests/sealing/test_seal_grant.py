"""Sealing grants: another process seals to the owner's key without holding any secret.

The ``sodium`` sealer is loaded through its ``agentrig.sealers`` entry point (as installed).
A real child process receives only the grant -- on stdin, with the key directory moved out
of its reach -- builds its sealer with ``options.grant``, seals a whole artifact and the
events of a sealed JSONL session; the owner's process opens all of it.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentrig.errors import ConfigError
from agentrig.sealing import (
    GrantError,
    GrantingSealer,
    LockedError,
    SealingGrant,
)

Factory = Callable[[dict[str, Any]], Any]


def _factory() -> Factory:
    factory: Factory = entry_points(group="agentrig.sealers")["sodium"].load()
    return factory


def _owner(directory: Path) -> Any:
    return _factory()({"options": {"directory": str(directory)}})


def _secret_material(directory: Path) -> list[bytes | str]:
    document = json.loads((directory / "sealer.key").read_text())
    raw = [base64.b64decode(document["box"]), base64.b64decode(document["sign"])]
    return [*raw, document["box"], document["sign"]]


def test_the_sodium_sealer_offers_grants_that_carry_no_secret(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    owner = _owner(keys)
    assert isinstance(owner, GrantingSealer)
    grant = owner.grant()
    text = grant.encode()
    assert SealingGrant.decode(text) == grant
    assert grant.sealer == "sodium"
    for secret in _secret_material(keys):
        assert (
            secret if isinstance(secret, str) else base64.b64encode(secret).decode()
        ) not in text
        if isinstance(secret, bytes):
            assert secret not in grant.public


def test_a_granted_sealer_seals_what_the_owner_opens_and_opens_nothing(tmp_path: Path) -> None:
    owner = _owner(tmp_path / "keys")
    granted: Any = _factory()({"options": {"grant": owner.grant().encode()}})
    assert not granted.unlocked
    assert "from a grant" in granted.describe()
    whole = granted.seal("checkpoint", "ses_x", b"pre-image")
    record = granted.open_appender("session.event", "ses_x").seal_record(b"event one")
    assert owner.open("checkpoint", "ses_x", whole) == b"pre-image"
    assert owner.open("session.event", "ses_x", record) == b"event one"
    with pytest.raises(LockedError, match="only the owner's process"):
        granted.open("checkpoint", "ses_x", whole)
    with pytest.raises(LockedError):
        granted.unlock()
    with pytest.raises(LockedError):
        granted.seal("checkpoint", "ses_x", b"tagged", author_tag=True)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("not json", "not JSON"),
        ('{"format": "something-else/1"}', "not a agentrig-seal-grant/1"),
        ('{"format": "agentrig-seal-grant/1", "sealer": "sodium", "suite": "x"}', "no public"),
        (
            '{"format": "agentrig-seal-grant/1", "sealer": "sodium", "suite": "x", '
            '"public": "%%%"}',
            "not base64",
        ),
    ],
)
def test_a_malformed_grant_is_refused_with_its_reason(text: str, reason: str) -> None:
    with pytest.raises(GrantError, match=reason) as info:
        _factory()({"options": {"grant": text}})
    assert info.value.code == "sealing.grant"


def test_a_grant_for_another_sealer_or_suite_is_refused(tmp_path: Path) -> None:
    grant = _owner(tmp_path / "keys").grant()
    other_sealer = SealingGrant(sealer="vault", suite=grant.suite, public=grant.public)
    other_suite = SealingGrant(sealer="sodium", suite="rot13/1", public=grant.public)
    short = SealingGrant(sealer="sodium", suite=grant.suite, public=grant.public[:10])
    for bad, reason in [(other_sealer, "'vault'"), (other_suite, "rot13"), (short, "size")]:
        with pytest.raises(GrantError, match=reason):
            _factory()({"options": {"grant": bad.encode()}})


def test_a_grant_cannot_be_combined_with_a_key_directory(tmp_path: Path) -> None:
    grant = _owner(tmp_path / "keys").grant().encode()
    with pytest.raises(ConfigError, match="directory cannot be combined"):
        _factory()({"id": "main", "options": {"grant": grant, "directory": str(tmp_path)}})


_GRANTEE = """
import base64, json, sys
from importlib.metadata import entry_points
import anyio
from agentrig.sealing import LockedError
from agentrig.session import Session, TurnStart, UserMessageEvent
from agentrig.llm import UserMessage

grant = sys.stdin.read()
sealer = entry_points(group="agentrig.sealers")["sodium"].load()({"options": {"grant": grant}})
store = entry_points(group="agentrig.session_stores")["jsonl"].load()(
    {"id": "main", "options": {"directory": sys.argv[1], "sealer": "main"},
     "sealers": {"main": sealer}}
)

async def main():
    writer = await store.open_writer("ses_worker")
    session = Session("ses_worker")
    await writer.append([
        session.append(TurnStart(turn=1)),
        session.append(UserMessageEvent(message=UserMessage.of("sealed by a worker"))),
    ])
    await writer.aclose()
    try:
        await store.load("ses_worker")
        opened = "opened"
    except LockedError:
        opened = "locked"
    whole = sealer.seal("tool.spill", "ses_worker", b"a spilled result")
    print(json.dumps({"load": opened, "whole": base64.b64encode(whole).decode()}))

anyio.run(main)
"""


@pytest.mark.subprocess
def test_a_worker_process_given_only_the_grant_writes_a_sealed_session_the_owner_reads(
    tmp_path: Path,
) -> None:
    keys = tmp_path / "keys"
    owner = _owner(keys)
    grant = owner.grant().encode()
    hidden = tmp_path / "hidden-keys"
    keys.rename(hidden)  # the worker cannot reach the key directory at all
    try:
        done = subprocess.run(
            [sys.executable, "-c", _GRANTEE, str(tmp_path / "sessions")],
            input=grant,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
    finally:
        hidden.rename(keys)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["load"] == "locked"  # the worker cannot read what it wrote
    spilled = base64.b64decode(outcome["whole"])
    assert owner.open("tool.spill", "ses_worker", spilled) == b"a spilled result"

    store = entry_points(group="agentrig.session_stores")["jsonl"].load()(
        {
            "id": "main",
            "options": {"directory": str(tmp_path / "sessions"), "sealer": "main"},
            "sealers": {"main": owner},
        }
    )
    report = anyio.run(store.load, "ses_worker")
    assert not report.damaged
    assert [e.type for e in report.events] == ["turn/start", "user/message"]
    assert "sealed by a worker" in report.events[1].model_dump_json()
    raw = (tmp_path / "sessions" / "ses_worker.jsonl").read_bytes()
    assert b"sealed by a worker" not in raw
