"""A reaped command confined by its reaper: identity, groups, capabilities and rlimits.

The workspace's native sandbox relies on this instead of ``prlimit`` + ``setpriv`` execs:
here each guarantee is read from inside the command, through the launcher's waiting child
and through a reaper of the command's own; a start that cannot confine does not start.
"""

from __future__ import annotations

import os
import pwd
import resource
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agentrig.host import REAPING, Confinement, ReaperStartError, _launching, open_reaped

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.subprocess,
    pytest.mark.skipif(not REAPING, reason="subreapers are Linux-only (documented)"),
]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="changing the uid needs root")

PROBE = (  # waits for its stdin to close: the test reads its reaper's parent first
    "cat >/dev/null; id -u; id -g; id -G; ulimit -n; ulimit -t; ulimit -f; "
    "grep -E '^(NoNewPrivs|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status"
)


#: limits the reaper can keep itself (it spawns without forking under the launcher), and
#: with an open-file limit (it forks and the fork confines itself)
LIMITS = {
    "keepable": ((resource.RLIMIT_CPU, 7), (resource.RLIMIT_FSIZE, 4096)),
    "open files": (
        (resource.RLIMIT_NOFILE, 64),
        (resource.RLIMIT_CPU, 7),
        (resource.RLIMIT_FSIZE, 4096),
    ),
}


def _nobody(limits: tuple[tuple[int, int], ...] = LIMITS["open files"]) -> Confinement:
    entry = pwd.getpwnam("nobody")
    return Confinement(entry.pw_uid, entry.pw_gid, limits)


def _unused_uid() -> int:
    """A user id no account has and no other test process uses (one per test process)."""
    uid = 200_000 + os.getpid() % 100_000
    while True:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
        uid += 1


@pytest.fixture(params=["launcher", "own reaper"])
def path(request: pytest.FixtureRequest) -> Iterator[str]:
    """Through the launcher's waiting child, or a reaper started for the command."""
    state = _launching._state
    saved = state.unavailable
    if request.param == "own reaper":
        state.unavailable = "forced by the test"
    try:
        yield str(request.param)
    finally:
        state.unavailable = saved


def _parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2 :].split()[1])


async def _run(command: list[str], confine: Confinement) -> tuple[str, int, int]:
    """The command's output, exit code, and its reaper's parent."""
    process = await open_reaped(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},
        confine=confine,
    )
    async with process:
        parent = _parent_of(process.pid)
        assert process.stdin is not None
        assert process.stdout is not None
        await process.stdin.aclose()
        data = b""
        with anyio.fail_after(30):
            while True:
                try:
                    data += await process.stdout.receive()
                except anyio.EndOfStream:
                    break
            code = await process.wait()
    return data.decode(), code, parent


@needs_root
@pytest.mark.parametrize("limits", list(LIMITS))
async def test_the_command_runs_as_the_user_without_groups_caps_or_higher_limits(
    path: str, limits: str
) -> None:
    confine = _nobody(LIMITS[limits])
    out, code, parent = await _run(["/bin/sh", "-c", PROBE], confine)
    assert code == 0, out
    assert (parent == os.getpid()) is (path == "own reaper")
    lines = out.splitlines()
    gid = str(confine.gid)
    files = "64" if limits == "open files" else str(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    assert lines[:6] == [str(confine.uid), gid, gid, files, "7", "8"]  # -f: 512-byte blocks
    raised, code, _ = await _run(["/bin/sh", "-c", "cat >/dev/null; ulimit -t 100"], confine)
    assert code != 0, raised
    status = dict(line.split(":\t") for line in lines[6:])
    assert status["NoNewPrivs"] == "1"
    for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(status[name], 16) == 0, (name, status[name])


@needs_root
async def test_a_program_that_is_not_there_is_a_start_failure(path: str) -> None:
    with pytest.raises(ReaperStartError, match="no-such-program"):
        await _run(["no-such-program-x"], _nobody())


def test_root_or_a_malformed_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="uid"):
        Confinement(0, 100)
    with pytest.raises(ValueError, match="gid"):
        Confinement(100, 0)
    with pytest.raises(ValueError, match="limit"):
        Confinement(100, 100, ((resource.RLIMIT_NOFILE, -1),))
    assert Confinement(5, 6, ((1, 2), (3, 4))).wire() == "5,6,1=2,3=4"


_UNPRIVILEGED = """
import os, subprocess, anyio
from agentrig.host import Confinement, ReaperStartError, open_reaped

async def run(confine):
    try:
        process = await open_reaped(["/bin/true"], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    confine=confine)
    except ReaperStartError as exc:
        return f"refused: {exc}"
    async with process:
        await process.wait()
    return "started"

print("root", anyio.run(run, Confinement(65533, 65533)), flush=True)  # imports done as root
os.setgroups([])
os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534)
print("nobody", anyio.run(run, Confinement(65533, 65533)), flush=True)
"""


@needs_root
def test_a_confinement_the_caller_cannot_apply_does_not_start(tmp_path: Path) -> None:
    # a process that is not root cannot change to another user: the command never runs
    script = tmp_path / "unprivileged.py"
    script.write_text(textwrap.dedent(_UNPRIVILEGED))
    script.chmod(0o644)
    tmp_path.chmod(0o755)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd="/"
    )
    lines = done.stdout.splitlines()
    assert lines[0] == "root started", (done.stdout, done.stderr)
    assert lines[1].startswith("nobody refused: "), (done.stdout, done.stderr)
    assert "not permitted" in lines[1]


@needs_root
@pytest.mark.parametrize("limits", list(LIMITS))
async def test_the_command_cannot_signal_its_reaper(path: str, limits: str) -> None:
    # the reaper took back its own real uid: the confined command cannot end it (nor,
    # through it, escape the tree's end)
    probe = "cat >/dev/null; sleep 0.05; kill -KILL $PPID && echo killed || echo refused"
    out, code, _ = await _run(["/bin/sh", "-c", probe], _nobody(LIMITS[limits]))
    assert "refused" in out, out
    assert "not permitted" in out
    assert code == 0


@needs_root
async def test_the_process_limit_holds_for_the_users_forks(path: str) -> None:
    # RLIMIT_NPROC is one the reaper keeps itself (the spawn without a fork): the command's
    # own forks past it fail.  The kernel counts every process of the user, so the command
    # runs as a user id nobody else has: other tests run commands as "nobody" meanwhile
    confine = Confinement(_unused_uid(), _nobody().gid, ((resource.RLIMIT_NPROC, 3),))
    forks = "cat >/dev/null; for i in 1 2 3 4 5; do sleep 0.3 & done; wait; echo all"
    out, code, _ = await _run(["/bin/sh", "-c", forks], confine)
    assert "Cannot fork" in out, out
    assert "all" not in out
    assert code != 0
