"""A stdio server as a reaped process tree, speaking newline-delimited JSON-RPC.

The SDK's own stdio client starts the server as a plain group leader: a descendant that
calls ``setsid`` outlives the runtime, one that keeps the server's stdout open makes closing
wait, and one invalid UTF-8 byte ends the session.  This transport yields the same stream
pair the SDK's ``ClientSession`` reads and writes, and differs where a server misbehaves:

* the server runs under :func:`agentrig.host.open_reaped`, like command hooks: when it exits
  or the connection closes, every descendant is ended (``setsid`` ones included, on Linux);
* each line is decoded on its own, an invalid byte replaced -- the message still parses;
* a line longer than ``max_message_bytes`` ends the connection with an error saying so,
  so a server cannot make the client buffer without bound;
* closing never waits on stdout: stdin is closed, the server gets a short grace to exit,
  then its tree is ended;
* the last lines of stderr are kept, so a server that fails at start-up says why.
"""

from __future__ import annotations

import collections
import contextlib
import subprocess
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import anyio
import anyio.abc
from mcp import types
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from agentrig.host import end_tree, kill_tree_group, open_reaped
from agentrig_mcp._config import StdioServerSpec

if TYPE_CHECKING:
    import logging

    from agentrig_mcp._transport import Streams

__all__ = ["ProcessState", "stdio_transport"]

#: how long a server may take to exit after its stdin closed, before its tree is ended
_EXIT_GRACE = 2.0
#: how long ending a tree may take before the group is SIGKILLed directly
_REAP_TIMEOUT = 5.0
_CHUNK = 65536
_CLOSED = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)
_STDERR_LINES = 20
_STDERR_LINE_CHARS = 500


class MessageTooLarge(Exception):
    """The server sent a line over the size limit (the connection ends)."""


class ProcessState:
    """What the connection can tell about its process: the last stderr lines, how it ended."""

    def __init__(self) -> None:
        self.stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self.returncode: int | None = None
        self.problem: str | None = None  # why the transport ended the connection itself

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (empty when none)."""
        return "\n".join(self.stderr)

    def describe_exit(self) -> str:
        """How the server went away, in a few words."""
        if self.problem is not None:
            return self.problem
        code = self.returncode
        if code is None:
            return "the server closed its output"
        if code < 0:
            return f"the server was killed by signal {-code}"
        return f"the server exited with status {code}"


async def _pump_stderr(
    stream: anyio.abc.ByteReceiveStream, log: logging.Logger, state: ProcessState
) -> None:
    pending = b""

    def emit(raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip()
        log.info("stderr: %s", line)
        if line:
            state.stderr.append(line[:_STDERR_LINE_CHARS])

    with contextlib.suppress(
        anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError
    ):
        while True:
            chunk = await stream.receive(_CHUNK)
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                emit(line)
            if len(pending) > _CHUNK:  # a line without end: log what there is
                emit(pending)
                pending = b""
    if pending:
        emit(pending)


async def _read_stdout(
    stream: anyio.abc.ByteReceiveStream,
    into: anyio.abc.ObjectSendStream[SessionMessage | Exception],
    limit: int,
    state: ProcessState,
) -> None:
    """Forward each line as a message; return at EOF or at a line over ``limit`` bytes."""
    buffer = bytearray()
    with contextlib.suppress(
        anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError
    ):
        while True:
            chunk = await stream.receive(_CHUNK)
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                if end < 0:
                    buffer += chunk[start:]
                    break
                buffer += chunk[start:end]
                start = end + 1
                if len(buffer) > limit:
                    break
                line = bytes(buffer).strip()
                buffer.clear()
                if line:
                    await into.send(_parse(line))
            if len(buffer) > limit:
                state.problem = f"the server sent a message over {limit} bytes (max_message_bytes)"
                return


def _parse(line: bytes) -> SessionMessage | Exception:
    text = line.decode("utf-8", "replace")  # one bad byte must not end the session
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(text))
    except Exception as exc:  # not JSON-RPC: the session reports it, the connection stays
        shown = text if len(text) <= 200 else text[:200] + "..."
        return ValueError(f"not a JSON-RPC message ({type(exc).__name__}): {shown}")


async def _write_stdin(
    stream: anyio.abc.ByteSendStream,
    outbound: anyio.abc.ObjectReceiveStream[SessionMessage],
) -> None:
    async with outbound:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for message in outbound:
                data = message.message.model_dump_json(by_alias=True, exclude_none=True)
                await stream.send(data.encode("utf-8") + b"\n")


async def _end(process: anyio.abc.Process) -> None:
    """Close stdin, give the server a grace to exit, then end its whole tree."""
    with anyio.CancelScope(shield=True):
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                await process.stdin.aclose()
        with anyio.move_on_after(_EXIT_GRACE):
            await process.wait()
        end_tree(process)  # after the server's exit too: the reaper ends what it left behind
        with anyio.move_on_after(_REAP_TIMEOUT):
            await process.wait()
        if process.returncode is None:
            kill_tree_group(process.pid)
            with anyio.move_on_after(_REAP_TIMEOUT):
                await process.wait()


@contextlib.asynccontextmanager
async def stdio_transport(
    spec: StdioServerSpec, env: dict[str, str], log: logging.Logger, state: ProcessState
) -> AsyncIterator[Streams]:
    """Start the server and yield ``(read, write)`` for a ``ClientSession``."""
    process = await open_reaped(
        [spec.command, *spec.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=spec.cwd,
        env={**get_default_environment(), **env},
    )
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    inbound_send, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outbound, outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as tg:

            async def read() -> None:
                assert process.stdout is not None
                async with inbound_send:
                    await _read_stdout(process.stdout, inbound_send, spec.max_message_bytes, state)
                    if state.problem is not None:
                        end_tree(process)
                    # EOF: say how the server ended, when it does (the reaper has ended the
                    # descendants that held the pipe once the server exited)
                    with anyio.move_on_after(_EXIT_GRACE):
                        await process.wait()
                    state.returncode = process.returncode

            async def watch() -> None:
                await process.wait()
                state.returncode = process.returncode
                await anyio.sleep(_EXIT_GRACE)  # a descendant holds stdout (no reaper): stop
                await inbound_send.aclose()

            stderr_done = anyio.Event()

            async def pump() -> None:
                assert process.stderr is not None
                try:
                    await _pump_stderr(process.stderr, log, state)
                finally:
                    stderr_done.set()

            tg.start_soon(read)
            tg.start_soon(pump)
            tg.start_soon(_write_stdin, process.stdin, outbound_receive)
            tg.start_soon(watch)
            try:
                yield inbound, outbound
            finally:
                await outbound.aclose()
                await _end(process)
                state.returncode = process.returncode
                with anyio.CancelScope(shield=True), anyio.move_on_after(0.5):
                    await stderr_done.wait()  # its last lines say why it failed
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await _end(process)
            with contextlib.suppress(Exception):
                await process.aclose()
