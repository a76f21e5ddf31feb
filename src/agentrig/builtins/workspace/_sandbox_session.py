"""Persistent bubblewrap sandboxes: set up once per workspace, one command at a time each.

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
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import weakref
from collections.abc import Callable, Hashable
from pathlib import Path

import anyio
import anyio.to_thread

from agentrig.builtins.workspace._errors import SandboxError

__all__ = ["MAX_COMMAND", "CommandResult", "SandboxPool", "server_source", "settings_json"]

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


class _Sandbox:
    """One running sandbox and the host's end of its server's socket."""

    def __init__(self, process: subprocess.Popen[bytes], sock: socket.socket, layout: Hashable):
        # a plain Popen, not an event loop's process: an idle sandbox belongs to no loop
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

    async def ready(self) -> None:
        with anyio.fail_after(_READY_TIMEOUT):
            if await self._line() != b"ready":
                raise SandboxError("the sandbox's command server did not start")

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
        """End the sandbox and every process in it (bwrap's pid namespace goes with it)."""
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(OSError):
                self.sock.close()
            _kill(self.process)
            with contextlib.suppress(subprocess.TimeoutExpired):
                await anyio.to_thread.run_sync(self.process.wait, _REAP_TIMEOUT)
            if self.process.stderr is not None:
                self.process.stderr.close()


def _kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL bwrap's process group: its monitor and the sandbox's init, whose death ends
    every process of the sandbox (its pid namespace).  Not once it was reaped: the group's
    id may be another's by then."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # a new session: the group is bwrap's


def _kill_all(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        _kill(process)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(_REAP_TIMEOUT)
        if process.stderr is not None:
            process.stderr.close()


class SandboxPool:
    """The persistent sandboxes of one bubblewrap backend (see the module docs).

    ``argv(settings)`` is the bwrap command line that runs the server with ``settings``;
    ``layout()`` says what the sandbox would mount now (compared before every command).
    """

    def __init__(
        self,
        argv: Callable[[str], list[str]],
        layout: Callable[[], Hashable],
        settings: str,
        *,
        idle: int = 2,
    ) -> None:
        self._argv = argv
        self._layout = layout
        self._settings = settings
        self._idle: list[_Sandbox] = []
        self._most_idle = idle
        self._live: list[subprocess.Popen[bytes]] = []
        #: how many sandboxes were set up (each costs bwrap's setup once)
        self.started = 0
        self._closed = False
        # a pool dropped without aclose (a test, a script) still ends its sandboxes
        weakref.finalize(self, _kill_all, self._live)

    async def _start(self, layout: Hashable) -> _Sandbox:
        host, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                # started on the event loop's own thread, never a worker thread: bwrap's
                # --die-with-parent is the kernel's parent-death signal, which fires when
                # the *thread* that started it ends (a worker thread idles out in seconds)
                process = subprocess.Popen(  # noqa: ASYNC220 - see above; once per sandbox
                    self._argv(self._settings),
                    stdin=child.fileno(),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                )
            finally:
                child.close()
        except OSError as exc:
            host.close()
            raise SandboxError(f"the sandbox could not start: {exc}") from None
        host.setblocking(False)
        sandbox = _Sandbox(process, host, layout)
        self._live.append(process)
        self.started += 1
        try:
            # never abandoned half set up: bwrap ties the sandbox to its monitor only once
            # its setup is done (a cancellation waits the few ms for it, then ends it)
            with anyio.CancelScope(shield=True):
                await sandbox.ready()
        except BaseException as exc:
            await self._discard(sandbox)
            if isinstance(exc, SandboxError | TimeoutError):
                raise SandboxError(f"the sandbox could not start: {_why(process)}") from None
            raise
        return sandbox

    async def _discard(self, sandbox: _Sandbox) -> None:
        await sandbox.kill()
        with contextlib.suppress(ValueError):
            self._live.remove(sandbox.process)

    async def _take(self) -> _Sandbox:
        layout = self._layout()
        while self._idle:
            sandbox = self._idle.pop()
            if sandbox.layout == layout and sandbox.process.poll() is None:
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


def _why(process: subprocess.Popen[bytes]) -> str:
    """What bwrap said on its way out (its stderr, once it is gone), or its exit status."""
    text = ""
    stream = process.stderr
    if stream is not None and not stream.closed:
        with contextlib.suppress(OSError, ValueError):
            text = stream.read(4096).decode("utf-8", "replace").strip()
    return text or f"bwrap exited with status {process.returncode}"


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
