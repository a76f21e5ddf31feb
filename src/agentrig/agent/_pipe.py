"""The hand-over between a streamed run's task and the reader of its ``RunStream``.

One producer (the run, calling :meth:`ChunkPipe.put` once per chunk) and one reader (the
stream's iterator, taking everything buffered at once with :meth:`ChunkPipe.take`).  Why
not anyio's memory object stream, the usual tool: it checks and looks up a dozen things
per item on each side, paid once per streamed token; this pipe does the one thing the run
stream needs in a few operations, and waits (on an ``anyio.Event``) only when the buffer
is full or empty.
"""

from __future__ import annotations

from collections import deque

import anyio

from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.llm import StreamChunk

__all__ = ["ChunkPipe"]


class ChunkPipe:
    """A bounded chunk buffer; the reader leaving cancels the run through ``signal``.

    ``limit`` bounds what waits in the pipe; a batch the reader has taken but not yet
    yielded is no longer counted, so at most ``2 * limit`` chunks are held at once.
    """

    __slots__ = ("_closed", "_gone", "_items", "_limit", "_reader", "_signal", "_writer")

    def __init__(self, limit: int, signal: CancelSignal) -> None:
        self._items: deque[StreamChunk] = deque()
        self._limit = limit
        self._signal = signal
        self._closed = False  # the run finished: nothing more will be put
        self._gone = False  # the reader left: nothing more will be taken
        self._reader: anyio.Event | None = None
        self._writer: anyio.Event | None = None

    # ---- the run's side ----------------------------------------------------------------------
    async def put(self, chunk: StreamChunk) -> None:
        """Buffer ``chunk``; wait while the buffer is full (the reader is behind)."""
        if self._gone:
            self._abandoned()
            return
        items = self._items
        items.append(chunk)
        reader = self._reader
        if reader is not None:
            self._reader = None
            reader.set()
        if len(items) >= self._limit:
            await self._room()

    async def _room(self) -> None:
        while len(self._items) >= self._limit and not self._gone:
            writer = self._writer = anyio.Event()
            await writer.wait()
        if self._gone:
            self._abandoned()

    def close(self) -> None:
        """The run is over: the reader ends once it has taken what is buffered."""
        self._closed = True
        self._wake_reader()

    def _abandoned(self) -> None:
        self._signal.cancel(AbortError("stream abandoned by its consumer"))

    # ---- the reader's side -----------------------------------------------------------------
    def take(self) -> deque[StreamChunk]:
        """Everything buffered (possibly nothing), in order; makes room for the run."""
        items = self._items
        if not items:
            return items
        self._items = deque()
        writer = self._writer
        if writer is not None:
            self._writer = None
            writer.set()
        return items

    @property
    def closed(self) -> bool:
        return self._closed

    async def readable(self) -> None:
        """Wait until a chunk is buffered or the run is over."""
        if self._items or self._closed:
            return
        reader = self._reader = anyio.Event()
        await reader.wait()

    def leave(self) -> None:
        """The reader stops reading: the run's next ``put`` cancels it."""
        self._gone = True
        self._items.clear()
        writer = self._writer
        if writer is not None:
            self._writer = None
            writer.set()

    def _wake_reader(self) -> None:
        reader = self._reader
        if reader is not None:
            self._reader = None
            reader.set()
