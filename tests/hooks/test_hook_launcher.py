"""The reaper launcher: one process per agentrig process that forks each command's reaper.

Every command goes through it (no interpreter start per command); what a reaper guarantees
is unchanged (``test_hook_reaping.py`` runs through it too).  Here: that the launcher is
really used and shared, that many commands can run through it at once, that its death ends
the trees it started and later commands still run, that commands fall back to a reaper of
their own when it cannot start or cannot carry the request, and that it ends with agentrig.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.abc
import anyio.lowlevel
import pytest
from test_hook_command import same_dir, wait_gone
from test_hook_reaping import _sleeper, _wait_for_pid

from agentrig.builtins._hook_command import factory
from agentrig.cancel import CancelSignal
from agentrig.hooks import Allow, Deny, HookErrorOutcome, HookEvent
from agentrig.host import REAPING, _launching, end_tree, open_reaped

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(not REAPING, reason="subreapers are Linux-only (documented)"),
]

EVENT = HookEvent.pre_tool_use("Bash", {"command": "ls"}, session_id="s", cwd="/", tool_use_id="c")


def _parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2 :].split()[1])


def _launcher_pid() -> int:
    current = _launching._state.current
    assert current is not None, "no launcher runs"
    return current.popen.pid


def _forget_launcher() -> None:
    """Close this process's launcher (it exits on the end of its control socket)."""
    with _launching._state.lock:
        if _launching._state.current is not None:
            _launching._state.current.retire()
        _launching._state.current = None
        _launching._state.unavailable = None
        _launching._state.script = _launching._LAUNCHER


def _held(pidfile: Path, go: Path) -> list[str]:
    """A command that starts a setsid sleeper, then waits for ``go`` before it says done: the
    test reads the command's parent while it is certainly alive (a command that finished at
    once could be reaped before /proc was read)."""
    wait = f"while [ ! -e {go} ]; do sleep 0.01; done"
    return ["/bin/sh", "-c", f"{_sleeper(pidfile, 'setsid')}\n{wait}\necho done"]


@pytest.fixture
def fresh() -> Iterator[None]:
    _forget_launcher()
    yield
    _forget_launcher()


async def _start(command: list[str], env: dict[str, str] | None = None) -> anyio.abc.Process:
    return await open_reaped(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )


@pytest.mark.anyio
async def test_commands_start_through_one_shared_launcher(fresh: None) -> None:
    parents = set()
    for _ in range(3):
        process = await _start(["sleep", "30"])
        async with process:
            parents.add(_parent_of(process.pid))
            end_tree(process)
            await process.wait()
    assert parents == {_launcher_pid()}
    assert _launcher_pid() != os.getpid()


@pytest.mark.anyio
async def test_many_concurrent_commands_each_get_their_own_answer(fresh: None) -> None:
    outcomes: dict[int, object] = {}

    async def one(index: int) -> None:
        hook = factory(
            {
                "options": {
                    "command": f'cat >/dev/null; echo "$N"; exit {index % 3}',
                    "env": {"N": str(index)},
                }
            }
        )
        outcomes[index] = await hook.run(EVENT, signal=CancelSignal())

    async with anyio.create_task_group() as tg:
        for index in range(24):
            tg.start_soon(one, index)
    for index, outcome in outcomes.items():
        if index % 3 == 0:
            assert outcome == Allow(f"{index}\n", None, steering=True)
        elif index % 3 == 2:
            assert isinstance(outcome, Deny), (index, outcome)
        else:
            assert isinstance(outcome, HookErrorOutcome), (index, outcome)
            assert outcome.reason.startswith("exited with status 1"), outcome
    assert len(outcomes) == 24


@pytest.mark.anyio
async def test_a_setsid_descendant_ends_with_its_launched_command(
    fresh: None, tmp_path: Path
) -> None:
    pidfile, go = tmp_path / "sleeper.pid", tmp_path / "go"
    process = await _start(_held(pidfile, go))
    async with process:
        assert _parent_of(process.pid) == _launcher_pid()
        go.touch()
        assert process.stdout is not None
        assert await process.stdout.receive() == b"done\n"
        assert await process.wait() == 0
    assert await wait_gone(await _wait_for_pid(pidfile))


@pytest.mark.anyio
async def test_the_command_reads_its_stdin_and_gets_its_cwd_and_env(
    fresh: None, tmp_path: Path
) -> None:
    hook = factory(
        {
            "options": {
                "command": ["/bin/sh", "-c", 'pwd; echo "$GREETING"; head -c 9'],
                "cwd": str(tmp_path),
                "env": {"GREETING": "h\u00e9llo"},
            }
        }
    )
    outcome = await hook.run(EVENT, signal=CancelSignal())
    assert isinstance(outcome, Allow)
    where, greeting, head = outcome.output.split("\n")
    assert same_dir(where, tmp_path)
    assert greeting == "h\u00e9llo"
    assert head.startswith('{"session') or head.startswith("{")


