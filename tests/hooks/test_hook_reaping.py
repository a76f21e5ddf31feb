"""Process trees that end with their command: real hooks whose descendants try to stay behind.

Each hook starts a sleeper that leaves the hook's process group -- ``setsid``, a double fork,
``setpgid`` -- writes the sleeper's pid to a file, and then exits, hangs or is cancelled.
The sleeper must be gone afterwards.  (A process group kill, the previous mechanism, leaves
every one of these sleepers running.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest
from test_hook_command import wait_gone

from agentrig.builtins._hook_command import factory
from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.hooks import Allow, Deny, HookErrorOutcome, HookEvent
from agentrig.host import REAPING, ReaperStartError, end_tree, open_reaped

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(not REAPING, reason="subreapers are Linux-only (documented)"),
]

EVENT = HookEvent.pre_tool_use("Bash", {"command": "ls"}, session_id="s", cwd="/", tool_use_id="c")


def _read_pid(path: Path) -> int | None:
    text = path.read_text().strip() if path.exists() else ""
    return int(text) if text else None


async def _wait_for_pid(path: Path, within: float = 10.0) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        pid = _read_pid(path)
        if pid is not None:
            return pid
        await anyio.sleep(0.02)
    raise AssertionError(f"{path} was never written")


def _sleeper(pidfile: Path, how: str) -> str:
    """Shell text starting a 300 s sleeper outside the hook's group, its pid in ``pidfile``.

    The text waits until the pid is written, so the hook goes on only once the sleeper runs.
    """
    return f"{_launch(pidfile, how)}\nwhile [ ! -s {pidfile} ]; do sleep 0.01; done"


def _launch(pidfile: Path, how: str) -> str:
    quiet = "</dev/null >/dev/null 2>&1"
    inner = f"echo $$ > {pidfile}; exec sleep 300"
    if how == "setsid":
        return f"setsid sh -c '{inner}' {quiet} &"
    if how == "double-fork":  # the intermediate shell exits at once: the sleeper is orphaned
        return f"( setsid sh -c '{inner}' {quiet} & )"
    if how == "setpgid":
        code = f"import os; os.setpgid(0, 0); open({str(pidfile)!r}, 'w').write(str(os.getpid()))"
        return f"{sys.executable} -c \"{code}; os.execvp('sleep', ['sleep', '300'])\" {quiet} &"
    if how == "holding-pipes":  # keeps the hook's stdout open, in a new session
        return f"setsid sh -c '{inner}' &"
    raise AssertionError(how)


SLEEPERS = ["setsid", "double-fork", "setpgid", "holding-pipes"]


@pytest.mark.anyio
@pytest.mark.parametrize("how", SLEEPERS)
async def test_a_descendant_that_left_the_group_ends_when_the_hook_exits(
    tmp_path: Path, how: str
) -> None:
    pidfile = tmp_path / "sleeper.pid"
    hook = factory({"options": {"command": f"{_sleeper(pidfile, how)}\necho done", "timeout": 30}})
    outcome = await hook.run(EVENT, signal=CancelSignal())
    assert outcome == Allow("done\n", None, steering=True)
    sleeper = await _wait_for_pid(pidfile)
    assert await wait_gone(sleeper), f"{how}: sleeper {sleeper} survived the hook"


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["setsid", "double-fork"])
async def test_a_descendant_that_left_the_group_ends_when_the_hook_times_out(
    tmp_path: Path, how: str
) -> None:
    pidfile = tmp_path / "sleeper.pid"
    hook = factory({"options": {"command": f"{_sleeper(pidfile, how)}\nsleep 300", "timeout": 1}})
    outcome = await hook.run(EVENT, signal=CancelSignal())
    assert outcome == HookErrorOutcome("timed out after 1s")
    sleeper = await _wait_for_pid(pidfile)
    assert await wait_gone(sleeper), f"{how}: sleeper {sleeper} survived the timeout"


@pytest.mark.anyio
async def test_a_setsid_descendant_ends_when_the_run_is_cancelled(tmp_path: Path) -> None:
    pidfile = tmp_path / "sleeper.pid"
    hook = factory({"options": {"command": f"{_sleeper(pidfile, 'setsid')}\nsleep 300"}})
    signal_ = CancelSignal()

    async def cancel_when_started() -> None:
        await _wait_for_pid(pidfile)
        signal_.cancel("stop")

    async with anyio.create_task_group() as tg:
        tg.start_soon(cancel_when_started)
        with pytest.raises(AbortError):
            await hook.run(EVENT, signal=signal_)
    assert await wait_gone(int(pidfile.read_text()))


@pytest.mark.anyio
async def test_the_hooks_own_outcome_passes_through_the_reaper(tmp_path: Path) -> None:
    denied = await factory({"options": {"command": "echo no >&2; exit 2"}}).run(
        EVENT, signal=CancelSignal()
    )
    assert denied == Deny("no")
    killed = await factory({"options": {"command": "kill -TERM $$"}}).run(
        EVENT, signal=CancelSignal()
    )
    assert killed == HookErrorOutcome("killed by signal SIGTERM")
    # the hook's stdin is the JSON event (the reaper hands its streams on untouched)
    echoed = await factory({"options": {"command": "cat"}}).run(EVENT, signal=CancelSignal())
    assert isinstance(echoed, Allow)
    assert '"tool_use_id": "c"' in echoed.output or '"tool_use_id":"c"' in echoed.output


@pytest.mark.anyio
async def test_open_reaped_reports_a_start_failure_with_a_code(tmp_path: Path) -> None:
    with pytest.raises(ReaperStartError) as caught:
        await open_reaped(
            [str(tmp_path / "missing")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    assert caught.value.code == "process.start_failed"
    assert "No such file or directory" in str(caught.value)


@pytest.mark.anyio
async def test_end_tree_ends_a_running_command_and_its_setsid_descendant(tmp_path: Path) -> None:
    pidfile = tmp_path / "sleeper.pid"
    process = await open_reaped(
        ["/bin/sh", "-c", f"{_sleeper(pidfile, 'setsid')}\nsleep 300"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    async with process:
        sleeper = await _wait_for_pid(pidfile)
        end_tree(process)
        with anyio.fail_after(10):
            await process.wait()
    assert await wait_gone(sleeper)


_ORPHANING_PARENT = """
import sys, anyio
from agentrig.builtins._hook_command import factory
from agentrig.cancel import CancelSignal
from agentrig.hooks import HookEvent

