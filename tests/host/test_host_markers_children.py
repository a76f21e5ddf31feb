"""Process markers, killed owners, and children killed as a process group."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from agentrig.host import (
    MarkerHeldError,
    MarkerLostError,
    ProcessMarker,
    current_owner,
    exit_registry,
    inspect,
    read_marker,
    spawn_in_group,
    sweep,
)

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs procfs")


def is_dead(pid: int) -> bool:
    """Gone or a zombie (a zombie runs nothing; its reaper may not be us)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return True
    return state in (b"Z", b"X")


def wait_dead(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if is_dead(pid):
            return True
        time.sleep(0.02)
    return False


# -- markers ----------------------------------------------------------------------------


def test_acquire_publishes_an_owner_only_marker(tmp_path: Path) -> None:
    marker = ProcessMarker.acquire(tmp_path / "m", "session-1")
    try:
        assert marker.path == tmp_path / "m" / "session-1.marker"
        assert os.stat(marker.path).st_mode & 0o777 == 0o600
        assert marker.owner == current_owner()
        assert marker.is_held()
        info = read_marker(tmp_path / "m", "session-1")
        assert info is not None
        assert (info.owner, info.state) == (current_owner(), "alive")
        with pytest.raises(MarkerHeldError) as held:
            ProcessMarker.acquire(tmp_path / "m", "session-1")
        assert held.value.owner == current_owner()
        assert held.value.state == "alive"
        assert held.value.code == "marker.held"
    finally:
        assert marker.release()
    assert not marker.path.exists()
    assert not marker.release()
    assert read_marker(tmp_path / "m", "session-1") is None


def test_release_removes_only_our_own_marker(tmp_path: Path) -> None:
    marker = ProcessMarker.acquire(tmp_path, "rec")
    # Someone (a cooperating forced release, say) replaced it with another claim.
    marker.path.unlink()
    other = ProcessMarker.acquire(tmp_path, "rec")
    assert not marker.is_held()
    with pytest.raises(MarkerLostError), marker.guard():
        pytest.fail("a lost marker must not run the guarded mutation")
    assert not marker.release()
    assert other.path.exists()
    with other.guard():
        pass
    assert other.release()


def test_unknown_owner_is_never_broken(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    foreign = current_owner().model_copy(update={"host": "another-machine", "pid": 77})
    doc = {"owner": json.loads(foreign.to_json()), "token": "t"}
    path = tmp_path / "rec.marker"
    path.write_text(json.dumps(doc))
    path.chmod(0o600)
    with pytest.raises(MarkerHeldError) as held:
        ProcessMarker.acquire(tmp_path, "rec")
    assert held.value.state == "unknown"
    assert held.value.owner == foreign
    garbage = tmp_path / "junk.marker"
    garbage.write_text("{not json")
    garbage.chmod(0o600)
    with pytest.raises(MarkerHeldError) as junk:
        ProcessMarker.acquire(tmp_path, "junk")
    assert junk.value.owner is None
    assert path.exists()
    assert garbage.exists()


@pytest.mark.parametrize("name", ["", "../x", "a/b", ".hidden", "x" * 200])
def test_marker_names_are_validated(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="marker name"):
        ProcessMarker.acquire(tmp_path, name)


CHILD_HOLDS = """
import sys, time
from agentrig.host import ProcessMarker, create_process_dir
path = create_process_dir(sys.argv[1], "victim")
marker = ProcessMarker.acquire(sys.argv[2], "shared")
print(path, flush=True)
time.sleep(300)
"""


@pytest.mark.subprocess
def test_killed_owner_is_swept_and_its_marker_broken(tmp_path: Path) -> None:
    state, markers = tmp_path / "state", tmp_path / "markers"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_HOLDS, str(state), str(markers)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        path = Path(child.stdout.readline().strip())
        assert path.is_dir()
        # While the child lives, its directory is alive and its marker is held.
        assert {i.path: i.state for i in inspect(state)} == {path: "alive"}
        with pytest.raises(MarkerHeldError) as held:
            ProcessMarker.acquire(markers, "shared")
        assert held.value.state == "alive"
        assert held.value.owner is not None
        assert held.value.owner.pid == child.pid
        assert sweep(state).removed == ()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert path.exists()  # SIGKILL ran no cleanup
    info = read_marker(markers, "shared")
    assert info is not None
    assert info.state == "gone"
    report = sweep(state)
    assert report.removed == (path,)
    assert not path.exists()
    marker = ProcessMarker.acquire(markers, "shared")  # broken and re-published
    assert marker.owner == current_owner()
    assert marker.release()


# -- children in their own process group ---------------------------------------------------


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_group_kill_leaves_no_descendant() -> None:
    group = await spawn_in_group(["sh", "-c", "sleep 100 & echo $!; sleep 100"])
    async with group:
        assert group.process.stdout is not None
        line = await group.process.stdout.receive()
        grandchild = int(line.decode().split()[0])
        assert os.getpgid(grandchild) == group.pid
        assert os.getsid(group.pid) == group.pid  # leads its own session
        assert ("child-group", group.pid) in exit_registry()
        assert group.kill()
        code = await group.wait()
    assert code == -signal.SIGKILL
    assert ("child-group", group.pid) not in exit_registry()
    assert wait_dead(grandchild)
    assert not group.kill()  # leader reaped: nothing is signalled any more


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_leaving_the_context_kills_the_group() -> None:
    async with await spawn_in_group(["sh", "-c", "sleep 100 & echo $!; sleep 100"]) as group:
        assert group.process.stdout is not None
        grandchild = int((await group.process.stdout.receive()).decode().split()[0])
    assert group.returncode is not None
    assert wait_dead(grandchild)


@pytest.mark.anyio
async def test_terminal_streams_are_refused() -> None:
    with pytest.raises(ValueError, match="inherit"):
        await spawn_in_group(["true"], stdout=None)
    with pytest.raises(ValueError, match="terminal"):
        await spawn_in_group(["true"], stderr=2)
    with anyio.fail_after(10):
        async with await spawn_in_group(["true"]) as group:
            assert await group.wait() == 0


CHILD_SIGTERM = """
import sys
import anyio
from agentrig.host import create_process_dir, spawn_in_group

async def main() -> None:
    path = create_process_dir(sys.argv[1], "signalled")
    group = await spawn_in_group(["sh", "-c", "sleep 100 & echo $!; exec sleep 100"])
    line = await group.process.stdout.receive()
    print(path, group.pid, line.decode().strip(), flush=True)
    await anyio.sleep(300)

anyio.run(main)
"""


@pytest.mark.subprocess
def test_sigterm_runs_the_exit_registry_and_re_raises(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_SIGTERM, str(tmp_path / "state")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        path_text, leader, grandchild = child.stdout.readline().split()
        path = Path(path_text)
        assert path.is_dir()
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=30)
    finally:
        if child.returncode is None:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGTERM  # died by the signal, as it would have
    assert not path.exists()
    assert wait_dead(int(leader))
    assert wait_dead(int(grandchild))
