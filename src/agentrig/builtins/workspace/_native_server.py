"""The native sandbox's command server: root, under the host's reaper, one command at a time.

Never imported by agentrig: :mod:`agentrig.builtins.workspace._sandbox` starts it with
``python -I -S _native_server.py SETTINGS`` through :func:`agentrig.host.open_reaped`
(unconfined: it needs root to change a command's identity), its end of a Unix socket as
stdin.  The request and answer are those of the bubblewrap sandbox's server (whose
``_receive`` this file loads): a command and the write end of its output pipe, then the exit
code as one line; a command with limits is forked by that server's ``_limited``.

Why: a reaper per command costs a fork of a Python process (the launcher's spare) and that
fork's own Python work -- about 2.5 ms of CPU, more than ``sh -c 'git --version'`` itself.
This server is set up once and starts each command with ``posix_spawn``.

What each command gets, as from a reaper of its own (``agentrig.host.Confinement``):

* the configured uid and gid as real, effective and saved ids, no supplementary groups, no
  new privileges, empty capability bounding, inheritable and ambient sets -- the server
  drops the groups and the exec privileges from itself once, at start (it never execs; it
  keeps root's effective capabilities to change ids and to kill), so every command inherits
  them;
* a new session in the workspace root (``chdir`` per command: the root is found anew), the
  fixed environment, SIGPIPE and SIGXFSZ at their defaults, the rlimits.

Without limits a command is a ``posix_spawn`` with ``resetids``: for the spawn the server's
*real* ids are the command's (the child's effective ids become them, its exec makes them its
saved ids too) and the server takes its own back at once.  In that instant the command could
signal the server -- were it killed, the reaper above it (a child subreaper) ends the whole
orphaned tree and the host throws this server away.  With limits the server forks, and the
child lowers the limits and changes its own ids before it execs: a long-lived server cannot
keep a command's CPU limit itself.

The server is a child subreaper: whatever the command leaves behind -- ``setsid``
descendants included -- is re-parented to it, and once the command exits it SIGKILLs and
reaps every child it has before it answers.  A timeout or a cancellation is the host's: it
ends the server's reaper, which kills the server and everything below it.  End of input
ends the server (and with it, through its reaper, anything left).
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import signal
import socket
import sys
import time
from errno import EINVAL
from pathlib import Path
from types import ModuleType
from typing import Any

__all__: list[str] = []

_PR_CAPBSET_DROP = 24
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_V3 = 0x20080522
#: 1 ms steps to wait for a child the kernel is still handing over to us
_SETTLE = 1000
_libc = ctypes.CDLL(None, use_errno=True)


def _protocol() -> ModuleType:
    """The bubblewrap server's module (its request reader and fork path): -I leaves our own
    directory off the path; added after the standard library, no name there shadows it."""
    sys.path.append(str(Path(__file__).parent))
    return importlib.import_module("_sandbox_server")


def _prctl(option: int, arg: int) -> int:
    """``prctl(option, arg)``; 0, or the errno it failed with."""
    return 0 if _libc.prctl(option, arg, 0, 0, 0) == 0 else ctypes.get_errno()


def _checked(option: int, arg: int, what: str) -> None:
    failed = _prctl(option, arg)
    if failed:
        raise OSError(failed, f"{what}: {os.strerror(failed)}")


def _drop_exec_privileges() -> None:
    """No groups, no new privileges, nothing an exec could gain: bounding, ambient and
    inheritable sets emptied.  The effective set stays (the server changes ids, kills)."""
    os.setgroups([])
    _checked(_PR_SET_NO_NEW_PRIVS, 1, "no-new-privileges")
    cap = 0
    while (failed := _prctl(_PR_CAPBSET_DROP, cap)) == 0:
        cap += 1
    if failed != EINVAL:  # EINVAL: past the kernel's last capability
        raise OSError(failed, f"cannot drop capability {cap}: {os.strerror(failed)}")
    _checked(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, "ambient capabilities")
    header = (ctypes.c_uint32 * 2)(_CAP_V3, 0)
    sets = (ctypes.c_uint32 * 6)()  # {effective, permitted, inheritable} x 2 words
    if _libc.capget(header, sets) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    sets[2] = sets[5] = 0
    if _libc.capset(header, sets) != 0:
        raise OSError(ctypes.get_errno(), "capset")


class Server:
    """The per-command work: start the command as the restricted user, end its tree."""

    def __init__(self, settings: dict[str, Any], protocol: ModuleType) -> None:
        self.protocol = protocol
        self.cwd: str = settings["cwd"]
        self.env: dict[str, str] = settings["env"]
        self.uid: int = settings["uid"]
        self.gid: int = settings["gid"]
        self.ids = (self.uid, self.gid)
        self.limits: list[list[int]] = settings["limits"]
        self.me = os.getpid()
        self.real = (os.getuid(), os.getgid())  # root's: taken back after each spawn

    def spawn(self, command: str, out: int) -> int:
        """Start ``command``; its pid.  OSError or ValueError when it cannot start."""
        argv = ["/bin/sh", "-c", command]
        os.chdir(self.cwd)
        if self.limits:  # the child sets them, then its ids, then execs
            pid: int = self.protocol._limited(argv, self.env, out, self.limits, self.ids)
            return pid
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out, 1),
            (os.POSIX_SPAWN_DUP2, out, 2),
            (os.POSIX_SPAWN_CLOSE, out),
        ]
        os.setresgid(self.gid, -1, -1)
        try:
            os.setresuid(self.uid, -1, -1)
            try:
                return os.posix_spawn(
                    argv[0],
                    argv,
                    self.env,
                    file_actions=actions,
                    setsid=True,
                    setsigmask=(),
                    setsigdef=self.protocol._DEFAULTED,
                    resetids=True,
                )
            finally:
                os.setresuid(self.real[0], -1, -1)
        finally:
            os.setresgid(self.real[1], -1, -1)

    def _children(self) -> list[int]:
        try:
            with open(f"/proc/{self.me}/task/{self.me}/children", encoding="ascii") as f:
                return [int(pid) for pid in f.read().split()]
        except OSError:  # no CONFIG_PROC_CHILDREN: every process's parent, from its stat
            mine = []
            for name in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{name}/stat", "rb") as f:
                        fields = f.read().rsplit(b")", 1)[1].split()
                except (OSError, IndexError):
                    continue
                if int(fields[1]) == self.me:
                    mine.append(int(name))
            return mine

    def end_the_rest(self) -> None:
        """SIGKILL and reap every child -- orphans handed to us meanwhile too -- until none."""
        quiet = 0
        while True:
            found = self._children()
            for pid in found:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            try:
                pid, _ = os.waitpid(-1, 0 if found else os.WNOHANG)
            except ChildProcessError:
                return
            if pid:
                quiet = 0
            elif (quiet := quiet + 1) > _SETTLE:
                return  # listed as nobody's child, yet not gone: nothing more to signal
            else:
                time.sleep(0.001)


def main(settings: dict[str, Any]) -> None:
    protocol = _protocol()
    sock = socket.socket(fileno=0)
    try:
        _checked(_PR_SET_CHILD_SUBREAPER, 1, "child subreaper")
        _drop_exec_privileges()
        server = Server(settings, protocol)
    except OSError as exc:
        sock.sendall(f"the native sandbox cannot confine commands: {exc}\n".encode())
        return
    sock.sendall(b"ready\n")
    while protocol.serve_one(sock, server.spawn, server.end_the_rest):
        pass


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
