"""Persistent sandboxes: set up once per workspace, one command at a time each.

Setting up a sandbox (namespaces, a dozen mounts) costs bwrap 10-20 ms, several times a
command's own cost, so a workspace keeps its sandboxes: each runs the command server
(:mod:`._sandbox_server`), which starts every command afresh -- ``/bin/sh -c`` in the
workspace root, the fixed environment, the rlimits -- and after it ends every other process
in the sandbox and empties ``/tmp``, ``/dev/shm`` and SysV IPC.  A command therefore sees
exactly what a sandbox of its own would show it, and leaves nothing behind.

A sandbox serves one command at a time (a pool keeps a few idle ones).  It is thrown away,
and with it every process in it, when a command times out or is cancelled, when anything
goes wrong talking to it, and when the layout it was set up for changed (the workspace root
or Git's files appeared, vanished or were replaced, since they are mounted as found).

The native backend keeps its command servers the same way (:mod:`._native_server`, root,
each under a reaper of the host, :class:`ReapedProcess`): there a server is the reaper of
its commands, and ending its reaper ends it and everything it started.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import weakref
from collections.abc import Awaitable, Callable, Hashable
from pathlib import Path
from typing import Protocol

import anyio
import anyio.abc
import anyio.to_thread

from agentrig.builtins.workspace._errors import SandboxError
from agentrig.host import end_tree, kill_tree_group, open_reaped

__all__ = [
    "MAX_COMMAND",
    "BwrapProcess",
    "CommandResult",
    "ReapedProcess",
    "SandboxPool",
    "ServerProcess",
    "server_source",
    "end_reaped",
    "settings_json",
]

_CHUNK = 65536
_READY_TIMEOUT = 30.0
_REAP_TIMEOUT = 5.0
#: the longest command line the kernel passes to ``sh -c`` (MAX_ARG_STRLEN)
MAX_COMMAND = 131072 - 1
SERVER_SOURCE = Path(__file__).with_name("_sandbox_server.py")


class CommandResult:
    """What one confined command did: exit code, kept output, bytes dropped, timed out."""

    __slots__ = ("dropped", "exit_code", "output", "timed_out")

    def __init__(self) -> None:
        self.output = bytearray()
        self.dropped = 0
        self.exit_code: int | None = None
        self.timed_out = False

    def keep(self, chunk: bytes, limit: int) -> None:
        """Keep ``chunk`` up to ``limit`` bytes of output in all; count the rest."""
        room = limit - len(self.output)
        if room > 0:
            self.output += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        out = self.output.decode("utf-8", "replace")
        if self.dropped:
            out += f"\n[output cut: {self.dropped} more bytes were not kept]"
        return out


async def _read_some(fd: int) -> bytes:
    """The next bytes of the non-blocking ``fd`` (``b""`` at its end)."""
    while True:
        await anyio.wait_readable(fd)
        try:
            return os.read(fd, _CHUNK)
        except BlockingIOError:
            continue


class ServerProcess(Protocol):
    """A command server's process as a pool sees it (bwrap's, or a native server's reaper)."""

    def running(self) -> bool:
        """Whether it has not ended yet."""
        ...

    def end_now(self) -> None:
        """End it and every process it started, synchronously (a dropped pool's finalizer)."""
        ...

    async def ended(self) -> None:
        """End it and every process it started; return once they are gone (bounded)."""
        ...

    def why(self) -> str:
        """What it said on its way out, or how it ended."""
        ...


class _Sandbox:
    """One running command server and the host's end of its socket."""

    def __init__(self, process: ServerProcess, sock: socket.socket, layout: Hashable):
        self.process = process
        self.sock = sock
        self.layout = layout
        self._pending = bytearray()

    async def _line(self) -> bytes:
        while b"\n" not in self._pending:
            await anyio.wait_readable(self.sock)
            try:
                chunk = self.sock.recv(4096)
            except BlockingIOError:
                continue
            if not chunk:
                raise SandboxError("the sandbox ended unexpectedly")
            self._pending += chunk
        line, _, rest = bytes(self._pending).partition(b"\n")
        self._pending = bytearray(rest)
        return line

    async def _send(self, data: bytes, fd: int) -> None:
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fd.to_bytes(4, "little"))]
        sent = 0
        while sent < len(data):
            await anyio.wait_writable(self.sock)
            try:
                if sent == 0:
                    sent = self.sock.sendmsg([data], rights)
                else:
                    sent += self.sock.send(data[sent:])
            except BlockingIOError:
                continue

    async def ready(self) -> str | None:
        """None once the server is ready; else its own words on why it cannot serve."""
        with anyio.fail_after(_READY_TIMEOUT):
            line = await self._line()
        return None if line == b"ready" else line.decode("utf-8", "replace") or "no answer"

    async def run(self, command: str, result: CommandResult, limit: int) -> None:
        """Run ``command``; its output into ``result``, then its exit code."""
        payload = command.encode("utf-8")
        read_fd, write_fd = os.pipe()
        try:
            try:
                os.set_blocking(read_fd, False)
                await self._send(len(payload).to_bytes(4, "big") + payload, write_fd)
            finally:
                os.close(write_fd)
            while chunk := await _read_some(read_fd):
                result.keep(chunk, limit)
        finally:
            os.close(read_fd)
        result.exit_code = int(await self._line())

    async def kill(self) -> None:
        """End the server and every process it started."""
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(OSError):
                self.sock.close()
            await self.process.ended()


