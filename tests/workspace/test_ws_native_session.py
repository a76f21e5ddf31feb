"""The native backend's persistent command servers, held to what a reaper per command gave.

A native server runs as root under the host's reaper and starts every command as the
restricted user; these tests check, against real processes, that the identity holds on both
of its ways to start a command (``posix_spawn`` without limits, a fork with them), that the
command holds none of the server's descriptors, that nothing a command
leaves running outlives its call, that a killed server takes its whole tree along, and that a
timeout, a cancellation or a closed pool end the servers.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import attrs
import pytest
from _ws_support import bash, sandboxed

from agentrig.builtins.workspace import NativeBackend, SandboxError, Workspace
from agentrig.builtins.workspace._sandbox_session import SandboxPool
from agentrig.tools import ToolOutput

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.subprocess,
    pytest.mark.skipif(os.geteuid() != 0, reason="native changes the uid: needs root"),
]

#: a grandchild in a session of its own that ignores SIGTERM, left behind (its pid in
#: ``left``), and the wait until it runs
LEFT_BEHIND = (
    "setsid sh -c 'trap \"\" TERM; echo $$ > left; while true; do sleep 0.05; done' "
    ">/dev/null 2>&1 & while [ ! -s left ]; do sleep 0.01; done;"
)
#: the wait until the command's server has its own real uid (root's) back
ID_BACK = "until [ \"$(awk '/^Uid:/ {print $2}' /proc/$PPID/status)\" = 0 ]; do sleep 0.01; done;"
IDENTITY = (
    "id -u; id -g; id -G; "
    "grep -E '^(NoNewPrivs|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status; "
    "ls -l /proc/$$/fd"
)


@pytest.fixture
def root(shared_root: Path) -> Path:
    return shared_root


def _native(root: Path, **extra: object) -> Workspace:
    return sandboxed(root, backend="native", user="nobody", network=True, **extra)


def _pool(space: Workspace) -> SandboxPool:
    assert isinstance(space.backend, NativeBackend)
    assert space.backend.pool is not None
    return space.backend.pool


def _left_alive(root: Path) -> bool:
    """Whether the grandchild left behind still runs (a zombie does not)."""
    try:
        pid = int((root / "left").read_text())  # empty: killed before it wrote its pid
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return False  # never started, or gone
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


async def _started(root: Path) -> None:
    with anyio.fail_after(10):
        while not _left_alive(root):  # noqa: ASYNC110 - a process, no event
            await anyio.sleep(0.02)


async def test_one_server_serves_many_commands(root: Path) -> None:
    space = _native(root)
    for n in range(3):
        assert await bash(space, f"echo {n} > n.txt; cat n.txt") == f"{n}\n"
    assert _pool(space).started == 1
    failed = await bash(space, "echo partial; exit 3")
    assert isinstance(failed, ToolOutput)
    assert failed.content == "partial\n\n[exit code 3]"
    assert _pool(space).started == 1


@pytest.mark.parametrize(
    "limits", [{}, {"open_files": 64, "processes": 50}], ids=["spawned", "forked"]
)
async def test_the_command_is_the_restricted_user_and_holds_nothing_of_the_server(
    root: Path, limits: dict[str, int]
) -> None:
    space = _native(root, limits=limits)
    out = await bash(space, IDENTITY)
    nobody = __import__("pwd").getpwnam("nobody")
    lines = out.split("\n")
    assert lines[:3] == [str(nobody.pw_uid), str(nobody.pw_gid), str(nobody.pw_gid)]
    held = [line.split(" -> ")[1] for line in lines if " -> " in line]
    assert held[0] == "/dev/null"  # stdin; stdout and stderr: the one output pipe
    assert len(set(held[1:])) == 1, held  # no socket, no other pipe of the server
    assert held[1].startswith("pipe:")
    assert "NoNewPrivs:\t1" in out
    caps = [line for line in lines if line.startswith("Cap")]
    assert len(caps) == 5
    assert all(int(line.split(":\t")[1], 16) == 0 for line in caps), caps
    if limits:
        assert (await bash(space, "ulimit -n; ulimit -p")) == "64\n50\n"


async def test_a_command_that_signals_its_server_ends_with_it(root: Path) -> None:
    """A command may signal its server only in the instant the server spawns it with the
    command's real ids; the server's reaper then ends the whole tree."""
    space = _native(root)
    for _ in range(3):
        try:
            out = await bash(space, "kill -KILL $PPID; " + LEFT_BEHIND + " echo still")
        except SandboxError as exc:  # it was killed: the call fails, the tree ends
            killed = exc.message
            assert "ended unexpectedly" in killed
        else:  # too late: the server had its own ids back
            assert out.startswith("/bin/sh: 1: kill: Operation not permitted\n")
            assert out.endswith("still\n")
        assert not _left_alive(root)
        assert await bash(space, "echo next") == "next\n"
    late = await bash(space, ID_BACK + " kill -KILL $PPID; kill -STOP $PPID; echo still")
    assert late.count("Operation not permitted") == 2
    assert late.endswith("still\n")


async def test_nothing_a_command_leaves_running_outlives_its_call(root: Path) -> None:
    space = _native(root)
    assert await bash(space, LEFT_BEHIND + " echo done") == "done\n"
    assert not _left_alive(root)
    assert await bash(space, "echo next") == "next\n"
    assert _pool(space).started == 1


async def test_a_killed_server_takes_its_whole_tree_along(root: Path) -> None:
    space = _native(root)
    assert await bash(space, "echo warm") == "warm\n"

    async def kill_the_server() -> None:
        await _started(root)
        os.kill(int((root / "server").read_text()), signal.SIGKILL)

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(kill_the_server)
            with pytest.raises(SandboxError, match="ended unexpectedly"):
                await bash(space, "echo $PPID > server; " + LEFT_BEHIND + " sleep 300")
    assert not _left_alive(root)
    assert await bash(space, "echo next") == "next\n"
    assert _pool(space).started == 2


async def test_a_timeout_throws_the_server_away(root: Path) -> None:
    space = _native(root)
    out = await bash(space, LEFT_BEHIND + " sleep 30", timeout_ms=400)
    assert isinstance(out, ToolOutput)
    assert "timeout" in out.content
    assert not _left_alive(root)
    assert await bash(space, "echo two") == "two\n"
    assert _pool(space).started == 2


async def test_a_closed_pool_refuses_commands(root: Path) -> None:
    space = _native(root)
    assert await bash(space, "echo one") == "one\n"
    await _pool(space).aclose()
    with pytest.raises(SandboxError, match="closed"):
        await bash(space, "echo two")


async def test_without_an_interpreter_each_command_gets_a_reaper_of_its_own(
    root: Path,
) -> None:
    space = _native(root)
    assert isinstance(space.backend, NativeBackend)
    alone = attrs.evolve(space, backend=attrs.evolve(space.backend, python=None))
    assert alone.backend is not None
    assert alone.backend.pool is None
    out = await bash(alone, IDENTITY)
    assert out.split("\n")[0] == str(__import__("pwd").getpwnam("nobody").pw_uid)
    assert "NoNewPrivs:\t1" in out
