"""A streamed run.

:class:`RunStream` runs a turn through the agent's run driver on the runtime's task group and
hands its chunks to the reader through a bounded pipe; abandoning the stream cancels the turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar, final

import anyio

from agentrig.agent._pipe import ChunkPipe
from agentrig.agent._results import RunResult
from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.llm import StreamChunk, UserMessage

if TYPE_CHECKING:
    from agentrig.agent._driver import RunDriver, RunOptions

__all__ = ["RunStream"]

OutputT = TypeVar("OutputT")


_BUFFER = 256


@final
class RunStream(Generic[OutputT]):
    """An async iterator of a run's chunks; ``result`` is set when it finished."""

    def __init__(
        self,
        driver: RunDriver,
        prompt: str | UserMessage,
        options: RunOptions,
        signal: CancelSignal,
    ) -> None:
        self._driver = driver
        self._prompt = prompt
        self._options = options
        self.signal = signal
        self._result: RunResult[Any] | None = None
        self._iterating = False

    @property
    def result(self) -> RunResult[Any]:
        if self._result is None:
            raise RuntimeError("the stream has not finished; iterate it to the end first")
        return self._result

    def __aiter__(self) -> AsyncIterator[StreamChunk]:
        if self._iterating:
            raise RuntimeError("a RunStream can be iterated once")
        self._iterating = True
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[StreamChunk]:
        # A bounded buffer: the run hands chunks over without a task switch per chunk and
        # waits only when the reader falls _BUFFER chunks behind (backpressure).
        pipe = ChunkPipe(_BUFFER, self.signal)
        failure: list[BaseException] = []

        finished = anyio.Event()

        async def runner() -> None:
            try:
                self._result = await self._driver.run(
                    self._prompt, self._options, self.signal, pipe.put
                )
            except BaseException as exc:  # delivered to the consumer below
                failure.append(exc)
            finally:
                pipe.close()
                finished.set()

        self._driver.agent.runtime.spawn(runner)
        try:
            while True:
                # take everything buffered at once; wait only when the pipe is empty
                batch = pipe.take()
                if batch:
                    for chunk in batch:
                        yield chunk
                elif pipe.closed:
                    break
                else:
                    await pipe.readable()
        finally:
            pipe.leave()
            if not finished.is_set():
                # abandoning the stream cancels its turn
                self.signal.cancel(AbortError("stream abandoned by its consumer"))
                with anyio.CancelScope(shield=True):
                    await finished.wait()
        if failure:
            raise failure[0]
