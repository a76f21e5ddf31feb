"""Git stays inspection-only: filter drivers in the repository config stop git commands."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from _ws_support import bash, sandboxed

from agentrig.builtins.workspace import GitProtectedError
from agentrig.builtins.workspace._git import may_run_git, repository_filters

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "a.txt").write_text("a\n")
    return root.resolve()


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("git status", True),
        ("ls && git diff", True),
        ("/usr/bin/git log", True),
        ("sudo git show", True),
        ("env A=1 git status", True),
        ("echo git", False),
        ("ls -la", False),
        ('eval "$(echo git status)"', True),
        ("sh -c 'git status'", True),
    ],
)
def test_which_commands_may_run_git(command: str, runs: bool) -> None:
    assert may_run_git(command) is runs


def test_filter_sections_and_includes_are_found(repo: Path) -> None:
    assert repository_filters(repo) == []
    config = repo / ".git" / "config"
    config.write_text(config.read_text() + '[filter "evil"]\n\tclean = touch /tmp/pwned\n')
    assert repository_filters(repo / "sub") == [f"filter driver 'evil' in {config}"]
    config.write_text("[include]\n\tpath = ~/elsewhere\n")
    assert "may define filters" in repository_filters(repo)[0]


@pytest.mark.anyio
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")
async def test_git_commands_refuse_to_run_under_a_filter_driver(repo: Path) -> None:
    space = sandboxed(repo, backend="bubblewrap")
    assert "a.txt" in await bash(space, "git status --porcelain")
    config = repo / ".git" / "config"
    config.write_text(config.read_text() + '[filter "evil"]\n\tclean = touch pwned\n')
    with pytest.raises(GitProtectedError, match="filter driver 'evil'"):
        await bash(space, "git diff")
    assert not (repo / "pwned").exists()
    assert await bash(space, "echo still fine") == "still fine\n"


@pytest.mark.anyio
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")
async def test_bubblewrap_keeps_gits_files_read_only(repo: Path) -> None:
    (repo / ".gitattributes").write_text("*.txt text\n")
    space = sandboxed(repo, backend="bubblewrap")
    before = (repo / ".git" / "config").read_text()
    out = await bash(
        space, "echo '[filter \"x\"]' >> .git/config; echo '* filter=x' >> .gitattributes"
    )
    assert "Read-only file system" in out.content
    assert (repo / ".git" / "config").read_text() == before
    assert (repo / ".gitattributes").read_text() == "*.txt text\n"
