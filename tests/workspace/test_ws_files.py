"""Read, Write and Edit against real files: containment, bounds, staged writes, Git's files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from _ws_support import call

from agentrig.builtins.workspace import (
    EDIT,
    READ,
    WRITE,
    EditMatchError,
    FilesConfig,
    GitProtectedError,
    WorkspaceConfig,
    WorkspacePathError,
)

pytestmark = pytest.mark.anyio


async def test_read_numbers_lines_and_reads_a_range(root: Path) -> None:
    (root / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    whole = await call(READ, {"file_path": str(root / "a.txt")}, root)
    assert whole.splitlines()[0] == "     1\tline 1"
    assert len(whole.splitlines()) == 10
    part = await call(READ, {"file_path": "a.txt", "offset": 4, "limit": 2}, root)
    assert part.splitlines() == [
        "     4\tline 4",
        "     5\tline 5",
        "[more lines follow; read on with offset=6]",
    ]


async def test_read_is_bounded_in_bytes_and_line_length(root: Path) -> None:
    (root / "big.txt").write_text(("x" * 50 + "\n") * 100)
    config = WorkspaceConfig(files=FilesConfig(max_read_bytes=600, max_line_chars=20))
    out = await call(READ, {"file_path": "big.txt"}, root, config)
    lines = out.splitlines()
    assert lines[0].endswith("x" * 20 + " [line cut]")
    assert lines[-1].startswith("[cut at 600 bytes; read on with offset=")
    assert len(lines) < 30


async def test_read_refuses_binary_and_special_files(root: Path) -> None:
    (root / "bin.dat").write_bytes(b"\x89PNG\x00\x01\x02")
    with pytest.raises(WorkspacePathError, match="binary"):
        await call(READ, {"file_path": "bin.dat"}, root)
    os.mkfifo(root / "pipe")
    with pytest.raises(WorkspacePathError, match="not a regular file"):
        await call(READ, {"file_path": "pipe"}, root)
    with pytest.raises(WorkspacePathError, match="does not exist"):
        await call(READ, {"file_path": "missing.txt"}, root)


async def test_a_symlink_out_of_the_workspace_is_refused(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the key")
    (root / "link.txt").symlink_to(secret)
    (root / "dir").symlink_to(tmp_path)
    for path in ("link.txt", "dir/secret.txt", str(secret), "../secret.txt"):
        with pytest.raises(WorkspacePathError, match="outside"):
            await call(READ, {"file_path": path}, root)
    with pytest.raises(WorkspacePathError, match="outside"):
        await call(WRITE, {"file_path": "link.txt", "content": "x"}, root)
    assert secret.read_text() == "the key"


async def test_a_symlink_inside_the_workspace_is_followed(root: Path) -> None:
    (root / "real.txt").write_text("hello\n")
    (root / "alias.txt").symlink_to(root / "real.txt")
    assert "hello" in await call(READ, {"file_path": "alias.txt"}, root)


async def test_write_stages_keeps_the_mode_and_creates_parents(root: Path) -> None:
    target = root / "script.sh"
    target.write_text("old")
    target.chmod(0o750)
    out = await call(WRITE, {"file_path": str(target), "content": "new"}, root)
    assert out.startswith("Wrote")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    out = await call(WRITE, {"file_path": "sub/dir/new.txt", "content": "é"}, root)
    assert out.startswith("Created")
    assert (root / "sub/dir/new.txt").read_text(encoding="utf-8") == "é"
    assert not list(root.glob("*.tmp"))  # noqa: ASYNC240


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        "sub/.git/HEAD",
        ".gitattributes",
        "a/.gitmodules",
        ".GIT/config",
    ],
)
async def test_git_files_are_never_written(root: Path, path: str) -> None:
    with pytest.raises(GitProtectedError, match="inspection-only"):
        await call(WRITE, {"file_path": path, "content": "x"}, root)
    assert not (root / path).exists()


async def test_a_link_into_git_is_refused_as_resolved(root: Path) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "innocent").symlink_to(root / ".git" / "config")
    with pytest.raises(GitProtectedError):
        await call(EDIT, {"file_path": "innocent", "old_string": "core", "new_string": "x"}, root)
    assert (root / ".git" / "config").read_text() == "[core]\n"


async def test_edit_replaces_one_unique_match(root: Path) -> None:
    (root / "m.py").write_text("a = 1\nb = 2\n")
    out = await call(
        EDIT, {"file_path": "m.py", "old_string": "b = 2", "new_string": "b = 3"}, root
    )
    assert out.startswith("Replaced 1 occurrence")
    assert (root / "m.py").read_text() == "a = 1\nb = 3\n"


async def test_edit_refuses_an_ambiguous_or_missing_match(root: Path) -> None:
    (root / "m.py").write_text("x = 1\nx = 1\n")
    args = {"file_path": "m.py", "old_string": "x = 1", "new_string": "x = 2"}
    with pytest.raises(EditMatchError, match="matches 2 places"):
        await call(EDIT, args, root)
    assert (root / "m.py").read_text() == "x = 1\nx = 1\n"
    out = await call(EDIT, {**args, "replace_all": True}, root)
    assert out.startswith("Replaced 2 occurrences")
    with pytest.raises(EditMatchError, match="not found"):
        await call(EDIT, args, root)
    with pytest.raises(EditMatchError, match="the same"):
        await call(EDIT, {**args, "new_string": "x = 1"}, root)


def test_each_tool_declares_its_risk_and_permission_argument() -> None:
    assert (READ.risk, READ.permission_arg.key, READ.permission_arg.kind) == (
        "inspect",
        "file_path",
        "path",
    )
    assert (WRITE.risk, EDIT.risk) == ("modify", "modify")
    assert WRITE.permission_arg == EDIT.permission_arg == READ.permission_arg
    props = set(EDIT.input_schema.json_schema["properties"])
    assert props == {"file_path", "old_string", "new_string", "replace_all"}
