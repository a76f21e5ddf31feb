"""A small process that runs one command and ends every descendant the command leaves behind.

Never imported: :func:`agentrig.host.open_reaped` runs this file as its own process
(``python -I -S _reaper.py STATUS_FD PARENT_PID -- ARGV...``), so it uses the standard
library only.  Linux only.

Why a separate process: a process group does not hold a descendant that calls ``setsid`` or
``setpgid``, and a killed group leader's orphans are handed to init, where nobody can tell
them apart any more.  This process makes itself a *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``): every orphaned descendant of the command -- whatever
session or group it moved to -- is re-parented to it instead of to init.  When the command
exits, or when this process receives SIGTERM (the run timed out or was cancelled, or its
parent died: ``PR_SET_PDEATHSIG``), it SIGKILLs every child it has, reaps them and repeats
until none is left.  Then it exits as the command did (the same status, or killed by the same
signal), so the parent reads the command's own outcome.

STATUS_FD tells the parent whether the command started: a start failure is written to it
(and the exit status is 127); on success it is closed without a byte.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
import time
from collections.abc import Callable, Mapping

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_WAKE = {signal.SIGTERM, signal.SIGCHLD}
#: how long to wait for a child that the kernel is still re-parenting to us (1 ms steps)
_SETTLE_STEPS = 1000
libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    if libc.prctl(option, value, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def _children() -> list[int]:
    """The pids whose parent is this process (single-threaded, so one task's list)."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children", encoding="ascii") as handle:
            return [int(pid) for pid in handle.read().split()]
    except OSError:
        return _scan_children()  # a kernel without CONFIG_PROC_CHILDREN


def _scan_children() -> list[int]:
    """The pids whose parent is this process, read from every process's ``stat``."""
    me = os.getpid()
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                raw = handle.read()
        except OSError:
            continue
        fields = raw[raw.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[1] == str(me).encode():
            found.append(int(name))
    return found


def _end_all() -> None:
    """SIGKILL and reap every child, including orphans re-parented here meanwhile."""
    idle = 0
    while True:
        signalled = unkillable = False
        for pid in _children():
            try:
                os.kill(pid, signal.SIGKILL)
                signalled = True
            except ProcessLookupError:
                pass
            except PermissionError:
                unkillable = True  # it changed its user (a set-uid program): out of reach
        try:
            pid, _ = os.waitpid(-1, 0 if signalled else os.WNOHANG)
        except ChildProcessError:
            return  # no child left
        if pid:
            idle = 0
            continue
        idle += 1
        if unkillable or idle > _SETTLE_STEPS:
            return  # only children we may not signal are left
        time.sleep(0.001)


def _wait_for(child: int) -> int | None:
    """The command's wait status, or None when SIGTERM asked us to stop first."""
    while True:
        info = signal.sigwaitinfo(_WAKE)
        if info.si_signo == signal.SIGTERM:
            return None
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return None
            if pid == 0:
                break
            if pid == child:
                return status


def _exit_like(status: int) -> int:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
        os.kill(os.getpid(), number)
        return 128 + number  # a signal whose default action does not end a process
    return os.waitstatus_to_exitcode(status)


def _detach_streams() -> None:
    # our copies of the command's stdin/stdout/stderr must not keep its pipes open
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def arm(parent: int, *, block: bool = True) -> bool:
    """Block the signals we wait for, become a subreaper, die with ``parent``.

    False when ``parent`` is not our parent any more (it died before we were armed).
    ``block=False`` leaves SIGTERM deadly (a child that waits for work): the caller blocks
    ``_WAKE`` itself before it starts anything.
    """
    if block:
        signal.pthread_sigmask(signal.SIG_BLOCK, _WAKE)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    return os.getppid() == parent


def run(
    command: list[str] | list[bytes],
    *,
    parent: int,
    report: Callable[[str | None], None],
    cwd: str | bytes | None = None,
    env: Mapping[bytes, bytes] | None = None,
    finished: Callable[[int], None] | None = None,
    armed: bool = False,
) -> int:
    """Run ``command`` as a subreaper until it and every descendant are gone; the exit code.

    ``report`` is called once: with the start failure's text, or with None once the command
    runs.  ``parent`` is the pid that must still be our parent once ``PR_SET_PDEATHSIG`` is
    armed (otherwise nobody would end the tree, and the command is not started).  Shared by
    this script and the launcher's per-command children (``_launcher.py``).  ``env`` (by
    default ours) is the command's environment; its ``PATH`` is searched for the program.
    ``finished`` hears the wait status this process exits with once the whole tree is gone.
    ``armed``: :func:`arm` already succeeded for ``parent``.
    """
    try:
        if not armed and not arm(parent):
            return 128 + signal.SIGTERM  # the parent died before we were started
        if cwd is not None:
            os.chdir(cwd)
        if env is not None:  # posix_spawnp searches our own PATH: make it the command's
            if b"PATH" in env:
                os.putenv(b"PATH", env[b"PATH"])
            else:
                os.unsetenv(b"PATH")
        child = os.posix_spawnp(
            command[0],
            command,
            os.environ if env is None else env,
            setsigmask=(),
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
        )
    except OSError as exc:
        report(str(exc) or "cannot start")
        return 127
    report(None)
    _detach_streams()
    status = _wait_for(child)
    _end_all()
    if status is None:
        status = (128 + signal.SIGTERM) << 8  # exit 143, as ``timeout`` and shells report it
    if finished is not None:  # the status we are about to exit with (no core: RLIMIT_CORE 0)
        finished(os.WTERMSIG(status) if os.WIFSIGNALED(status) else status)
    return _exit_like(status)


def main(argv: list[str]) -> int:
    """Run ``argv[4:]`` (after ``STATUS_FD PARENT_PID --``); see the module docs."""
    status_fd, parent, command = int(argv[1]), int(argv[2]), argv[4:]
    os.set_inheritable(status_fd, False)

    def report(failure: str | None) -> None:
        if failure is not None:
            os.write(status_fd, failure.encode("utf-8", "replace"))
        os.close(status_fd)

    return run(command, parent=parent, report=report)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
