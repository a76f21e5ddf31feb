"""agentrig's side of the reaper launcher: one per process, a reaper per command without an exec.

:func:`launch` sends the request to a child the launcher (``_launcher.py``, started lazily on
the first command) keeps waiting -- or to the launcher, which forks one, when none is at
hand -- and returns a :class:`LaunchedProcess`, or None when the launcher cannot serve this
command (it cannot start, it died, the request is too large, ...): the caller then starts
``_reaper.py`` itself, as before the launcher existed.

Ownership: the launcher is started from a thread of its own that waits for it to exit.  Its
``PR_SET_PDEATHSIG`` fires when the *thread* that started it ends, so that thread must live
as long as the launcher: an event loop's thread or a worker thread could end while other
loops still run commands.  The launcher ends with this process (the signal, and the end of
its control socket) and is never shared with a forked child, which starts its own.
"""

from __future__ import annotations

import contextlib
import errno
import marshal
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc
import anyio.lowlevel

from agentrig.host._confinement import Confinement
from agentrig.host._errors import HostError

__all__ = ["LaunchedProcess", "LauncherStartError", "ReaperStartError", "launch"]

_LAUNCHER = Path(__file__).with_name("_launcher.py")
#: how long a starting launcher may take to arm itself (an interpreter start, loaded machine)
_START_TIMEOUT = 30.0
_Std = int | IO[Any] | None
#: what sending to a launcher that died raises
_DEAD = {errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN, errno.ECONNREFUSED}


class ReaperStartError(HostError, OSError):
    """The command could not be started (the reaper's report, e.g. no such file)."""

    code = "process.start_failed"


class LauncherStartError(HostError, OSError):
    """The reaper launcher could not be started (commands then start a reaper each)."""

    code = "process.launcher_failed"


def _umask() -> int | None:
    # reading it with os.umask() means setting it: another thread would see the interim value
    try:
        fd = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
        try:
            status = os.read(fd, 65536)
        finally:
            os.close(fd)
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith(b"Umask:"):
            return int(line.split()[1], 8)
    return None


def _inherited() -> tuple[object, ...]:
    """What a child inherits from this process besides argv, env, cwd and fds.

    The launcher has what this process had when it started; a command whose values differ
    now (credentials dropped, umask or limits changed) must not run with the old ones.
    """
    import resource  # POSIX only, like the launcher

    limits = [getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_")]
    return (
        os.getresuid(),
        os.getresgid(),
        os.getgroups(),
        _umask(),
        [resource.getrlimit(limit) for limit in limits],
        os.getpriority(os.PRIO_PROCESS, 0),
    )


class _Launcher:
    """A running launcher: its control socket and whether it still answers."""

    def __init__(
        self, control: socket.socket, popen: subprocess.Popen[bytes], inherited: tuple[object, ...]
    ) -> None:
        self.control = control
        self.popen = popen
        self.alive = True
        self.inherited = inherited
        self.spares: list[socket.socket] = []  # sockets of children waiting for a request
        self.spares_lock = threading.Lock()

    def take_spare(self) -> socket.socket | None:
        """A waiting child's socket (the launcher sends them as ``S``), or None."""
        with self.spares_lock:
            while self.alive:
                try:
                    message, fds, _, _ = socket.recv_fds(self.control, 64, 1)
                except OSError:  # nothing there (BlockingIOError), or closed meanwhile
                    break
                if not message:
                    break  # the launcher ended
                for fd in fds:
                    self.spares.append(socket.socket(fileno=fd))
            return self.spares.pop(0) if self.spares else None

    def retire(self) -> None:
        """Stop using it (it died, or this process forked); the owner thread reaps it."""
        self.alive = False
        with contextlib.suppress(OSError):
            self.control.close()
        with self.spares_lock:
            for spare in self.spares:
                spare.close()
            self.spares.clear()


class _State:
    """This process's launcher, guarded by a lock (commands may start from several threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.current: _Launcher | None = None
        self.unavailable: str | None = None
        self.script = _LAUNCHER

    def after_fork(self) -> None:
        """A forked child must not talk to its parent's launcher: it starts its own."""
        self.lock = threading.Lock()  # another thread may have held it at the fork
        if self.current is not None:
            self.current.retire()
        self.current = None


_state = _State()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_state.after_fork)


def _own(popen_box: list[Any], started: threading.Event, argv: list[str], fd: int) -> None:
    """Start the launcher and wait for it to exit (this thread is its PDEATHSIG parent)."""
    try:
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(fd,),
            start_new_session=True,
        )
    except OSError as exc:
        popen_box.append(exc)
        started.set()
        return
    popen_box.append(popen)
    started.set()
    popen.wait()
    with _state.lock:
        if _state.current is not None and _state.current.popen is popen:
            _state.current.retire()
            _state.current = None


