"""Glob and Grep against a real tree: patterns, modes, and never out of the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _ws_support import call

from agentrig.builtins.workspace import GLOB, GREP, WorkspacePathError
from agentrig.builtins.workspace._search import glob_regex

pytestmark = pytest.mark.anyio


@pytest.fixture
def tree(root: Path, tmp_path: Path) -> Path:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "a.py").write_text("import os\nSECRET = 1\n\ndef f():\n    return 2\n")
    (root / "src" / "b.ts").write_text("const Secret = 3;\n")
    (root / "src" / "c.tsx").write_text("none here\n")
    (root / "README.md").write_text("# title\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("SECRET in git\n")
    (root / "bin.dat").write_bytes(b"SECRET\x00\x01")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.py").write_text("SECRET outside\n")
    (root / "out").symlink_to(outside)
    (root / "outfile.py").symlink_to(outside / "o.py")
    os.utime(root / "src" / "b.ts", (1, 1))
    return root


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "src/pkg/a.py", True),
        ("**/*.py", "a.py", True),
        ("*.py", "src/a.py", False),
        ("src/**/*.{ts,tsx}", "src/x/y.tsx", True),
        ("src/*.ts", "src/b.ts", True),
        ("src/?.ts", "src/bb.ts", False),
        ("[ab].md", "a.md", True),
    ],
)
def test_glob_patterns(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).match(path)) is matches


async def test_glob_lists_newest_first_and_stays_inside(tree: Path) -> None:
    out = (await call(GLOB, {"pattern": "**/*.{py,ts}"}, tree)).splitlines()
    assert out == [str(tree / "src/pkg/a.py"), str(tree / "src/b.ts")]
    sub = await call(GLOB, {"pattern": "*.tsx", "path": "src"}, tree)
    assert sub == str(tree / "src/c.tsx")
    with pytest.raises(WorkspacePathError, match="outside"):
        await call(GLOB, {"pattern": "*", "path": "out"}, tree)


async def test_grep_modes(tree: Path) -> None:
    files = await call(GREP, {"pattern": "secret", "-i": True}, tree)
    assert files.splitlines() == [str(tree / "src/b.ts"), str(tree / "src/pkg/a.py")]
    content = await call(GREP, {"pattern": "SECRET", "output_mode": "content", "-A": 1}, tree)
    assert content.splitlines() == [f"{tree}/src/pkg/a.py:2:SECRET = 1", f"{tree}/src/pkg/a.py:3-"]
    count = await call(GREP, {"pattern": "e", "output_mode": "count", "glob": "*.ts"}, tree)
    assert count == f"{tree}/src/b.ts:2"
    none = await call(GREP, {"pattern": "nothing-like-this"}, tree)
    assert none.startswith("No matches")


async def test_grep_limits_and_bad_patterns(tree: Path) -> None:
    out = await call(GREP, {"pattern": ".", "output_mode": "content", "head_limit": 2}, tree)
    assert len(out.splitlines()) == 3
    assert out.endswith("[more results cut at 2]")
    from agentrig.builtins.workspace import WorkspaceError

    with pytest.raises(WorkspaceError, match="invalid regular expression"):
        await call(GREP, {"pattern": "(unclosed"}, tree)


def test_grep_takes_claude_codes_option_names() -> None:
    props = set(GREP.input_schema.json_schema["properties"])
    assert {"pattern", "path", "glob", "output_mode", "-i", "-n", "-A", "-B", "-C"} <= props