class BwrapProcess:
    """bwrap running a command server: a plain Popen, not an event loop's process (an idle
    sandbox belongs to no loop)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen

    def running(self) -> bool:
        return self.popen.poll() is None

    def _kill(self) -> list[int]:
        """SIGKILL bwrap's process group: its monitor and the sandbox's init, whose death
        ends every process of the sandbox (its pid namespace).  Not once it was reaped: the
        group's id may be another's by then.  Returns pidfds of the sandbox's init (see
        :func:`_init_pidfds`) for :meth:`_reap` to wait on."""
        if self.popen.poll() is not None:
            return []
        inits = _init_pidfds(self.popen.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)  # a new session: bwrap's group
        return inits

    def _reap(self, inits: list[int]) -> None:
        """Wait for the monitor, then for the sandbox's init: only its exit says every
        process of the sandbox is gone (the monitor can be reaped before that)."""
        try:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(_REAP_TIMEOUT)
            for fd in inits:
                select.select([fd], [], [], _REAP_TIMEOUT)  # readable once it has exited
        finally:
            for fd in inits:
                os.close(fd)
            if self.popen.stderr is not None:
                self.popen.stderr.close()

    def end_now(self) -> None:
        self._reap(self._kill())

    async def ended(self) -> None:
        with anyio.CancelScope(shield=True):
            inits = self._kill()
            await anyio.to_thread.run_sync(self._reap, inits)

    def why(self) -> str:
        """What bwrap said on its way out (its stderr, once it is gone), or its status."""
        text = ""
        stream = self.popen.stderr
        if stream is not None and not stream.closed:
            with contextlib.suppress(OSError, ValueError):
                text = stream.read(4096).decode("utf-8", "replace").strip()
        return text or f"bwrap exited with status {self.popen.returncode}"

    @classmethod
    def starter(cls, argv: Callable[[], list[str]]) -> Callable[[int], Awaitable[BwrapProcess]]:
        """Start ``argv()`` (made at each start: the mounts are those found then) with
        ``stdin`` as its standard input, in a session of its own."""

        async def start(stdin: int) -> BwrapProcess:
            # started on the event loop's own thread, never a worker thread: bwrap's
            # --die-with-parent is the kernel's parent-death signal, which fires when the
            # *thread* that started it ends (a worker thread idles out in seconds)
            popen = subprocess.Popen(  # noqa: ASYNC220 - see above; once per sandbox
                argv(),
                stdin=stdin,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            return cls(popen)

        return start


def _init_pidfds(monitor: int) -> list[int]:
    """Pidfds of bwrap's children -- the init of the sandbox's pid namespace.  The kernel
    ends and reaps every other process of the namespace before that init's exit completes,
    so a pidfd of it turning readable means the sandbox is empty.  Opened while the monitor
    lives, which reaps its children: a pid it reaped in between and that was reused at once
    only makes the wait longer (bounded); none where ``/proc`` does not list children (then
    the monitor's exit is all there is to wait for)."""
    try:
        children = Path(f"/proc/{monitor}/task/{monitor}/children").read_text().split()
    except OSError:
        return []
    fds: list[int] = []
    for child in children:
        with contextlib.suppress(OSError):  # already gone
            fds.append(os.pidfd_open(int(child)))
    return fds


class ReapedProcess:
    """A native command server under the host's reaper (:func:`agentrig.host.open_reaped`):
    ending the reaper ends the server and every process below it, ``setsid`` ones included."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process

    def running(self) -> bool:
        return self.process.returncode is None

    def end_now(self) -> None:
        end_tree(self.process)

    async def ended(self) -> None:
        await end_reaped(self.process)

    def why(self) -> str:
        return f"the command server exited with status {self.process.returncode}"

    @classmethod
    def starter(
        cls, argv: list[str], cwd: str, env: dict[str, str]
    ) -> Callable[[int], Awaitable[ReapedProcess]]:
        """Start ``argv`` (unconfined: it confines its commands) with ``stdin`` as its input."""

        async def start(stdin: int) -> ReapedProcess:
            process = await open_reaped(
                argv,
                stdin=stdin,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=cwd,
                env=env,
            )
            return cls(process)

        return start


async def end_reaped(process: anyio.abc.Process) -> None:
    """End a reaped tree (the reaper SIGKILLs every descendant), then reap; never cancelled."""
    with anyio.CancelScope(shield=True):
        end_tree(process)
        with anyio.move_on_after(_REAP_TIMEOUT):
            await process.wait()
        if process.returncode is None:  # the reaper did not answer: kill its group
            kill_tree_group(process.pid)
            with anyio.move_on_after(_REAP_TIMEOUT):
                await process.wait()
        with anyio.move_on_after(_REAP_TIMEOUT), contextlib.suppress(Exception):
            await process.aclose()


def _end_all(processes: list[ServerProcess]) -> None:
    for process in processes:
        process.end_now()


class SandboxPool:
    """The persistent sandboxes of one backend (see the module docs).

    ``start(fd)`` starts a command server with ``fd`` (its end of a Unix socket) as its
    standard input; ``layout()`` says what a sandbox set up now would be (compared before
    every command: one set up for another layout is not reused).
    """

    def __init__(
        self,
        start: Callable[[int], Awaitable[ServerProcess]],
        layout: Callable[[], Hashable],
        *,
        idle: int = 2,
    ) -> None:
        self._start_server = start
        self._layout = layout
        self._idle: list[_Sandbox] = []
        self._most_idle = idle
        self._live: list[ServerProcess] = []
        #: how many sandboxes were set up (each costs the backend's setup once)
        self.started = 0
        self._closed = False
        # a pool dropped without aclose (a test, a script) still ends its sandboxes
        weakref.finalize(self, _end_all, self._live)

    async def _start(self, layout: Hashable) -> _Sandbox:
        host, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                process = await self._start_server(child.fileno())
            finally:
                child.close()
        except OSError as exc:
            host.close()
            raise SandboxError(f"the sandbox could not start: {exc}") from None
        except BaseException:
            host.close()
            raise
        host.setblocking(False)
        sandbox = _Sandbox(process, host, layout)
        self._live.append(process)
        self.started += 1
        try:
            # never abandoned half set up: bwrap ties the sandbox to its monitor only once
            # its setup is done (a cancellation waits the few ms for it, then ends it)
            with anyio.CancelScope(shield=True):
                refusal = await sandbox.ready()
        except BaseException as exc:
            await self._discard(sandbox)
            if isinstance(exc, SandboxError | TimeoutError):
                raise SandboxError(f"the sandbox could not start: {process.why()}") from None
            raise
        if refusal is not None:
            await self._discard(sandbox)
            raise SandboxError(f"the sandbox could not start: {refusal}")
        return sandbox

    async def _discard(self, sandbox: _Sandbox) -> None:
        await sandbox.kill()
        with contextlib.suppress(ValueError):
            self._live.remove(sandbox.process)

    async def _take(self) -> _Sandbox:
        layout = self._layout()
        while self._idle:
            sandbox = self._idle.pop()
            if sandbox.layout == layout and sandbox.process.running():
                return sandbox
            await self._discard(sandbox)  # set up for another layout, or gone
        return await self._start(layout)

    async def run(self, command: str, *, seconds: float, limit: int) -> CommandResult:
        """Run ``command`` in a sandbox of this pool, ended after ``seconds``.

        A timeout, a cancellation (which propagates) or a failure ends the sandbox with
        every process in it; a command that finished gives its sandbox back.
        """
        if self._closed:
            raise SandboxError("the workspace's sandboxes were closed with its runtime")
        if len(command.encode("utf-8")) > MAX_COMMAND:
            raise SandboxError(f"the command is longer than {MAX_COMMAND} bytes")
        result = CommandResult()
        sandbox = await self._take()
        finished = False
        try:
            with anyio.move_on_after(seconds) as deadline:
                await sandbox.run(command, result, limit)
                finished = True
            result.timed_out = deadline.cancelled_caught
        except OSError as exc:
            raise SandboxError(f"the sandbox failed: {exc}") from None
        finally:
            if finished and not self._closed and len(self._idle) < self._most_idle:
                self._idle.append(sandbox)
            else:
                await self._discard(sandbox)
        return result

    async def aclose(self) -> None:
        """End every idle sandbox; later commands are refused."""
        self._closed = True
        idle, self._idle = self._idle, []
        for sandbox in idle:
            await self._discard(sandbox)


def settings_json(
    cwd: Path, env: dict[str, str], limits: list[tuple[int, int]], kept: tuple[str, ...]
) -> str:
    """The server's settings (its one argument); ``kept``: paths whose files are never a
    command's leftovers (the read-only paths; the workspace is ``cwd``)."""
    import json

    return json.dumps(
        {"cwd": str(cwd), "env": env, "limits": [list(p) for p in limits], "kept": list(kept)}
    )


def server_source() -> str:
    """The command server's program text (run with ``python -I -S -c``)."""
    return SERVER_SOURCE.read_text(encoding="utf-8")