def _start() -> _Launcher:
    """Start a launcher and wait until it is armed (blocking: run in a worker thread)."""
    inherited = _inherited()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        argv = [sys.executable, "-I", "-S", str(_state.script), str(theirs.fileno())]
        argv.append(str(os.getpid()))
        box: list[Any] = []
        started = threading.Event()
        owner = threading.Thread(
            target=_own, args=(box, started, argv, theirs.fileno()), name="agentrig-launcher"
        )
        owner.daemon = True
        owner.start()
        started.wait()
    finally:
        theirs.close()
    if isinstance(box[0], OSError):
        ours.close()
        raise LauncherStartError(f"cannot start the reaper launcher: {box[0]}")
    popen: subprocess.Popen[bytes] = box[0]
    ours.settimeout(_START_TIMEOUT)
    try:
        ready = ours.recv(16)
    except OSError as exc:
        ready = str(exc).encode()
    if ready != b"ready":
        popen.kill()
        ours.close()
        raise LauncherStartError(
            "the reaper launcher did not start: "
            + (ready.decode("utf-8", "replace") or f"exited with status {popen.wait()}")
        )
    ours.setblocking(False)
    return _Launcher(ours, popen, inherited)


def _running_launcher() -> _Launcher | None:
    """The launcher, started on first use; None once it could not start (never retried)."""
    with _state.lock:
        if _state.current is not None and _state.current.alive:
            return _state.current
        if _state.unavailable is not None:
            return None
        try:
            _state.current = _start()
        except LauncherStartError as exc:
            _state.unavailable = str(exc)
            return None
        return _state.current


def _retire(launcher: _Launcher) -> None:
    with _state.lock:
        launcher.retire()
        if _state.current is launcher:
            _state.current = None


def _check(value: bytes, what: str) -> bytes:
    if b"\0" in value:
        raise ValueError(f"embedded null byte in {what}")
    return value


def _request(
    command: Sequence[str],
    cwd: str | os.PathLike[str] | None,
    env: dict[str, str] | None,
    confine: Confinement | None = None,
) -> bytes:
    """The marshalled request; ValueError as :class:`subprocess.Popen` raises it.

    OSError when this process has no working directory any more (it was removed).
    """
    argv = [_check(os.fsencode(arg), "argv") for arg in command]
    if not argv:
        raise ValueError("an empty argv names no program")
    if env is None:
        environment = dict(os.environb)
    else:
        environment = {}
        for key, value in env.items():
            name = _check(os.fsencode(key), "an environment variable name")
            if not name or b"=" in name:
                raise ValueError(f"illegal environment variable name {key!r}")
            environment[name] = _check(os.fsencode(value), f"environment variable {key!r}")
    # absolute: the launcher's working directory is this process's when it started
    where = _check(os.fsencode(os.path.abspath(os.getcwd() if cwd is None else cwd)), "cwd")
    if confine is not None:
        return marshal.dumps((argv, environment, where, confine.wire()))
    return marshal.dumps((argv, environment, where))


class _Streams:
    """The command's three fds on our side of the request, and the ends we keep (PIPE)."""

    def __init__(self, stdin: _Std, stdout: _Std, stderr: _Std) -> None:
        self.theirs: list[int] = []
        self.owned: list[int] = []  # fds we opened for them: closed once sent
        self.ours: list[int | None] = []
        try:
            self._add(stdin, reading=True)
            self._add(stdout, reading=False)
            if stderr == subprocess.STDOUT:
                self.theirs.append(self.theirs[1])
                self.ours.append(None)
            else:
                self._add(stderr, reading=False)
        except BaseException:
            self.close_all()
            raise

    def _add(self, spec: _Std, *, reading: bool) -> None:
        ours: int | None = None
        if spec == subprocess.PIPE:
            read_end, write_end = os.pipe()
            ours, fd = (write_end, read_end) if reading else (read_end, write_end)
            os.set_blocking(ours, False)
            self.owned.append(fd)
        elif spec == subprocess.DEVNULL:
            fd = os.open(os.devnull, os.O_RDONLY if reading else os.O_WRONLY)
            self.owned.append(fd)
        elif spec is None:
            fd = len(self.theirs)  # inherit ours: 0, 1, 2
        elif isinstance(spec, int):
            if spec < 0:
                raise ValueError(f"invalid file descriptor {spec}")
            fd = spec
        else:
            fd = spec.fileno()
        self.theirs.append(fd)
        self.ours.append(ours)

    def close_sent(self) -> None:
        for fd in self.owned:
            os.close(fd)
        self.owned.clear()

    def close_all(self) -> None:
        self.close_sent()
        for fd in self.ours:
            if fd is not None:
                os.close(fd)
        self.ours = [None] * len(self.ours)


