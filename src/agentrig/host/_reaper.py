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

``--confine=UID,GID[,RESOURCE=VALUE...]`` before ``--`` runs the command confined: this
process forks it, and the fork lowers the rlimits, sets no-new-privileges, empties the
capability bounding, inheritable and ambient sets, clears the supplementary groups and
changes to that gid and uid before it execs (what ``prlimit`` and ``setpriv`` would do, without
their two execs).  The reaper itself keeps its identity: it must still reach the tree.
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
from errno import EINVAL

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
#: rlimits a reaper can live under once it started its command: it uses little CPU, writes
#: no file and forks nothing (an address-space or open-file limit could break its own work)
_KEEPABLE = frozenset({resource.RLIMIT_CPU, resource.RLIMIT_FSIZE, resource.RLIMIT_NPROC})
#: a confinement: uid, gid, and (rlimit resource, value) pairs (soft and hard both)
Confine = tuple[int, int, tuple[tuple[int, int], ...]]
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


def _last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return 63  # unknown: drop until the kernel says there is no such capability


def _no_inheritable_caps() -> None:
    """Empty the inheritable set (capset v3; permitted and effective left as they are)."""
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable} halves
    if libc.capget(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    data[2] = data[5] = 0
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def _no_exec_privileges(last_cap: int) -> None:
    """No-new-privileges and empty capability bounding, inheritable and ambient sets: what
    an exec from this process can gain (its own effective capabilities stay)."""
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    for cap in range(last_cap + 1):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            errno = ctypes.get_errno()
            if errno == EINVAL:
                break  # past the kernel's last capability: none left to drop
            raise OSError(errno, f"cannot drop capability {cap}: {os.strerror(errno)}")
    _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
    _no_inheritable_caps()


def _confine_self(confine: Confine, last_cap: int) -> None:
    """In the fork that becomes the command: limits, privileges, then identity (in that
    order: the bounding set and the groups can only be changed before the uid)."""
    uid, gid, limits = confine
    for which, value in limits:
        resource.setrlimit(which, (value, value))
    _no_exec_privileges(last_cap)
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def _spawn_as(
    command: list[str] | list[bytes],
    env: Mapping[bytes, bytes] | Mapping[str, str],
    confine: Confine,
    last_cap: int,
) -> int:
    """``posix_spawn`` (no fork of this interpreter) with ``resetids``: for the spawn this
    process takes the command's ids as its *real* ids; the child's effective ids become
    them and its exec makes them its saved ids too; its capabilities are gone with its root
    euid.  This process keeps root as effective and saved ids and takes its real ids back at
    once.  What it cannot take back it keeps, harmlessly: it never execs (no exec
    privileges, no groups) and the rlimits are ones it never nears (:data:`_KEEPABLE`).

    Only under the launcher: in the instant before the real uid is back, the command could
    signal this process; were it killed, the launcher -- a subreaper above it -- ends the
    orphaned tree.
    """
    uid, gid, limits = confine
    _no_exec_privileges(last_cap)
    os.setgroups([])
    for which, value in limits:
        resource.setrlimit(which, (value, value))
    ruid, rgid = os.getuid(), os.getgid()
    os.setresgid(gid, -1, -1)
    try:
        os.setresuid(uid, -1, -1)
        try:
            return os.posix_spawnp(
                command[0],
                command,
                env,
                setsigmask=(),
                setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
                resetids=True,
            )
        finally:
            os.setresuid(ruid, -1, -1)
    finally:
        os.setresgid(rgid, -1, -1)


def _program_paths(
    program: str | bytes, env: Mapping[bytes, bytes] | Mapping[str, str]
) -> list[str] | list[bytes]:
    """Where ``program`` may be, in ``env``'s PATH order (itself when it names a path)."""
    if isinstance(program, bytes):
        if b"/" in program:
            return [program]
        return [os.path.join(os.fsencode(d), program) for d in _exec_path(env)]
    if "/" in program:
        return [program]
    return [os.path.join(d, program) for d in _exec_path(env)]


def _exec_path(env: Mapping[bytes, bytes] | Mapping[str, str]) -> list[str]:
    """``os.get_exec_path`` of either kind of environment.

    The function reads a bytes ``PATH`` too, but its stubs take only a str environment, so
    the one entry it needs is decoded here first (no ``PATH``: the default search path).
    """
    path = next((os.fsdecode(v) for k, v in env.items() if os.fsdecode(k) == "PATH"), None)
    return os.get_exec_path({} if path is None else {"PATH": path})


def _exec_first(
    paths: list[str] | list[bytes],
    command: list[str] | list[bytes],
    env: Mapping[bytes, bytes] | Mapping[str, str],
) -> None:
    """Exec the first of ``paths`` that runs; else raise, as ``execvpe`` would."""
    missing: OSError | None = None
    other: OSError | None = None
    for path in paths:
        try:
            os.execve(path, command, env)
        except (FileNotFoundError, NotADirectoryError) as exc:
            missing = exc
        except OSError as exc:  # e.g. permission denied: said rather than "not found"
            other = other or exc
    raise other or missing or FileNotFoundError(f"no program {paths!r}")


def _spawn_confined(
    command: list[str] | list[bytes],
    env: Mapping[bytes, bytes] | Mapping[str, str],
    confine: Confine,
    guarded: bool = False,
) -> int:
    """Start the command confined (see the module docs); OSError saying why it did not.

    ``guarded``: a subreaper above this process (the launcher) would end the tree were this
    process killed -- then without a fork of this interpreter (:func:`_spawn_as`) when each
    rlimit is one this process may keep (lowering a hard limit cannot always be undone: a
    container may lack ``CAP_SYS_RESOURCE``).
    """
    last_cap = _last_cap()
    if guarded and all(which in _KEEPABLE for which, _ in confine[2]):
        return _spawn_as(command, env, confine, last_cap)
    # found here: once the child is another user it may not read the stdlib to import more
    candidates = _program_paths(command[0], env)
    errors, error_writer = os.pipe()  # close-on-exec: an exec closes it without a byte
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child execs or exits
        try:
            os.close(errors)
            signal.pthread_sigmask(signal.SIG_SETMASK, ())
            for number in (signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(number, signal.SIG_DFL)
            _confine_self(confine, last_cap)
            _exec_first(candidates, command, env)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.write(error_writer, (str(exc) or type(exc).__name__).encode("utf-8", "replace"))
        finally:
            os._exit(127)
    os.close(error_writer)
    try:
        failure = os.read(errors, 4096)
    finally:
        os.close(errors)
    if failure:
        os.waitpid(pid, 0)
        raise OSError(failure.decode("utf-8", "replace"))
    return pid


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
    confine: Confine | None = None,
    guarded: bool = False,
) -> int:
    """Run ``command`` as a subreaper until it and every descendant are gone; the exit code.

    ``report`` is called once: with the start failure's text, or with None once the command
    runs.  ``parent`` is the pid that must still be our parent once ``PR_SET_PDEATHSIG`` is
    armed (otherwise nobody would end the tree, and the command is not started).  Shared by
    this script and the launcher's per-command children (``_launcher.py``).  ``env`` (by
    default ours) is the command's environment; its ``PATH`` is searched for the program.
    ``finished`` hears the wait status this process exits with once the whole tree is gone.
    ``armed``: :func:`arm` already succeeded for ``parent``.  ``confine``: run the command
    confined (see the module docs); ``guarded``: ``parent`` is a subreaper that ends the
    tree should this process be killed (the launcher).
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
        if confine is not None:
            environment = os.environ if env is None else env
            child = _spawn_confined(command, environment, confine, guarded)
        else:
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


def parse_confine(text: str) -> Confine:
    """``UID,GID[,RESOURCE=VALUE...]`` as a confinement (ValueError when malformed)."""
    if not isinstance(text, str):
        raise ValueError(f"a confinement is text, not {type(text).__name__}")
    uid, gid, *pairs = text.split(",")
    limits = tuple((int(r), int(v)) for r, v in (pair.split("=") for pair in pairs))
    return int(uid), int(gid), limits


def main(argv: list[str]) -> int:
    """Run the command after ``STATUS_FD PARENT_PID [--confine=...] --``; see the module docs."""
    status_fd, parent = int(argv[1]), int(argv[2])
    split = argv.index("--", 3)
    confine = None
    for option in argv[3:split]:
        if not option.startswith("--confine="):
            raise SystemExit(f"unknown reaper option {option!r}")
        confine = parse_confine(option.removeprefix("--confine="))
    command = argv[split + 1 :]
    os.set_inheritable(status_fd, False)

    def report(failure: str | None) -> None:
        if failure is not None:
            os.write(status_fd, failure.encode("utf-8", "replace"))
        os.close(status_fd)

    return run(command, parent=parent, report=report, confine=confine)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
