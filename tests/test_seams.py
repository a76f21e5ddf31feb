"""The core distribution binds the host's implementations for the layers below the built-ins."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig import host
from agentrig._seams import core_seam, owner_only_files, seam_entry
from agentrig.errors import PluginError
from agentrig.journal import SqliteJournal
from agentrig.permissions import PermissionContext, PermissionRules, canonical_path

pytestmark = pytest.mark.anyio


def test_the_permission_evaluators_default_ports_are_the_hosts() -> None:
    context = PermissionContext("/", PermissionRules.parse())
    assert context.resolve_path is host.resolve_path
    assert context.expand_glob is host.expand_glob
    assert core_seam("path_resolver") is host.resolve_path


def test_the_path_matchers_default_to_the_hosts_canonicalisation(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    found = canonical_path("link/f", root=str(tmp_path), home=str(tmp_path))
    assert found == str((tmp_path / "real" / "f").resolve())


def test_owner_only_files_are_the_hosts_store(tmp_path: Path) -> None:
    store = owner_only_files(tmp_path / "private")
    assert isinstance(store, host.OwnerOnlyStore)
    written = store.write_bytes("a/b.txt", b"x")
    assert written.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "private" / "a").stat().st_mode & 0o777 == 0o700


async def test_the_sqlite_journal_opens_its_file_through_the_owner_only_store(
    tmp_path: Path,
) -> None:
    journal = SqliteJournal(tmp_path / "state" / "journal.sqlite3")
    try:
        assert journal.path.stat().st_mode & 0o777 == 0o600
        assert journal.path.parent.stat().st_mode & 0o777 == 0o700
    finally:
        await journal.aclose()


def test_a_missing_seam_is_a_broken_install_named_not_a_fallback() -> None:
    with pytest.raises(PluginError, match=r"agentrig.seams:no-such-seam is missing"):
        core_seam("no-such-seam")


def test_a_seam_is_found_once_the_importlib_metadata_backport_joined_the_finders() -> None:
    # OpenTelemetry's API imports the backport, whose finder then answers importlib.metadata
    # with its own EntryPoint class: a seam must load through either
    import importlib_metadata

    assert importlib_metadata.version("agentrig")
    entry = seam_entry("path_resolver")
    assert entry is not None
    assert entry.load() is host.resolve_path
