"""One long-lived process per agentrig process that forks a reaper for each command.

Never imported: :mod:`agentrig.host._launching` runs this file as its own process
(``python -I -S _launcher.py CONTROL_FD PARENT_PID``), so it uses the standard library only.
Linux only.

Why: starting ``_reaper.py`` for every command costs an interpreter start (about 15 ms), far
more than the command itself.  This process pays it once.  It is single-threaded, so
``os.fork()`` here is safe.  It keeps one forked child waiting (its own session, no other fds,
armed: :func:`_reaper.arm`) and gives agentrig a socket to it, so the next request goes
straight to that child: neither a fork nor this process is on a command's way.  The child
runs exactly the reaper's code (:func:`_reaper.run`: child subreaper, ``PR_SET_PDEATHSIG``
on this process, the command in the child's session, every descendant SIGKILLed and reaped
when the command exits or on SIGTERM).

Protocol (``SOCK_SEQPACKET``, one message per datagram):

* CONTROL_FD: we send ``ready`` once armed, then ``S<pid>`` with our end of a waiting
  child's socket attached (``SCM_RIGHTS``) whenever the previous one was taken.  We receive
  requests agentrig had no waiting child for: ``marshal`` of ``(argv, env, cwd)`` as bytes
  (``(argv, env, cwd, confine)`` for a confined command: ``confine`` in the reaper's
  ``--confine`` form), with four fds attached: the command's stdin, stdout, stderr and a
  per-command channel; we fork a child for each.  A zero-length read (agentrig closed its
  end or died) ends this process and every tree.
* A waiting child's socket: the same request, from agentrig.  The child at once sends us
  ``T`` with the channel attached, so we can report its exit if it cannot.
* On the per-command channel, from the reaper: ``R<pid>`` with a pidfd of itself attached
  once the command runs, or ``E<text>`` when it could not start it; ``X<wait status>``
  once the whole tree is gone and it is about to exit with that status.  Then this process
  sends ``X`` again once it reaped the reaper (the only one when the reaper was killed;
  agentrig keeps the first) and closes the channel.

This process is a child subreaper too: if a per-command reaper is killed by someone, its
orphans come here and are SIGKILLed rather than handed to init.
"""

from __future__ import annotations

import contextlib
import importlib.util
import marshal
import os
import selectors
import signal
import socket
import sys
from pathlib import Path
from types import ModuleType

#: a request's largest size; agentrig falls back to a per-command reaper above its send buffer
_MAX_REQUEST = 1 << 20
_FDS_PER_REQUEST = 4


