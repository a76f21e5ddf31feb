"""The owner-only store: modes from creation, verified; nothing unsafe adopted."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrig.host import (
    AlreadyExistsError,
    InPlaceUnconfirmed,
    ModeNotEnforcedError,
    OwnerOnlyStore,
    OwnerStoreError,
    PathEscapeError,
    UnsafeExistingError,
    guarantee,
)

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes")


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def zero_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def store(tmp_path: Path) -> OwnerOnlyStore:
    return OwnerOnlyStore(tmp_path / "state")


def test_guarantee_is_reported() -> None:
    assert guarantee() == "posix-mode"


def test_modes_are_owner_only_even_with_umask_zero(tmp_path: Path, zero_umask: None) -> None:
    store = OwnerOnlyStore(tmp_path / "state" / "nested")
    assert mode(store.root) == 0o700
    store.write_bytes("a/b/record.json", b"{}")
    store.create_bytes("a/created", b"1")
    with store.open_append("logs/session.jsonl") as log:
        log.write(b"line\n")
    assert mode(store.root / "a") == 0o700
    assert mode(store.root / "a" / "b") == 0o700
    assert mode(store.root / "a" / "b" / "record.json") == 0o600
    assert mode(store.root / "a" / "created") == 0o600
    assert mode(store.root / "logs" / "session.jsonl") == 0o600
    assert store.guarantee() == "posix-mode"


def test_round_trip_and_replace(store: OwnerOnlyStore) -> None:
    store.write_bytes("rec", b"one")
    store.write_bytes("rec", b"two", durable=True)
    assert store.read_bytes("rec") == b"two"
    assert sorted(os.listdir(store.root)) == ["rec"]  # no temp file left behind


def test_append_keeps_existing_content(store: OwnerOnlyStore) -> None:
    with store.open_append("log") as handle:
        handle.write(b"a")
    with store.open_append("log") as handle:
        handle.write(b"b")
    assert store.read_bytes("log") == b"ab"


def test_planted_symlink_at_the_target_is_refused(store: OwnerOnlyStore, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"untouched")
    inside = store.root / "inside-target"
    inside.write_bytes(b"also untouched")
    os.chmod(inside, 0o600)
    os.symlink(victim, store.root / "out")
    os.symlink(inside, store.root / "in")
    with pytest.raises(PathEscapeError):
        store.write_bytes("out", b"pwned")
    for call in (
        lambda: store.write_bytes("in", b"pwned"),
        lambda: store.open_append("in"),
        lambda: store.read_bytes("in"),
    ):
        with pytest.raises(UnsafeExistingError, match="symlink"):
            call()
    with pytest.raises(AlreadyExistsError):
        store.create_bytes("in", b"pwned")
    assert victim.read_bytes() == b"untouched"
    assert inside.read_bytes() == b"also untouched"


def test_planted_symlink_directory_is_refused(store: OwnerOnlyStore) -> None:
    real = store.ensure_dir("real")
    os.symlink(real, store.root / "alias")
    with pytest.raises(UnsafeExistingError, match="symlink"):
        store.write_bytes("alias/file", b"x")
    assert os.listdir(real) == []


def test_wide_existing_directory_is_reported(store: OwnerOnlyStore) -> None:
    os.mkdir(store.root / "wide")
    os.chmod(store.root / "wide", 0o777)
    with pytest.raises(UnsafeExistingError) as info:
        store.write_bytes("wide/rec", b"x")
    assert "0777" in str(info.value)
    assert info.value.path == str(store.root / "wide")
    assert info.value.code == "store.unsafe_existing"
    assert mode(store.root / "wide") == 0o777  # reported, never silently repaired
    with pytest.raises(UnsafeExistingError):
        store.ensure_dir("wide")


def test_wide_existing_file_is_reported(store: OwnerOnlyStore) -> None:
    path = store.root / "legacy.json"
    path.write_bytes(b"old")
    os.chmod(path, 0o644)
    with pytest.raises(UnsafeExistingError, match="0644"):
        store.write_bytes("legacy.json", b"new")
    with pytest.raises(UnsafeExistingError):
        store.read_bytes("legacy.json")
    with pytest.raises(UnsafeExistingError):
        store.open_append("legacy.json")
    assert path.read_bytes() == b"old"
    assert mode(path) == 0o644


def test_wide_root_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "wide-root"
    root.mkdir()
    os.chmod(root, 0o755)
    with pytest.raises(UnsafeExistingError):
        OwnerOnlyStore(root)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
def test_other_owner_is_reported(store: OwnerOnlyStore) -> None:
    os.mkdir(store.root / "theirs", 0o700)
    os.chown(store.root / "theirs", 12345, 12345)
    with pytest.raises(UnsafeExistingError, match="uid 12345"):
        store.write_bytes("theirs/x", b"x")
    path = store.root / "their-file"
    path.write_bytes(b"x")
    os.chmod(path, 0o600)
    os.chown(path, 12345, 12345)
    with pytest.raises(UnsafeExistingError, match="uid 12345"):
        store.read_bytes("their-file")


def test_create_only_refuses_anything_existing(store: OwnerOnlyStore) -> None:
    store.create_bytes("once", b"first")
    with pytest.raises(AlreadyExistsError) as info:
        store.create_bytes("once", b"second")
    assert info.value.code == "store.exists"
    assert store.read_bytes("once") == b"first"
    os.mkdir(store.root / "a-dir", 0o700)
    with pytest.raises(AlreadyExistsError):
        store.create_bytes("a-dir", b"x")
    os.symlink(store.root / "nowhere", store.root / "dangling")
    with pytest.raises(AlreadyExistsError):
        store.create_bytes("dangling", b"x")  # link() never follows the dangling link
    os.symlink("/nonexistent", store.root / "escaping")
    with pytest.raises(PathEscapeError):
        store.create_bytes("escaping", b"x")
    assert sorted(os.listdir(store.root)) == ["a-dir", "dangling", "escaping", "once"]
    assert not os.path.lexists(store.root / "nowhere")


def test_failed_replace_leaves_the_old_content(
    store: OwnerOnlyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.write_bytes("key", b"old")

    def broken_replace(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space"):
        store.write_bytes("key", b"new", durable=True)
    monkeypatch.undo()
    assert store.read_bytes("key") == b"old"
    assert os.listdir(store.root) == ["key"]


def test_directory_flush_failure_after_rename_is_in_place_unconfirmed(
    store: OwnerOnlyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.write_bytes("key", b"old")
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(InPlaceUnconfirmed) as info:
        store.write_bytes("key", b"new", durable=True)
    assert info.value.code == "store.in_place_unconfirmed"
    with pytest.raises(InPlaceUnconfirmed):
        store.create_bytes("fresh", b"data")
    monkeypatch.undo()
    assert store.read_bytes("key") == b"new"  # it *is* in place
    assert store.read_bytes("fresh") == b"data"


def test_filesystem_ignoring_modes_is_reported(
    store: OwnerOnlyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fstat = os.fstat

    def lax_fstat(fd: int) -> os.stat_result:
        result = real_fstat(fd)
        if stat.S_ISREG(result.st_mode):
            fields = list(result)
            fields[0] = stat.S_IFREG | 0o644
            return os.stat_result(fields)
        return result

    monkeypatch.setattr(os, "fstat", lax_fstat)
    with pytest.raises(ModeNotEnforcedError) as info:
        store.write_bytes("rec", b"x")
    assert info.value.code == "store.mode_not_enforced"
    monkeypatch.undo()
    assert os.listdir(store.root) == []


@pytest.mark.parametrize("rel", ["../escape", "/etc/passwd", "", ".", "a/../../b"])
def test_store_paths_must_be_plain_relative_names(store: OwnerOnlyStore, rel: str) -> None:
    with pytest.raises(OwnerStoreError):
        store.write_bytes(rel, b"x")


def test_make_dir_is_exclusive(store: OwnerOnlyStore) -> None:
    path = store.make_dir("scoped")
    assert mode(path) == 0o700
    with pytest.raises(AlreadyExistsError):
        store.make_dir("scoped")


def test_missing_file_reads_raise_file_not_found(store: OwnerOnlyStore) -> None:
    with pytest.raises(FileNotFoundError):
        store.read_bytes("nothing")
    assert not store.exists("nothing")
    assert not store.remove("nothing")