class _PipeEnd:
    """Our end of one of the command's pipes, closed once.

    Hand-written because anyio has no public stream over a pipe fd it did not open: its
    process streams wrap only the processes it starts itself.
    """

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    async def aclose(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            anyio.notify_closing(fd)
            os.close(fd)
        await anyio.lowlevel.checkpoint()


class _FdReceiveStream(_PipeEnd, anyio.abc.ByteReceiveStream):
    """Our end of the command's stdout or stderr pipe."""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await anyio.lowlevel.checkpoint_if_cancelled()
        while True:
            if self._fd is None:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            if not data:
                raise anyio.EndOfStream
            # a reader of a fast writer must still let others run (timeouts, cancellation),
            # without losing what it read
            await anyio.lowlevel.cancel_shielded_checkpoint()
            return data


class _FdSendStream(_PipeEnd, anyio.abc.ByteSendStream):
    """Our end of the command's stdin pipe."""

    async def send(self, item: bytes) -> None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        view = memoryview(item)
        while view:
            if self._fd is None:
                raise anyio.ClosedResourceError
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise anyio.BrokenResourceError from exc
            view = view[written:]
        await anyio.lowlevel.cancel_shielded_checkpoint()  # what was written stays written


class LaunchedProcess(anyio.abc.Process):
    """A command started by the launcher: the reaper's pid, signalled through a pidfd.

    The reaper is the launcher's child, so its exit status arrives as the launcher's ``X``
    message on the per-command channel; the pidfd makes every signal reach that reaper and
    never a later process that reuses its pid.
    """

    def __init__(self, channel: socket.socket, streams: _Streams) -> None:
        self._channel: socket.socket | None = channel
        self._pid: int | None = None
        self._pidfd: int | None = None
        self._started: bool | None = None  # None: not known yet; False: start failed
        self._failure = ""
        self._status: int | None = None
        self._lost = False  # the channel ended without a status (the launcher died)
        self._lock = anyio.Lock()
        self._ended = False  # the channel's end was read
        self._stdin = _FdSendStream(streams.ours[0]) if streams.ours[0] is not None else None
        out, err = streams.ours[1], streams.ours[2]
        self._stdout = _FdReceiveStream(out) if out is not None else None
        self._stderr = _FdReceiveStream(err) if err is not None else None

    # -- the channel ------------------------------------------------------------------------
    def _take(self, message: bytes, fds: list[int]) -> None:
        kind, rest = message[:1], message[1:]
        if kind == b"R":
            self._started = True
            self._pid = int(rest)
            if fds:
                self._pidfd = fds.pop(0)
        elif kind == b"E":
            self._started = False
            self._failure = rest.decode("utf-8", "replace") or "cannot start"
        elif kind == b"X" and self._status is None:
            self._status = int(rest)
            if self._started is None:
                self._started = False
                self._failure = "the reaper ended before the command started"
        for fd in fds:
            os.close(fd)

    def _poll(self) -> bool:
        """Take every message already there; False once the channel has ended.

        ``returncode`` calls this too, so a waiter may find its messages taken: the channel
        stays open until :meth:`_release`, and its end (which follows every status) keeps
        it readable, so that waiter always wakes and sees them.
        """
        while self._channel is not None and not self._ended:
            try:
                message, fds, _, _ = socket.recv_fds(self._channel, 4096, 2)
            except BlockingIOError:
                return True
            if not message:
                self._ended = True
                break
            self._take(message, fds)
        return False

    async def _until(self, done: Callable[[], bool]) -> bool:
        """Take the channel's messages until ``done()``; False when it ended before that."""
        async with self._lock:  # one waiter per fd
            while not done():
                if not self._poll():
                    return done()
                if done():
                    return True
                assert self._channel is not None
                await anyio.wait_readable(self._channel)
        return True

    async def started(self) -> None:
        """Wait for the reaper's report; :class:`ReaperStartError` when the start failed."""
        await self._until(lambda: self._started is not None)
        if self._started is None:
            raise _LauncherLost
        if not self._started:
            raise ReaperStartError(self._failure)

    # -- anyio.abc.Process ------------------------------------------------------------------
    @property
    def pid(self) -> int:
        assert self._pid is not None
        return self._pid

    @property
    def returncode(self) -> int | None:
        if self._status is None and not self._lost:
            self._poll()
        return self._code()

    def _code(self) -> int | None:
        if self._status is not None:
            return os.waitstatus_to_exitcode(self._status)
        if self._lost:
            return 128 + signal.SIGTERM  # ended by the launcher's death: as if end_tree ran
        return None

    async def wait(self) -> int:
        if not self._lost and not await self._until(lambda: self._status is not None):
            self._lost = True  # the launcher died: the reaper ends the tree (PDEATHSIG)
            if self._pidfd is not None:  # ... and then exits
                async with self._lock:
                    await anyio.wait_readable(self._pidfd)
        # otherwise the reaper sent its status once every descendant was reaped: the tree is
        # gone, only the reaper's own exit is under way
        code = self._code()
        assert code is not None
        return code

    def send_signal(self, signal: int) -> None:
        if self.returncode is not None or self._pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            if self._pidfd is not None:
                _pidfd_send_signal(self._pidfd, signal)
            else:  # pragma: no cover - the launcher checks for pidfds when it starts
                os.kill(self._pid, signal)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    @property
    def stdin(self) -> anyio.abc.ByteSendStream | None:
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream | None:
        return self._stdout

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream | None:
        return self._stderr

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True) as scope:
            for stream in (self._stdin, self._stdout, self._stderr):
                if stream is not None:
                    await stream.aclose()
            scope.shield = False
            try:
                await self.wait()
            except BaseException:
                scope.shield = True
                self.kill()
                await self.wait()
                raise
            finally:
                self._release()

    def _release(self) -> None:
        if self._channel is not None:
            anyio.notify_closing(self._channel)
            self._channel.close()
            self._channel = None
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


