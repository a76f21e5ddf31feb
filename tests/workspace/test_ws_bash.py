"""Bash in each sandbox backend, against real processes: identity, limits, network, trees."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import pytest
from _ws_support import bash, processes_naming, processes_with_argument, sandboxed

from agentrig.builtins.workspace import Workspace
from agentrig.cancel import AbortError, CancelSignal
from agentrig.tools import ToolOutput

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="native changes the uid: needs root")

# a grandchild that ignores SIGTERM, leaves the process group, and beats into a file; its
# $0 is the workspace's name, so the test finds it in /proc (and no other test's)
STUBBORN = (
    "setsid sh -c 'trap \"\" TERM; while true; do date +%s%N > beat; sleep 0.05; done' "
    '"$(basename "$PWD")" & sleep 300'
)


@pytest.fixture(params=["bubblewrap", "native"])
def space(request: pytest.FixtureRequest, shared_root: Path) -> Workspace:
    if request.param == "bubblewrap":
        if shutil.which("bwrap") is None:
            pytest.skip("bwrap is not installed")
        return sandboxed(shared_root, backend="bubblewrap")
    if os.geteuid() != 0:
        pytest.skip("native changes the uid: needs root")
    return sandboxed(shared_root, backend="native", user="nobody", network=True)


def _beats_stopped(root: Path) -> bool:
    beat = root / "beat"
    assert beat.exists(), "the grandchild never started"
    # gone when the call returned, not some time later
    assert processes_with_argument(root.name) == [], "the grandchild outlived the call"
    first = beat.read_text()
    import time

    time.sleep(0.4)
    return beat.read_text() == first


async def test_output_exit_code_and_workspace_writes(space: Workspace) -> None:
    out = await bash(space, "echo hello; echo oops >&2; echo made > made.txt")
    assert out == "hello\noops\n"
    assert (space.root / "made.txt").read_text() == "made\n"
    failed = await bash(space, "echo partial; exit 3")
    assert isinstance(failed, ToolOutput)
    assert failed.is_error
    assert failed.content == "partial\n\n[exit code 3]"


async def test_output_is_bounded_while_read(shared_root: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap is not installed")
    space = sandboxed(shared_root, backend="bubblewrap", output_limit=1000)
    out = await bash(space, "head -c 5000000 /dev/zero | tr '\\0' x")
    assert out.startswith("x" * 1000 + "\n[output cut: 4999000 more bytes")


@pytest.mark.slow
async def test_a_stubborn_grandchild_is_ended_on_timeout(space: Workspace) -> None:
    with anyio.fail_after(20):
        out = await bash(space, STUBBORN, timeout_ms=700)
    assert isinstance(out, ToolOutput)
    assert out.is_error
    assert "ran past its 0.7s timeout" in out.content
    assert _beats_stopped(space.root)


@pytest.mark.slow
async def test_a_stubborn_grandchild_is_ended_on_cancel(space: Workspace) -> None:
    signal = CancelSignal()
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:

            async def stop() -> None:
                while not (space.root / "beat").exists():  # noqa: ASYNC110 - a file, no event
                    await anyio.sleep(0.05)
                signal.cancel("the user pressed Ctrl-C")

            tg.start_soon(stop)
            with pytest.raises(AbortError):
                await bash(space, STUBBORN, signal=signal)
    assert _beats_stopped(space.root)


@pytest.mark.slow
async def test_a_caller_deadline_ends_the_tree_and_propagates(space: Workspace) -> None:
    with anyio.move_on_after(1.0) as scope:
        await bash(space, STUBBORN)
    assert scope.cancelled_caught
    assert _beats_stopped(space.root)


async def test_the_environment_is_minimal(
    space: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    out = await bash(space, "env | sort")
    assert "sk-secret" not in out
    assert "PATH=/usr/local/bin:/usr/bin:/bin" in out


@needs_root
async def test_native_runs_as_the_restricted_user_without_groups(shared_root: Path) -> None:
    space = sandboxed(
        shared_root,
        backend="native",
        user="nobody",
        network=True,
        limits={"open_files": 64, "file_size_bytes": 4096, "cpu_seconds": 9},
    )
    out = await bash(
        space,
        "id -u; id -g; id -G; ulimit -n; ulimit -t; "
        "grep -E '^(NoNewPrivs|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status",
    )
    nobody = __import__("pwd").getpwnam("nobody")
    lines = out.split("\n")
    assert lines[:5] == [str(nobody.pw_uid), str(nobody.pw_gid), str(nobody.pw_gid), "64", "9"]
    assert "NoNewPrivs:\t1" in out
    assert sum(line.startswith("Cap") for line in lines) == 5
    for line in lines[5:]:
        if line.startswith("Cap"):  # no capability, none to regain
            assert int(line.split(":\t")[1], 16) == 0, line
    big = await bash(space, "head -c 10000 /dev/zero > big.bin")
    assert isinstance(big, ToolOutput)
    assert big.is_error  # SIGXFSZ / EFBIG past the file-size limit
    assert (shared_root / "big.bin").stat().st_size <= 4096


@needs_bwrap
async def test_bubblewrap_has_no_network_unless_allowed(shared_root: Path) -> None:
    async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener:
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        probe = f"bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' && echo reached"
        closed = sandboxed(shared_root, backend="bubblewrap")
        out = await bash(closed, probe)
        assert isinstance(out, ToolOutput)
        assert out.is_error
        assert "reached" not in out.content
        assert "Connection refused" in out.content  # the sandbox's own empty loopback
        ifaces = await bash(closed, "cat /proc/net/dev")
        assert [line.split(":")[0].strip() for line in ifaces.splitlines()[2:]] == ["lo"]
        opened = sandboxed(shared_root, backend="bubblewrap", network=True)
        assert (await bash(opened, probe)).strip() == "reached"


@needs_bwrap
async def test_bubblewrap_shows_the_system_read_only(shared_root: Path) -> None:
    space = sandboxed(shared_root, backend="bubblewrap")
    out = await bash(space, "touch /usr/x 2>&1; touch /etc/x 2>&1; ls /root 2>&1; echo ok > w")
    assert "touch: cannot touch '/usr/x': Read-only file system" in out
    assert "touch: cannot touch '/etc/x': Read-only file system" in out
    assert "cannot access '/root'" in out  # not shown at all
    assert (shared_root / "w").read_text() == "ok\n"
    assert not Path("/usr/x").exists()  # noqa: ASYNC240


async def test_a_cancel_while_a_sandbox_starts_leaves_no_process(space: Workspace) -> None:
    """A persistent sandbox or command server is never left half set up."""
    assert space.backend is not None
    pool = space.backend.pool
    assert pool is not None, "no interpreter for the command server here"
    for delay in (0.0, 0.005, 0.02):
        with anyio.move_on_after(delay):
            await bash(space, "echo hi")
    await pool.aclose()
    with anyio.fail_after(10):
        while processes_naming(space.root):  # noqa: ASYNC110 - processes, not an event
            await anyio.sleep(0.05)
