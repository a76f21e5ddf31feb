"""The owner-only store's root and modes: a symlinked root is refused; every create is
verified to be exactly 0600 / 0700 whatever the umask (narrowed modes are restored, modes
the filesystem widened are an error)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentrig.host import OwnerOnlyStore, UnsafeExistingError

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes")


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


# ---- the root -------------------------------------------------------------------------------


def test_a_root_that_is_a_symlink_is_refused_naming_it(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "sessions"
    link.symlink_to(real)
    with pytest.raises(UnsafeExistingError) as info:
        OwnerOnlyStore(link)
    message = str(info.value)
    assert str(link) in message
    assert str(real) in message
    assert "configure the real directory" in message
    assert os.listdir(real) == []


def test_a_dangling_symlink_root_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    link = tmp_path / "sessions"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafeExistingError):
        OwnerOnlyStore(link)
    assert not (tmp_path / "elsewhere").exists()


def test_symlinked_ancestors_are_resolved_once(tmp_path: Path) -> None:
    real = tmp_path / "real-home"
    real.mkdir()
    (tmp_path / "home").symlink_to(real)
    store = OwnerOnlyStore(tmp_path / "home" / "state")
    assert store.root == real.resolve() / "state"
    store.write_bytes("record", b"x")
    assert (real / "state" / "record").read_bytes() == b"x"


def test_a_root_swapped_for_a_symlink_later_is_refused(tmp_path: Path) -> None:
    store = OwnerOnlyStore(tmp_path / "state")
    store.write_bytes("record", b"x")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "state").rename(tmp_path / "moved")
    (tmp_path / "state").symlink_to(elsewhere)
    with pytest.raises(UnsafeExistingError, match="symlink"):
        store.write_bytes("record", b"y")
    assert os.listdir(elsewhere) == []


# ---- modes after every create ----------------------------------------------------------------


def _create_everything(root: Path) -> OwnerOnlyStore:
    store = OwnerOnlyStore(root / "a" / "b")
    store.ensure_dir("dirs/made")
    store.make_dir("exclusive")
    store.write_bytes("nested/replaced", b"1")
    store.create_bytes("nested/created", b"2")
    with store.open_append("logs/appended") as file:
        file.write(b"3")
    return store


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(mask=st.integers(min_value=0, max_value=0o777))
def test_every_create_is_exactly_0600_or_0700_whatever_the_umask(
    tmp_path_factory: pytest.TempPathFactory, mask: int
) -> None:
    base = tmp_path_factory.mktemp("umask")
    with _umask(mask):
        store = _create_everything(base)
    created = [base / "a", *(base / "a").rglob("*")]
    assert len(created) == 10
    for path in created:
        want = 0o700 if path.is_dir() else 0o600
        assert _mode(path) == want, f"umask {mask:04o}: {path.relative_to(base)} {_mode(path):04o}"
    assert store.read_bytes("nested/created") == b"2"


@pytest.mark.parametrize("mask", [0o277, 0o377, 0o700, 0o777])
def test_a_umask_taking_the_owners_bits_still_gives_a_usable_store(
    tmp_path: Path, mask: int
) -> None:
    # (as root the kernel would let us read 0000 files anyway; the modes show the repair)
    with _umask(mask):
        store = _create_everything(tmp_path)
        store.write_bytes("nested/replaced", b"again")
    assert store.read_bytes("nested/replaced") == b"again"
    assert _mode(store.root / "nested" / "replaced") == 0o600
    assert _mode(store.root / "exclusive") == 0o700
