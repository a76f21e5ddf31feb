"""Bubblewrap's persistent sandboxes: reused, yet each command finds a fresh one.

A workspace keeps its sandboxes set up between commands (bwrap's setup is most of a
command's cost).  These tests hold that to what a sandbox per command gave: nothing a
command leaves -- files in /tmp or /dev/shm, SysV IPC, background processes -- reaches the
next one; the workspace itself (here below /tmp, where the cleanup must not reach) keeps its
files; Git's files made since a sandbox was set up are read-only in the next one; rlimits
are per command; a timeout throws the sandbox away; a closed pool refuses commands.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from _ws_support import bash, sandboxed

from agentrig.builtins.workspace import BubblewrapBackend, SandboxError, Workspace
from agentrig.builtins.workspace._sandbox_session import SandboxPool
from agentrig.tools import ToolOutput

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.subprocess,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed"),
]


@pytest.fixture
def root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="agentrig-ws-"))  # below /tmp, as on many hosts
    try:
        yield path.resolve()
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _pool(space: Workspace) -> SandboxPool:
    assert isinstance(space.backend, BubblewrapBackend)
    assert space.backend.pool is not None, "no interpreter for the command server here"
    return space.backend.pool


async def test_one_sandbox_serves_many_commands_and_the_workspace_keeps_its_files(
    root: Path,
) -> None:
    (root / "kept.txt").write_text("mine\n")
    space = sandboxed(root, backend="bubblewrap")
    for n in range(3):
        assert await bash(space, f"echo {n} > n.txt; cat kept.txt") == "mine\n"
    assert _pool(space).started == 1
    assert (root / "kept.txt").read_text() == "mine\n"
    assert (root / "n.txt").read_text() == "2\n"


async def test_nothing_a_command_leaves_reaches_the_next(root: Path) -> None:
    space = sandboxed(root, backend="bubblewrap")
    first = await bash(
        space,
        "echo x > /tmp/t; mkdir -p /tmp/d/e; touch /dev/shm/s; ipcmk -M 4096 > /dev/null; "
        "ipcmk -Q > /dev/null; setsid sleep 300 & nohup sleep 301 > /dev/null 2>&1 & "
        "echo started",
    )
    assert first == "started\n"
    second = await bash(
        space,
        "ls -A /tmp /dev/shm; ipcs -m -q | grep -c '^0x' ; ps -eo comm | grep -c '^sleep$' ; "
        "mkdir /new 2>&1; true",
    )
    assert _pool(space).started == 1
    lines = second.splitlines()
    # /dev/shm empty, /tmp holding only the workspace's mount point, no IPC, no sleep left
    assert lines[:6] == ["/dev/shm:", "", "/tmp:", root.name, "0", "0"], second
    assert "Read-only file system" in lines[6]  # the sandbox's own root is read-only too


async def test_git_files_made_since_setup_are_read_only_in_the_next_command(root: Path) -> None:
    space = sandboxed(root, backend="bubblewrap")
    assert await bash(space, "mkdir .git && echo made") == "made\n"
    out = await bash(space, "touch .git/config 2>&1; echo > .gitattributes 2>&1; true")
    assert "Read-only file system" in out
    assert not (root / ".git" / "config").exists()
    assert _pool(space).started == 2  # the layout changed: a sandbox set up for it


@pytest.mark.slow  # three CPU seconds burnt on purpose
async def test_rlimits_hold_for_each_command_not_the_server(root: Path) -> None:
    space = sandboxed(root, backend="bubblewrap", limits={"cpu_seconds": 3, "open_files": 64})
    for _ in range(2):
        assert await bash(space, "ulimit -t; ulimit -n") == "3\n64\n"
    spin = await bash(space, "while :; do :; done", timeout_ms=20_000)
    assert isinstance(spin, ToolOutput)
    assert "killed by signal" in spin.content  # SIGXCPU/SIGKILL after 3 CPU seconds
    assert await bash(space, "echo still") == "still\n"
    assert _pool(space).started == 1


async def test_a_timeout_throws_the_sandbox_away(root: Path) -> None:
    space = sandboxed(root, backend="bubblewrap")
    assert await bash(space, "echo one") == "one\n"
    out = await bash(space, "sleep 30", timeout_ms=300)
    assert isinstance(out, ToolOutput)
    assert "timeout" in out.content
    assert await bash(space, "echo two") == "two\n"
    assert _pool(space).started == 2


async def test_a_closed_pool_refuses_commands(root: Path) -> None:
    space = sandboxed(root, backend="bubblewrap")
    assert await bash(space, "echo one") == "one\n"
    await _pool(space).aclose()
    with pytest.raises(SandboxError, match="closed"):
        await bash(space, "echo two")


def test_the_emptying_skips_the_workspace_and_shown_paths() -> None:
    from agentrig.builtins.workspace._sandbox_server import _scratch

    assert _scratch(["/srv/ws"]) == ["/tmp", "/dev/shm"]
    assert _scratch(["/tmp"]) == ["/dev/shm"]  # a workspace at /tmp: its files stay
    assert _scratch(["/tmp/"]) == ["/dev/shm"]
    assert _scratch(["/srv/ws", "/dev"]) == ["/tmp"]  # a read-only path above /dev/shm
    assert _scratch(["/"]) == []


async def test_without_an_interpreter_for_the_server_each_command_gets_its_own(
    root: Path,
) -> None:
    import attrs

    space = sandboxed(root, backend="bubblewrap")
    assert isinstance(space.backend, BubblewrapBackend)
    alone = attrs.evolve(space, backend=attrs.evolve(space.backend, python=None))
    assert alone.backend is not None
    assert getattr(alone.backend, "pool", None) is None
    out = await bash(alone, "echo x > /tmp/t; mkdir /new 2>&1; cat /tmp/t; echo ok > w")
    assert "Read-only file system" in out
    assert out.endswith("x\n")
    assert (root / "w").read_text() == "ok\n"


async def test_signals_are_the_defaults_and_a_bad_command_is_an_error(root: Path) -> None:
    space = sandboxed(root, backend="bubblewrap", limits={"file_size_bytes": 4096})
    big = await bash(space, "head -c 10000 /dev/zero > big.bin")
    assert isinstance(big, ToolOutput)
    assert "File size limit exceeded" in big.content  # SIGXFSZ: its default, as with prlimit
    assert (await bash(space, "yes | head -n 1")) == "y\n"  # SIGPIPE ends yes
    nul = await bash(space, "echo a\x00b")
    assert isinstance(nul, ToolOutput)
    assert nul.content.startswith("the sandbox could not start the command")  # goes on
    assert await bash(space, "echo fine") == "fine\n"
    assert _pool(space).started == 1