@pytest.mark.anyio
async def test_the_launchers_death_ends_its_trees_and_later_commands_still_run(
    fresh: None, tmp_path: Path
) -> None:
    pidfile = tmp_path / "sleeper.pid"
    process = await _start(["/bin/sh", "-c", f"{_sleeper(pidfile, 'setsid')}\nsleep 300"])
    async with process:
        sleeper = await _wait_for_pid(pidfile)
        launcher = _launcher_pid()
        os.kill(launcher, signal.SIGKILL)
        with anyio.fail_after(30):
            code = await process.wait()
    assert code == 128 + signal.SIGTERM  # the reaper ended the tree on PR_SET_PDEATHSIG
    assert await wait_gone(sleeper), "the sleeper outlived the launcher"
    # the next command starts (through a new launcher) and is answered as before
    outcome = await factory({"options": {"command": "echo again"}}).run(
        EVENT, signal=CancelSignal()
    )
    assert outcome == Allow("again\n", None, steering=True)
    # (that one may have found the dead launcher first and started a reaper of its own)
    _, parent = await _output("true")
    assert parent == _launcher_pid() != launcher


@pytest.mark.anyio
async def test_a_launcher_that_cannot_start_leaves_each_command_its_own_reaper(
    fresh: None, tmp_path: Path
) -> None:
    _launching._state.script = tmp_path / "missing-launcher.py"
    pidfile, go = tmp_path / "sleeper.pid", tmp_path / "go"
    process = await _start(_held(pidfile, go))
    async with process:
        assert _parent_of(process.pid) == os.getpid()  # a reaper of our own, as before
        go.touch()
        assert await process.wait() == 0
    assert await wait_gone(await _wait_for_pid(pidfile))
    assert _launching._state.current is None
    assert "did not start" in (_launching._state.unavailable or "")
    outcome = await factory({"options": {"command": "echo fallback"}}).run(
        EVENT, signal=CancelSignal()
    )
    assert outcome == Allow("fallback\n", None, steering=True)


@pytest.mark.anyio
async def test_a_request_too_large_for_one_message_starts_its_own_reaper(fresh: None) -> None:
    # three 100 KB variables: each fits an execve, together not one socket message
    env = {**os.environ, **{f"BIG{i}": "x" * 100_000 for i in range(3)}}
    process = await _start(["/bin/sh", "-c", 'printf %s "$BIG2" | wc -c; sleep 30'], env=env)
    async with process:
        assert _parent_of(process.pid) == os.getpid()
        assert process.stdout is not None
        assert (await process.stdout.receive()).strip() == b"100000"
        end_tree(process)
        await process.wait()
    # the launcher itself is still there for the next command
    process = await _start(["sleep", "30"])
    async with process:
        assert _parent_of(process.pid) == _launcher_pid()
        end_tree(process)
        await process.wait()


@pytest.mark.anyio
async def test_a_start_cancelled_at_once_leaves_nothing_running(fresh: None) -> None:
    token = f"0.{os.getpid()}"  # sleep adds its arguments: a unique, harmless argv
    warm = await _start(["true"])  # the launcher runs: the request goes out before the cancel
    async with warm:
        await warm.wait()
    with anyio.CancelScope() as scope:
        scope.cancel()
        await _start(["sleep", "300", token])
    assert scope.cancelled_caught

    def survivors() -> list[int]:
        found = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if argv[:1] == [b"sleep"] and token.encode() in argv:
                    found.append(int(name))
        return found

    for pid in survivors():
        assert await wait_gone(pid), f"sleep {pid} outlived the cancelled start"


_PARENT = """
import sys, anyio
from agentrig.builtins._hook_command import factory
from agentrig.cancel import CancelSignal
from agentrig.hooks import HookEvent
from agentrig.host import _launching

async def main() -> None:
    hook = factory({"options": {"command": sys.argv[1], "timeout": 300}})
    event = HookEvent.pre_tool_use("Bash", {}, session_id="s", cwd="/", tool_use_id="c")
    async def run() -> None:
        await hook.run(event, signal=CancelSignal())

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        while _launching._state.current is None:
            await anyio.sleep(0.01)
        print(_launching._state.current.popen.pid, flush=True)

anyio.run(main)
"""