def _load_reaper() -> ModuleType:
    # -I leaves this file's directory off sys.path: load the sibling by its path
    path = Path(__file__).with_name("_reaper.py")
    spec = importlib.util.spec_from_file_location("_agentrig_reaper", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _send(channel: socket.socket, message: bytes, fds: list[int] | None = None) -> None:
    """Best effort: a channel whose agentrig end is gone (or full) is not our problem."""
    with contextlib.suppress(OSError):
        if fds:
            socket.send_fds(channel, [message], fds, socket.MSG_NOSIGNAL)
        else:
            channel.send(message, socket.MSG_NOSIGNAL)


def _close_all_but(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def _warm(reaper: ModuleType) -> None:
    """Touch, while we wait, what serving a request touches (after a fork, the first write
    to each page copies it: better now than on a command's way)."""
    marshal.loads(marshal.dumps(([b"true"], {b"PATH": b"/"}, b"/")))
    reaper._children()
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with a, b:
        socket.send_fds(a, [b"R0"], [b.fileno()], socket.MSG_NOSIGNAL)
        _, fds, _, _ = socket.recv_fds(b, 4096, 2)
        for fd in fds:
            os.close(fd)


class _Spare:
    """A forked child waiting for its one request (so no fork is on a command's way)."""

    def __init__(self, pid: int, sock: socket.socket) -> None:
        self.pid = pid
        self.sock = sock


class Launcher:
    """The request loop: fork waiting children, give them to agentrig, report their exits."""

    def __init__(self, control: socket.socket, reaper: ModuleType) -> None:
        self.control = control
        self.reaper = reaper
        self.running: dict[int, socket.socket] = {}
        self.given: dict[int, _Spare] = {}  # by the fd of our end of its socket
        self.me = os.getpid()
        self.selector = selectors.DefaultSelector()

    def fork(self) -> _Spare:
        """Fork a child that waits for one request on the socket we keep an end of."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's coverage is the reaper's tests
            self._serve_one(theirs.detach())
        theirs.close()
        return _Spare(pid, ours)

    def give(self) -> None:
        """Fork a child and send agentrig our end of its socket: its next request goes there.

        We keep our end too: the child tells us on it which channel it serves (``T``).
        """
        spare = self.fork()
        self.given[spare.sock.fileno()] = spare
        self.selector.register(spare.sock, selectors.EVENT_READ)
        _send(self.control, b"S%d" % spare.pid, [spare.sock.fileno()])

    def launch(self, request: bytes, fds: list[int]) -> None:
        """A request that came to us (agentrig had no child at hand): fork one for it."""
        if len(fds) != _FDS_PER_REQUEST:
            for fd in fds:
                os.close(fd)
            return
        channel = socket.socket(fileno=fds[3])
        channel.setblocking(False)
        spare = self.fork()
        try:
            socket.send_fds(spare.sock, [request], fds, socket.MSG_NOSIGNAL)
        except OSError:
            _send(channel, b"Ethe launcher could not hand the request on")
            channel.close()
            with contextlib.suppress(OSError):
                os.kill(spare.pid, signal.SIGKILL)
        else:
            self.running[spare.pid] = channel
        finally:
            spare.sock.close()
            for fd in fds[:3]:
                os.close(fd)

    def taken(self, fd: int) -> None:
        """A given child took a request (or died waiting): note its channel, give another."""
        spare = self.given.pop(fd)
        self.selector.unregister(spare.sock)
        with contextlib.suppress(OSError):
            _, fds, _, _ = socket.recv_fds(spare.sock, 16, 1, socket.MSG_DONTWAIT)
            if fds:
                channel = socket.socket(fileno=fds[0])
                channel.setblocking(False)
                self.running[spare.pid] = channel
        spare.sock.close()
        self.give()

    def _serve_one(self, sock: int) -> None:
        """In the spare child: wait for one request and run it as its reaper; never returns."""
        code = 127
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _close_all_but({0, 1, 2, sock})
            os.setsid()
            # SIGTERM stays deadly while we wait: the launcher's death (PR_SET_PDEATHSIG) ends
            # us even though agentrig still holds a way to send us a request
            if not self.reaper.arm(self.me, block=False):
                code = 0  # the launcher is gone
                return
            _warm(self.reaper)
            launcher = socket.socket(fileno=sock)
            request, fds, flags, _ = socket.recv_fds(launcher, _MAX_REQUEST, _FDS_PER_REQUEST)
            signal.pthread_sigmask(signal.SIG_BLOCK, self.reaper._WAKE)
            if len(fds) != _FDS_PER_REQUEST or os.getppid() != self.me:
                code = 0  # the launcher ended: nobody would end the tree, start nothing
                return
            for target, fd in enumerate(fds[:3]):
                os.dup2(fd, target)  # received fds are >= 3: none is overwritten early
            for fd in fds[:3]:
                os.close(fd)
            channel = fds[3]
            os.set_inheritable(channel, False)  # the command must not forge our messages
            channel_socket = socket.socket(fileno=channel)
            # the launcher learns which channel we serve before anything can kill us with a
            # command running: it reports our exit there if we cannot
            _send(launcher, b"T", [channel])

            def report(failure: str | None) -> None:
                if failure is not None:
                    _send(channel_socket, b"E" + failure.encode("utf-8", "replace"))
                else:
                    try:
                        pidfd = os.pidfd_open(os.getpid())  # agentrig signals us through it
                    except OSError:
                        _send(channel_socket, b"R%d" % os.getpid())
                    else:
                        _send(channel_socket, b"R%d" % os.getpid(), [pidfd])
                        os.close(pidfd)

            def finished(status: int) -> None:  # sooner than our own report of the exit
                with contextlib.suppress(OSError):
                    os.write(channel, b"X%d" % status)

            try:
                if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
                    raise ValueError("truncated")
                argv, env, cwd, *rest = marshal.loads(request)
                confine = self.reaper.parse_confine(rest[0]) if rest else None
            except (EOFError, ValueError, TypeError) as exc:
                report(f"bad request to the reaper launcher: {exc}")
                return
            code = self.reaper.run(
                argv,
                parent=self.me,
                report=report,
                cwd=cwd,
                env=env,
                finished=finished,
                armed=True,
                confine=confine,
                guarded=True,  # the launcher is a subreaper: it ends the tree if we die
            )
        finally:
            os._exit(code)

    def reap(self) -> None:
        """Reap every exited child; report the per-command reapers' statuses."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            for fd, spare in list(self.given.items()):
                if spare.pid == pid:  # its T (sent before it exited) is still unread
                    self.taken(fd)
            channel = self.running.pop(pid, None)
            if channel is not None:
                _send(channel, b"X%d" % status)
                channel.close()
        # an orphan of a killed reaper was re-parented to us: it must not outlive its command
        waiting = {spare.pid for spare in self.given.values()}
        for pid in self.reaper._children():
            if pid not in self.running and pid not in waiting:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def shutdown(self) -> None:
        """agentrig is gone: end every tree (the reapers also get PR_SET_PDEATHSIG)."""
        for pid in self.running:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        for spare in self.given.values():  # waiting, SIGTERM blocked: nothing to end
            with contextlib.suppress(OSError):
                os.kill(spare.pid, signal.SIGKILL)


def main(argv: list[str]) -> int:
    """Serve ``argv[1]`` (the control socket's fd) for parent ``argv[2]``; see the module docs."""
    control = socket.socket(fileno=int(argv[1]))
    parent = int(argv[2])
    reaper = _load_reaper()
    reaper._prctl(reaper._PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        return 0  # agentrig died before we were armed
    reaper._prctl(reaper._PR_SET_CHILD_SUBREAPER, 1)
    os.close(os.pidfd_open(os.getpid()))  # no pidfds (Linux < 5.3): agentrig falls back
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda number, frame: None)
    launcher = Launcher(control, reaper)
    selector = launcher.selector
    selector.register(control, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    control.send(b"ready")
    launcher.give()
    while True:
        for key, _ in selector.select():
            if key.fileobj is control:
                request, fds, flags, _ = socket.recv_fds(control, _MAX_REQUEST, _FDS_PER_REQUEST)
                if not request and not fds:
                    launcher.shutdown()
                    return 0
                if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
                    request = b""  # the child answers it as a bad request
                launcher.launch(request, fds)
            elif key.fileobj is wake_read:
                with contextlib.suppress(BlockingIOError):
                    while os.read(wake_read, 512):
                        pass
                launcher.reap()
            elif key.fd in launcher.given and launcher.given[key.fd].sock is key.fileobj:
                launcher.taken(key.fd)  # (not a stale event for an fd number reused since)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
