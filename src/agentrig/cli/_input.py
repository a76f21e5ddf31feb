"""Lines typed on stdin, read by a daemon thread: chat turns and approval answers share it."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentrig.cli._common import prompt_text

if TYPE_CHECKING:
    import anyio.abc
    import anyio.from_thread

__all__ = ["LineReader"]


def _stdin_lines() -> Callable[[], str | bytes]:
    """A function returning the next line of stdin (empty at its end).

    A real stdin is read with ``os.read`` on its descriptor, outside Python's buffered
    reader: a daemon thread blocked inside that reader holds its lock, and the interpreter
    aborts if it has to take the lock at exit.  A stdin object without a descriptor (a test's
    ``StringIO``) is read line by line, as bytes when it has a binary buffer.
    """
    import io
    import os

    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        binary = getattr(sys.stdin, "buffer", None)
        return binary.readline if binary is not None else sys.stdin.readline
    pending = bytearray()

    def next_line() -> bytes:
        while True:
            end = pending.find(b"\n")
            if end >= 0:
                line = bytes(pending[: end + 1])
                del pending[: end + 1]
                return line
            chunk = os.read(fd, 65536)
            if not chunk:
                line = bytes(pending)
                pending.clear()
                return line
            pending.extend(chunk)

    return next_line


class LineReader:
    """Lines of stdin, read by a daemon thread so a blocked read never holds the exit.

    One reader serves every consumer of a command (the chat's prompt, the approval
    question), so no line typed for one is swallowed by another.  Lines are read as bytes
    (when stdin has a binary buffer) and decoded here, strictly: a line that is not UTF-8 is
    a usage error before it becomes a turn.
    """

    def __init__(self) -> None:
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._receive: anyio.abc.ObjectReceiveStream[str | bytes | None] | None = None
        self._ended = False

    async def __aenter__(self) -> LineReader:
        import anyio
        import anyio.from_thread

        send, receive = anyio.create_memory_object_stream[str | bytes | None](1)
        portal = anyio.from_thread.BlockingPortal()
        await portal.__aenter__()
        self._portal, self._receive = portal, receive
        next_line = _stdin_lines()

        def read() -> None:
            try:
                while True:
                    line = next_line()
                    portal.call(send.send, line or None)
                    if not line:
                        return
            except Exception:  # the command ended first (portal closed): nothing to deliver
                return

        threading.Thread(target=read, name="agentrig-stdin", daemon=True).start()
        return self

    async def next(self) -> str | None:
        """The next line, or None at end of input; :class:`UsageError` if it is not UTF-8."""
        import anyio

        assert self._receive is not None
        if self._ended:  # the thread delivers the end once; every later read sees it too
            return None
        try:
            line = await self._receive.receive()
        except anyio.EndOfStream:
            line = None
        if line is None:
            self._ended = True
            return None
        return prompt_text(line, "stdin")

    async def __aexit__(self, *exc: object) -> None:
        if self._receive is not None:
            await self._receive.aclose()
        if self._portal is not None:
            await self._portal.__aexit__(None, None, None)