@pytest.mark.anyio
@pytest.mark.slow
async def test_the_launcher_and_its_trees_end_when_agentrig_is_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "sleeper.pid"
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(_PARENT))
    command = f"{_sleeper(pidfile, 'setsid')}\nsleep 300"
    parent = await anyio.open_process(
        [sys.executable, str(script), command], stdout=subprocess.PIPE
    )
    async with parent:
        sleeper = await _wait_for_pid(pidfile, within=30)
        assert parent.stdout is not None
        launcher = int(await parent.stdout.receive())
        os.kill(parent.pid, signal.SIGKILL)
        await parent.wait()
    assert await wait_gone(sleeper), "the sleeper outlived the killed agentrig process"
    assert await wait_gone(launcher), "the launcher outlived the killed agentrig process"


@pytest.mark.anyio
async def test_orphans_of_a_killed_reaper_are_ended_by_the_launcher(
    fresh: None, tmp_path: Path
) -> None:
    pidfile = tmp_path / "sleeper.pid"
    process = await _start(["/bin/sh", "-c", f"{_sleeper(pidfile, 'setsid')}\nsleep 300"])
    async with process:
        sleeper = await _wait_for_pid(pidfile)
        os.kill(process.pid, signal.SIGKILL)  # nobody left to end the tree but the launcher
        with anyio.fail_after(30):
            assert await process.wait() == -signal.SIGKILL
    assert await wait_gone(sleeper), "an orphan of the killed reaper survived"


@pytest.mark.anyio
async def test_the_launcher_exits_when_its_control_socket_is_closed(fresh: None) -> None:
    process = await _start(["true"])
    async with process:
        await process.wait()
    launcher = _launcher_pid()
    _forget_launcher()
    assert await wait_gone(launcher)


_FORKING = """
import os, subprocess, sys, anyio
from agentrig.host import _launching, open_reaped

def parent_of(pid):
    stat = open(f"/proc/{pid}/stat").read()
    return int(stat[stat.rfind(")") + 2:].split()[1])

async def run():
    process = await open_reaped(["sleep", "30"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    async with process:
        reaper_parent = parent_of(process.pid)
        process.terminate()
        await process.wait()
    return reaper_parent, _launching._state.current.popen.pid

first = anyio.run(run)
child = os.fork()
if child == 0:
    print("child", *anyio.run(run), flush=True)
    os._exit(0)
os.waitpid(child, 0)
print("parent", *first, *anyio.run(run), flush=True)
"""


@pytest.mark.anyio
async def test_a_forked_child_starts_its_own_launcher(tmp_path: Path) -> None:
    script = tmp_path / "forking.py"
    script.write_text(textwrap.dedent(_FORKING))
    done = await anyio.run_process([sys.executable, str(script)], check=True)
    lines = dict(line.split(" ", 1) for line in done.stdout.decode().splitlines())
    child = [int(x) for x in lines["child"].split()]
    parent = [int(x) for x in lines["parent"].split()]
    assert child[0] == child[1]  # the child's command ran under the child's own launcher
    assert parent[0] == parent[1] == parent[2] == parent[3]  # the parent's kept serving
    assert child[1] != parent[1]