async def main() -> None:
    hook = factory({"options": {"command": sys.argv[1], "timeout": 300}})
    event = HookEvent.pre_tool_use("Bash", {}, session_id="s", cwd="/", tool_use_id="c")
    await hook.run(event, signal=CancelSignal())

anyio.run(main)
"""


@pytest.mark.anyio
@pytest.mark.slow
async def test_the_tree_ends_when_the_agentrig_process_is_killed(tmp_path: Path) -> None:
    # SIGKILL runs no cleanup in the parent: the reaper learns of it (PR_SET_PDEATHSIG)
    pidfile = tmp_path / "sleeper.pid"
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(_ORPHANING_PARENT))
    command = f"{_sleeper(pidfile, 'setsid')}\nsleep 300"
    parent = await anyio.open_process([sys.executable, str(script), command])
    async with parent:
        sleeper = await _wait_for_pid(pidfile, within=30)
        os.kill(parent.pid, signal.SIGKILL)
        await parent.wait()
    assert await wait_gone(sleeper), "the sleeper outlived the killed agentrig process"


def test_both_ways_of_listing_children_find_a_child() -> None:
    # the reaper reads /proc/<pid>/task/<pid>/children, or scans every process's parent on
    # kernels without it; both must see a child of the calling process
    from agentrig.host import _reaper

    child = subprocess.Popen(["sleep", "30"])
    try:
        assert child.pid in _reaper._scan_children()
        assert child.pid in _reaper._children()
    finally:
        child.kill()
        child.wait()


def test_the_reaper_starts_nothing_when_its_parent_is_already_gone(tmp_path: Path) -> None:
    # PR_SET_PDEATHSIG is armed only once the reaper runs: if the parent it was started for
    # is not its parent any more, the command must not start (nobody would end it)
    from agentrig.host import _reaper

    marker = tmp_path / "started"
    read_fd, write_fd = os.pipe()
    argv = [sys.executable, "-I", "-S", _reaper.__file__, str(write_fd), "1"]
    try:
        done = subprocess.run(
            [*argv, "--", "touch", str(marker)],
            pass_fds=(write_fd,),
            check=False,
        )
    finally:
        os.close(write_fd)
        os.close(read_fd)
    assert done.returncode == 128 + signal.SIGTERM
    assert not marker.exists()
