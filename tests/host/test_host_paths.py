"""Path containment on canonical paths, against planted symlinks and traversal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentrig.host import (
    PathContainmentError,
    PathEscapeError,
    canonical_path,
    is_within,
    require_within,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    (r / "sub").mkdir(parents=True)
    (r / "sub" / "file.txt").write_text("x")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("s")
    return r


def test_plain_paths_inside_and_outside(root: Path) -> None:
    assert is_within(root / "sub" / "file.txt", root)
    assert is_within(root, root)
    assert is_within("sub/file.txt", root)  # relative to the root by default
    assert not is_within(root.parent / "outside" / "secret", root)
    assert not is_within("/etc/passwd", root)


def test_sibling_with_a_common_prefix_is_outside(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "ab").mkdir()
    assert not is_within(tmp_path / "ab" / "x", tmp_path / "a")
    assert not is_within(tmp_path / "ab", tmp_path / "a")
    assert is_within(tmp_path / "a" / "b", tmp_path / "a")


def test_dotdot_traversal(root: Path) -> None:
    assert not is_within(root / ".." / "outside" / "secret", root)
    assert not is_within("../outside/secret", root)
    assert not is_within("sub/../../outside", root)
    assert is_within("sub/../sub/./file.txt", root)
    assert is_within(root / "missing" / ".." / "sub", root)


def test_planted_directory_symlink_pointing_outside(root: Path) -> None:
    os.symlink(root.parent / "outside", root / "sub" / "escape")
    assert not is_within(root / "sub" / "escape" / "secret", root)
    assert not is_within(root / "sub" / "escape", root)
    with pytest.raises(PathEscapeError) as info:
        require_within("sub/escape/secret", root)
    assert info.value.code == "path.escape"


def test_symlink_to_a_file_outside(root: Path) -> None:
    os.symlink(root.parent / "outside" / "secret", root / "innocent.txt")
    assert not is_within(root / "innocent.txt", root)


def test_relative_symlink_escaping_through_dotdot(root: Path) -> None:
    os.symlink("../../outside", root / "sub" / "rel")
    assert not is_within(root / "sub" / "rel" / "secret", root)


def test_symlink_inside_pointing_inside_is_fine(root: Path) -> None:
    os.symlink(root / "sub", root / "alias")
    assert require_within(root / "alias" / "file.txt", root) == root / "sub" / "file.txt"


def test_symlinked_root_is_followed(root: Path, tmp_path: Path) -> None:
    link = tmp_path / "root-link"
    os.symlink(root, link)
    assert is_within(link / "sub" / "file.txt", link)
    assert is_within(root / "sub", link)
    assert is_within(link / "sub", root)
    assert not is_within(tmp_path / "outside", link)


def test_missing_final_component_is_allowed(root: Path) -> None:
    assert is_within(root / "sub" / "new-file.txt", root)
    assert is_within(root / "new-dir" / "deeper" / "file", root)
    assert require_within("brand/new", root) == root / "brand" / "new"


def test_dangling_symlink_pointing_outside_is_judged_by_its_target(root: Path) -> None:
    os.symlink(root.parent / "outside" / "not-yet", root / "dangling")
    assert not is_within(root / "dangling", root)


def test_symlink_loop_is_an_error(root: Path) -> None:
    os.symlink(root / "b", root / "a")
    os.symlink(root / "a", root / "b")
    with pytest.raises(PathContainmentError) as info:
        is_within(root / "a" / "x", root)
    assert info.value.code == "path.invalid"
    os.symlink("self", root / "self")
    with pytest.raises(PathContainmentError):
        require_within(root / "self", root)


@pytest.mark.parametrize("bad", ["sub/\x00/x", "\x00"])
def test_nul_bytes_are_errors(root: Path, bad: str) -> None:
    with pytest.raises(PathContainmentError, match="NUL"):
        is_within(bad, root)
    with pytest.raises(PathContainmentError, match="NUL"):
        is_within(root, str(root) + "\x00")


def test_relative_inputs_need_absolute_anchors(root: Path) -> None:
    with pytest.raises(PathContainmentError):
        is_within("x", "relative/root")
    with pytest.raises(PathContainmentError):
        canonical_path("x")
    with pytest.raises(PathContainmentError):
        canonical_path("x", base="not/absolute")
    assert canonical_path("file.txt", base=root / "sub") == root / "sub" / "file.txt"
    assert is_within("file.txt", root, base=root / "sub")
    assert not is_within("secret", root, base=root.parent / "outside")


def test_component_under_a_regular_file(root: Path) -> None:
    assert is_within(root / "sub" / "file.txt" / "nope", root)


def test_escape_error_names_path_and_root(root: Path) -> None:
    with pytest.raises(PathEscapeError) as info:
        require_within("/etc", root)
    assert info.value.path == "/etc"
    assert info.value.root == str(root)
    assert isinstance(info.value, ValueError)