@pytest.mark.anyio
async def test_a_waiter_wakes_when_returncode_took_the_status_first(fresh: None) -> None:
    # the hook runner reads returncode (end_tree, kill_group) while another task waits
    process = await open_reaped(
        ["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    codes: list[int] = []

    async def waiter() -> None:
        codes.append(await process.wait())

    async with process:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(waiter)
                await anyio.lowlevel.checkpoint()  # the waiter is parked on the channel
                assert process.stdin is not None
                await process.stdin.aclose()  # cat exits
                _poll_until_reaped(process)  # without yielding: the waiter cannot run
    assert codes == [0]


def _poll_until_reaped(process: anyio.abc.Process) -> None:
    """Let the launcher reap the reaper first, so one read takes every status and the end."""
    deadline = time.monotonic() + 30
    while Path(f"/proc/{process.pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.001)
    time.sleep(0.05)  # the launcher's own status and the channel's end follow the reap
    assert process.returncode == 0


async def _output(text: str, cwd: str | None = None) -> tuple[str, int]:
    """Shell ``text``'s stdout and its reaper's parent (read while the shell waits)."""
    process = await open_reaped(
        ["/bin/sh", "-c", f"cat >/dev/null; {text}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None,
        cwd=cwd,
    )
    async with process:
        parent = _parent_of(process.pid)
        assert process.stdin is not None
        assert process.stdout is not None
        await process.stdin.aclose()
        chunks = []
        with anyio.fail_after(30):
            while True:
                try:
                    chunks.append(await process.stdout.receive())
                except anyio.EndOfStream:
                    break
            await process.wait()
    return b"".join(chunks).decode(), parent


@pytest.mark.anyio
async def test_the_working_directory_is_ours_at_the_call_not_the_launchers(
    fresh: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _output("true")  # the launcher starts in the old directory
    (tmp_path / "sub").mkdir()
    script = tmp_path / "sub" / "where.sh"
    script.write_text("#!/bin/sh\npwd\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    here, parent = await _output("pwd")
    assert same_dir(here.strip(), tmp_path)
    assert parent == _launcher_pid()
    relative, _ = await _output("./where.sh", cwd="sub")  # relative to the new directory
    assert same_dir(relative.strip(), tmp_path / "sub")


@pytest.mark.anyio
async def test_a_changed_umask_or_limit_reaches_the_command(fresh: None) -> None:
    import resource

    await _output("true")  # the launcher has the old umask and limits
    old_mask = os.umask(0o027)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lowered = min(soft, 512) - 1
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (lowered, hard))
        output, parent = await _output("umask; ulimit -n")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        os.umask(old_mask)
    assert output.split() == ["0027", str(lowered)]
    assert parent == os.getpid()  # a reaper of its own: the launcher has the old values
    _, parent = await _output("true")  # back to what the launcher has: it serves again
    assert parent == _launcher_pid()


_DROPPING = """
import os, subprocess, anyio
from agentrig.host import open_reaped

async def run():
    process = await open_reaped(["id", "-u"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=None)
    async with process:
        data = b""
        try:
            while True:
                data += await process.stdout.receive()
        except anyio.EndOfStream:
            pass
        await process.wait()
    return data.decode().strip()

print("before", anyio.run(run), flush=True)
os.setgroups([])
os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534)
print("after", anyio.run(run), flush=True)
"""


@pytest.mark.anyio
@pytest.mark.skipif(os.geteuid() != 0, reason="dropping credentials needs root")
async def test_commands_after_dropping_root_run_without_it(tmp_path: Path) -> None:
    script = tmp_path / "dropping.py"
    script.write_text(textwrap.dedent(_DROPPING))
    script.chmod(0o755)
    os.chmod(tmp_path, 0o755)
    done = await anyio.run_process([sys.executable, str(script)], check=True)
    assert done.stdout.decode().split() == ["before", "0", "after", "65534"]


@pytest.mark.anyio
async def test_a_waiting_child_killed_before_its_request_is_replaced(fresh: None) -> None:
    # the launcher keeps a forked child waiting, and agentrig sends it the next request
    # directly; one killed meanwhile costs that request a reaper of its own, nothing else
    running = await _start(["sleep", "300"])
    try:
        launcher = _launcher_pid()
        for _ in range(3):
            for child in _children_of(launcher):
                if child != running.pid:
                    with contextlib.suppress(ProcessLookupError):  # a reaper just done
                        os.kill(child, signal.SIGKILL)
            output, _ = await _output("echo served")
            assert output == "served\n"
        # a killed child may still be dying when the next request reaches it (that one then
        # starts its own reaper); the launcher serves again once it replaced the child
        for _ in range(20):
            output, parent = await _output("echo again")
            assert output == "again\n"
            if parent == launcher:
                break
        assert parent == launcher
        assert running.returncode is None  # the launcher's other commands go on
    finally:
        end_tree(running)
        with anyio.fail_after(30):
            await running.aclose()


def _children_of(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


@pytest.mark.anyio
async def test_a_waiting_child_dies_with_its_launcher(fresh: None) -> None:
    # agentrig holds a way to send it a request: it must not outlive the launcher, or a
    # command would run where nobody ends its tree when agentrig dies
    await _output("true")
    launcher = _launcher_pid()
    waiting = _children_of(launcher)
    assert waiting
    os.kill(launcher, signal.SIGKILL)
    for child in waiting:
        assert await wait_gone(child), "a waiting child outlived its launcher"
    output, parent = await _output("echo next")
    assert output == "next\n"
    assert parent != launcher  # a reaper of its own, or one from a new launcher
    _, parent = await _output("true")
    assert parent == _launcher_pid() != launcher


@pytest.mark.anyio
async def test_reading_the_commands_output_is_a_checkpoint(fresh: None) -> None:
    # a reader of a command that keeps writing must still see its timeout or cancellation
    process = await _start(["/bin/sh", "-c", "echo hi; exec sleep 300"])
    async with process:
        assert process.stdout is not None
        with anyio.CancelScope() as scope:
            scope.cancel()
            await process.stdout.receive()
        assert scope.cancelled_caught
        assert await process.stdout.receive() == b"hi\n"  # nothing read was lost
        end_tree(process)
        await process.wait()
