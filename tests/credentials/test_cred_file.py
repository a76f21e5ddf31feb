"""The built-in owner-only ``file`` credential store."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from agentrig.builtins import _credential_file as credential_file
from agentrig.credentials import CredentialStore, CredentialStoreError
from agentrig.host import PathEscapeError, UnsafeExistingError
from agentrig.kernel import check_factory
from agentrig.testing.conformance_credentials import CredentialStoreConformance, assert_unreadable

pytestmark = pytest.mark.anyio

Factory = Callable[[dict[str, Any]], CredentialStore]

_EPS = entry_points(group="agentrig.credential_stores")


def _factory() -> Factory:
    """The ``file`` entry point once the core's pyproject declares it; the module until then."""
    if "file" in _EPS.names:
        loaded: Factory = _EPS["file"].load()
        return loaded
    return credential_file.factory


def _store(base: Path, path: str = "state/credentials.json") -> CredentialStore:
    return _factory()({"id": "secrets", "options": {"path": path}, "base_dir": base})


class TestFileStoreConformance(CredentialStoreConformance):
    @pytest.fixture
    def credential_store(self, tmp_path: Path) -> CredentialStore:
        return _store(tmp_path)


@pytest.mark.skipif(
    "file" not in _EPS.names,
    reason="root pyproject does not declare agentrig.credential_stores: file yet",
)
def test_file_entry_point_is_registered() -> None:
    assert _EPS["file"].value == "agentrig.builtins._credential_file:factory"


def test_factory_contract_and_options() -> None:
    check_factory(credential_file.factory)
    with pytest.raises(ValueError, match="extra"):
        credential_file.factory({"options": {"path": "x.json", "unknown": 1}})


async def test_file_and_directory_are_owner_only(tmp_path: Path) -> None:
    store = _store(tmp_path)
    await store.set("svc", "acct", "s3cret")
    file = tmp_path / "state" / "credentials.json"
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700
    document = json.loads(file.read_text())
    assert document["secrets"] == {"svc": {"acct": "s3cret"}}
    assert not [p for p in file.parent.iterdir() if p.name != "credentials.json"]  # no temp left


async def test_missing_file_is_an_empty_store(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert await store.get("svc", "acct") is None
    assert await store.delete("svc", "acct") is False
    assert not (tmp_path / "state" / "credentials.json").exists()


async def test_another_store_object_reads_what_was_written(tmp_path: Path) -> None:
    await _store(tmp_path).set("svc", "acct", "value")
    assert await _store(tmp_path).get("svc", "acct") == "value"


async def test_wider_mode_is_refused_not_repaired(tmp_path: Path) -> None:
    store = _store(tmp_path)
    await store.set("svc", "acct", "s3cret")
    file = tmp_path / "state" / "credentials.json"
    file.chmod(0o644)
    error = await assert_unreadable(store, "svc", "acct")
    assert isinstance(error.__cause__, UnsafeExistingError)
    with pytest.raises(CredentialStoreError):
        await store.set("svc", "acct", "other")
    assert stat.S_IMODE(file.stat().st_mode) == 0o644  # reported, never tightened
    assert "s3cret" not in str(error)


@pytest.mark.parametrize("inside", [True, False], ids=["link-inside", "link-outside"])
async def test_symlink_is_refused(tmp_path: Path, inside: bool) -> None:
    (tmp_path / "state").mkdir(mode=0o700)
    target = (tmp_path / "state" if inside else tmp_path) / "elsewhere.json"
    target.write_text('{"format": "agentrig-credentials/1", "secrets": {}}')
    target.chmod(0o600)
    store = _store(tmp_path)
    (tmp_path / "state" / "credentials.json").symlink_to(target)
    error = await assert_unreadable(store)
    assert isinstance(error.__cause__, UnsafeExistingError if inside else PathEscapeError)
    with pytest.raises(CredentialStoreError):
        await store.set("svc", "acct", "value")
    assert target.read_text() == '{"format": "agentrig-credentials/1", "secrets": {}}'


async def test_wide_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir(mode=0o755)
    (tmp_path / "state").chmod(0o755)
    error = await assert_unreadable(_store(tmp_path))
    assert isinstance(error.__cause__, UnsafeExistingError)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 file")
async def test_unreadable_file_raises(tmp_path: Path) -> None:
    store = _store(tmp_path)
    await store.set("svc", "acct", "s3cret")
    file = tmp_path / "state" / "credentials.json"
    file.chmod(0o000)
    try:
        await assert_unreadable(store, "svc", "acct")
    finally:
        file.chmod(0o600)


async def test_a_directory_in_place_of_the_file_raises(tmp_path: Path) -> None:
    (tmp_path / "state" / "credentials.json").mkdir(parents=True, mode=0o700)
    (tmp_path / "state").chmod(0o700)
    await assert_unreadable(_store(tmp_path))


@pytest.mark.parametrize(
    "content",
    [
        b'{"format": "agentrig-credentials/1", "secrets": {"svc": {"acct": "s3cret"}',
        b"\xff\xfe not utf-8",
        b'["a list"]',
        b'{"format": "something-else/9", "secrets": {}}',
        b'{"format": "agentrig-credentials/1", "secrets": {"svc": {"acct": 42}}}',
        b"",
    ],
    ids=["truncated-json", "not-utf8", "not-an-object", "other-format", "bad-value", "empty"],
)
async def test_corrupt_content_raises_never_absent(tmp_path: Path, content: bytes) -> None:
    file = tmp_path / "state" / "credentials.json"
    file.parent.mkdir(mode=0o700)
    file.write_bytes(content)
    file.chmod(0o600)
    store = _store(tmp_path)
    error = await assert_unreadable(store, "svc", "acct")
    assert "s3cret" not in str(error)
    assert error.__cause__ is None  # a JSONDecodeError would carry the whole document
    with pytest.raises(CredentialStoreError):
        await store.set("svc", "other", "value")  # a write never clobbers an unreadable file
    assert file.read_bytes() == content


def test_describe_names_the_file_and_relative_paths_use_base_dir(tmp_path: Path) -> None:
    store = _store(tmp_path, "nested/creds.json")
    assert store.name == "file"
    assert str(tmp_path / "nested" / "creds.json") in store.describe()
