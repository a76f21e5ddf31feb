"""The command server that runs inside a persistent bubblewrap sandbox (stdlib only).

Started by :mod:`agentrig.builtins.workspace._sandbox_session` as the sandbox's command
(``python -I -S -c <this source> <settings JSON>``), with its end of a Unix socket as
stdin.  For each request -- a 4-byte length, the command, and the write end of an output
pipe passed with ``SCM_RIGHTS`` -- it starts ``/bin/sh -c command`` in a new session in the
workspace root with the fixed environment (and the configured rlimits), waits for it, then
ends every other process in the sandbox (``kill(-1, SIGKILL)`` reaches the whole pid
namespace but its init and this server), answers the exit code (negative: killed by that
signal) as one line, then empties ``/tmp`` and ``/dev/shm`` and removes SysV IPC objects
before it reads the next request.  So a command finds the sandbox as the one before it
found it, and leaves nothing running.  The emptying never touches a mount point or what is
on one, and skips a directory that is (or lies in) the workspace or a read-only path.

A timeout or a cancellation is not this server's business: the host kills the whole sandbox
(bwrap's ``--die-with-parent`` and pid namespace end every process in it).  End of input
(the host closed its socket, or died) ends the server.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

__all__: list[str] = []

_FDS_SPACE = socket.CMSG_SPACE(4)
#: what Python ignores at start and an exec would pass on ignored: a command gets the
#: defaults (SIGPIPE ends a writer to a closed pipe; SIGXFSZ one past limits.file_size_bytes)
_DEFAULTED = (signal.SIGPIPE, signal.SIGXFSZ)
_IPC_RMID = 0


def _receive(sock: socket.socket) -> tuple[str, int] | None:
    """One request: the command and the output fd; None at end of input."""
    head, ancillary, _flags, _addr = sock.recvmsg(4, _FDS_SPACE)
    fd = -1
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS and len(data) >= 4:
            fd = int.from_bytes(data[:4], sys.byteorder)
    if not head:
        return None
    while len(head) < 4:
        more = sock.recv(4 - len(head))
        if not more:
            return None
        head += more
    size = int.from_bytes(head, "big")
    body = bytearray()
    while len(body) < size:
        chunk = sock.recv(min(size - len(body), 1 << 16))
        if not chunk:
            return None
        body += chunk
    if fd < 0:
        raise SystemExit("a request came without its output pipe")
    return body.decode("utf-8"), fd


def _limited(
    argv: list[str],
    env: dict[str, str],
    out: int,
    limits: list[list[int]],
    ids: tuple[int, int] | None = None,
) -> int:
    """Fork, set the rlimits in the child only (they would accumulate in the server), exec.

    ``ids``: the uid and gid the child takes as real, effective and saved ids before its
    exec (the native backend's server; its groups and exec privileges are gone already).
    """
    import resource

    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child execs or exits
        try:
            for which, value in limits:
                resource.setrlimit(which, (value, value))
            os.setsid()
            null = os.open("/dev/null", os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out, 1)
            os.dup2(out, 2)
            os.close(out)
            for number in _DEFAULTED:
                signal.signal(number, signal.SIG_DFL)
            if ids is not None:
                os.setresgid(ids[1], ids[1], ids[1])
                os.setresuid(ids[0], ids[0], ids[0])
            os.execve(argv[0], argv, env)
        except BaseException as exc:  # said on the command's output, as the spawn path does
            os.write(2, f"the sandbox could not start the command: {exc}\n".encode())
        finally:
            os._exit(127)
    return pid


def _spawn(command: str, env: dict[str, str], out: int, limits: list[list[int]]) -> int:
    argv = ["/bin/sh", "-c", command]
    if limits:
        return _limited(argv, env, out, limits)
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out, 1),
        (os.POSIX_SPAWN_DUP2, out, 2),
        (os.POSIX_SPAWN_CLOSE, out),
    ]
    return os.posix_spawn(
        argv[0], argv, env, file_actions=actions, setsid=True, setsigdef=_DEFAULTED
    )


def _mount_points() -> set[str]:
    """Every mount point of the sandbox (the workspace among them)."""
    points = set()
    with open("/proc/self/mountinfo", encoding="utf-8") as table:
        for line in table:
            field = line.split(" ")[4]
            points.add(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field))
    return points


def _empty(directory: str, mounts: set[str]) -> None:
    """Remove what commands left in ``directory`` -- never a mount point nor anything on
    one (the workspace may be mounted below ``/tmp``: its files are not leftovers)."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        path = entry.path
        if path in mounts:
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                if any(point.startswith(path + "/") for point in mounts):
                    _empty(path, mounts)  # holds a mount point: only its other entries go
                else:
                    shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass


def _remove_ipc() -> None:
    """Remove the SysV shared memory, message queues and semaphores commands left."""
    found: list[tuple[str, int]] = []
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as table:
                rows = table.read().splitlines()[1:]
        except OSError:
            continue
        found += [(kind, int(row.split()[1])) for row in rows if row.strip()]
    if not found:
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for kind, ident in found:
        if kind == "sem":
            libc.semctl(ident, 0, _IPC_RMID)
        else:
            getattr(libc, f"{kind}ctl")(ident, _IPC_RMID, None)


def _others() -> list[str]:
    """The live processes of the namespace besides its init and this server."""
    me = str(os.getpid())
    alive = []
    for name in os.listdir("/proc"):
        if name.isdigit() and name not in ("1", me):
            try:
                with open(f"/proc/{name}/stat") as stat:
                    state = stat.read().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state not in ("Z", "X"):  # a zombie is dead: init reaps it
                alive.append(name)
    return alive


def _end_the_rest() -> None:
    """SIGKILL every process of the namespace but init and this one, until none is left
    (one forking while the first signal went out is caught by the next)."""
    for _ in range(1000):
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return
        if not _others():
            return
        time.sleep(0.001)


def _scratch(kept: list[str]) -> list[str]:
    """The scratch directories to empty: not the workspace nor a shown path, nor in one."""
    places = [place.rstrip("/") for place in kept]  # "/" becomes "": it holds everything
    return [
        directory
        for directory in ("/tmp", "/dev/shm")
        if not any(directory == p or directory.startswith(p + "/") for p in places)
    ]


def main(settings: dict[str, Any]) -> None:
    sock = socket.socket(fileno=0)
    env: dict[str, str] = settings["env"]
    limits: list[list[int]] = settings["limits"]
    os.chdir(settings["cwd"])
    mounts = _mount_points()  # fixed: nothing in the sandbox may mount (no capabilities)
    scratch = _scratch([settings["cwd"], *settings["kept"]])
    sock.sendall(b"ready\n")
    while serve_one(sock, lambda command, out: _spawn(command, env, out, limits), _end_the_rest):
        # the next request waits in the socket until this is done: no command sees the
        # last one's files, and the answer did not wait for it
        for directory in scratch:
            _empty(directory, mounts)
        _remove_ipc()


def serve_one(
    sock: socket.socket, spawn: Callable[[str, int], int], end: Callable[[], None]
) -> bool:
    """Serve one request: ``spawn(command, out)``, wait for it, ``end()`` what it left,
    answer its exit code.  False at end of input (the host closed its end, or died)."""
    request = _receive(sock)
    if request is None:
        return False
    command, out = request
    try:
        pid = spawn(command, out)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the command
        os.write(out, f"the sandbox could not start the command: {exc}\n".encode())
        os.close(out)
        sock.sendall(b"127\n")
        return True
    os.close(out)
    _pid, status = os.waitpid(pid, 0)
    end()  # the output pipe's last writers: the host's read ends with them
    sock.sendall(b"%d\n" % os.waitstatus_to_exitcode(status))
    return True


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