def _pidfd_send_signal(pidfd: int, number: int) -> None:
    signal.pidfd_send_signal(pidfd, number)


class _LauncherLost(Exception):
    """The launcher ended before the command started: start it the old way."""


def _to_spare(launcher: _Launcher, request: bytes, fds: list[int]) -> bool:
    """Send the request straight to a waiting child; False when none is at hand."""
    while (spare := launcher.take_spare()) is not None:
        try:
            socket.send_fds(spare, [request], fds, socket.MSG_NOSIGNAL)
        except OSError as exc:
            if exc.errno in _DEAD:
                spare.close()  # that child was killed while it waited
                continue
            with launcher.spares_lock:  # too large, a bad fd: the child still waits
                launcher.spares.insert(0, spare)
            raise
        spare.close()
        return True
    return False


async def _send(control: socket.socket, request: bytes, fds: list[int]) -> None:
    while True:
        try:
            socket.send_fds(control, [request], fds, socket.MSG_NOSIGNAL)
            return
        except BlockingIOError:
            await anyio.wait_writable(control)


async def launch(
    command: Sequence[str],
    *,
    stdin: _Std,
    stdout: _Std,
    stderr: _Std,
    cwd: str | os.PathLike[str] | None,
    env: dict[str, str] | None,
    confine: Confinement | None = None,
) -> LaunchedProcess | None:
    """Start ``command`` through the launcher; None when it cannot (start the old way).

    Raises :class:`ReaperStartError` when the reaper reports a start failure and
    :class:`ValueError` for an argv, env or cwd that no process can be given.
    """
    try:
        request = _request(command, cwd, env, confine)
    except OSError:
        return None  # no working directory to name: the command inherits ours as it is
    launcher = _state.current
    if _state.unavailable is not None:
        return None
    if launcher is None or not launcher.alive:
        launcher = await anyio.to_thread.run_sync(_running_launcher)
        if launcher is None:
            return None
    if launcher.inherited != _inherited():
        return None  # the command gets what this process has now, from a reaper of its own
    streams = _Streams(stdin, stdout, stderr)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.setblocking(False)
    process = LaunchedProcess(ours, streams)
    fds = [*streams.theirs, theirs.fileno()]
    try:
        try:
            if not _to_spare(launcher, request, fds):  # none at hand: the launcher forks one
                await _send(launcher.control, request, fds)
        finally:
            theirs.close()
            streams.close_sent()
    except OSError as exc:
        ours.close()
        streams.close_all()
        if exc.errno in _DEAD:
            _retire(launcher)
        # otherwise (too large for one message, a closed stdio fd to inherit) this command
        # alone starts the old way
        return None
    except BaseException:
        ours.close()
        streams.close_all()
        raise
    try:
        await process.started()
    except _LauncherLost:
        # the child that got the request died before it started the command (killed while
        # it waited, or with the launcher): this command alone starts the old way; a dead
        # launcher is retired by the next send to it or by its owner thread
        ours.close()
        streams.close_all()
        return None
    except ReaperStartError:
        with anyio.CancelScope(shield=True):
            await process.aclose()
        raise
    except BaseException:
        # cancelled while it started: once the reaper is known, it ends what it began
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(_START_TIMEOUT):
                with contextlib.suppress(ReaperStartError, _LauncherLost):
                    await process.started()
            process.terminate()
            with anyio.move_on_after(_START_TIMEOUT):
                await process.aclose()
            process._release()
        raise
    return process
