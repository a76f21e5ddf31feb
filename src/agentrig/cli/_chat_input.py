"""Where a chat's messages and approval answers come from.

On a terminal (stdin and stdout both) the line editor of ``_editor`` reads them; otherwise
each line of stdin is one message (``_input``), so a chat can be piped or scripted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import anyio

    from agentrig.cancel import CancelSignal
    from agentrig.cli._editor import LineEditor
    from agentrig.cli._input import LineReader

__all__ = ["ChatInput", "Interrupts", "no_echo", "open_chat_input"]


@contextmanager
def no_echo() -> Iterator[None]:
    """While an answer streams, the terminal echoes nothing typed (Ctrl-C's ``^C`` included).

    An echo lands after the live answer's last line, and on a full line it wraps: the
    renderer's cursor is then a line off and the partial answer would be shown twice.  What
    is typed ahead is not lost: the line editor reads it at the next prompt (and shows it
    there).  A stdin that is not a terminal is left alone.
    """
    import termios

    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):
        yield
        return
    quiet = list(saved)
    quiet[3] &= ~(termios.ECHO | termios.ECHOCTL)
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


class Interrupts:
    """Ctrl-C in a chat: the first stops the running answer, one at the prompt leaves."""

    def __init__(self) -> None:
        self.turn: CancelSignal | None = None
        self.prompt: anyio.CancelScope | None = None
        self.leave = False

    async def watch(self) -> None:
        """Turn SIGINT (Ctrl-C while the terminal is not being edited) into the above."""
        import signal

        import anyio

        with anyio.open_signal_receiver(signal.SIGINT) as received:
            async for _ in received:
                self.interrupt()

    def interrupt(self) -> None:
        if self.turn is not None and not self.turn.cancelled:
            self.turn.cancel("interrupted (Ctrl-C)")
            return
        self.leave = True
        if self.prompt is not None:
            self.prompt.cancel()


class ChatInput:
    """The chat's messages (:meth:`message`) and the approvals' answers (:attr:`ask`)."""

    def __init__(
        self,
        keys: Interrupts,
        err: IO[str],
        *,
        editor: LineEditor | None = None,
        lines: LineReader | None = None,
    ) -> None:
        self.keys, self.err = keys, err
        self.editor, self.lines = editor, lines
        #: the person types the messages at a terminal (a prompt is shown)
        self.interactive = editor is not None or sys.stdin.isatty()
        self.ask: Callable[[], Awaitable[str | None]] | None = None
        if editor is not None and err.isatty():
            self.ask = self._editor_answer
        elif lines is not None and sys.stdin.isatty() and err.isatty():
            self.ask = lines.next

    async def message(self) -> str | None:
        """The next message; None when the input ended or Ctrl-C at the prompt asked to leave."""
        import anyio

        if self.interactive and self.editor is None:
            self.err.write("> ")
            self.err.flush()
        line: str | None = None
        with anyio.CancelScope() as self.keys.prompt:  # a SIGINT meanwhile cancels the read
            line = await self._read()
        self.keys.prompt = None
        return line

    async def _read(self) -> str | None:
        if self.editor is not None:
            try:
                return await self.editor.prompt()
            except KeyboardInterrupt:  # Ctrl-C is a key while the line is edited
                self.keys.leave = True
                return None
        assert self.lines is not None
        return await self.lines.next()

    async def _editor_answer(self) -> str | None:
        assert self.editor is not None
        try:
            return await self.editor.answer()
        except KeyboardInterrupt:  # Ctrl-C while asked: as during the answer, stop the turn
            import anyio.lowlevel

            self.keys.interrupt()
            # the question's wait ends in the turn's cancellation: "withdrawn", not a "no"
            await anyio.lowlevel.checkpoint()
            return None


@asynccontextmanager
async def open_chat_input(keys: Interrupts, err: IO[str]) -> AsyncIterator[ChatInput]:
    """The line editor when stdin and stdout are a terminal, else stdin's lines."""
    if sys.stdin.isatty() and sys.stdout.isatty():
        from agentrig.cli._editor import LineEditor, history_file

        yield ChatInput(keys, err, editor=LineEditor(history_file(os.environ)))
        return
    from agentrig.cli._input import LineReader

    async with LineReader() as lines:
        yield ChatInput(keys, err, lines=lines)
