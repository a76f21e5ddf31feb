"""The run stream's chunk pipe: order, backpressure, end of run, and the reader leaving."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

pytestmark = pytest.mark.anyio


def _pipe(limit: int = 3) -> tuple[Any, Any]:
    from agentrig.agent._pipe import ChunkPipe
    from agentrig.cancel import CancelSignal

    signal = CancelSignal()
    return ChunkPipe(limit, signal), signal


def _delta(text: str) -> Any:
    from agentrig.llm import TextDelta

    return TextDelta(text=text)


async def test_chunks_come_out_in_order_and_in_one_batch() -> None:
    pipe, _ = _pipe(limit=10)
    for text in "abc":
        with anyio.fail_after(1):
            await pipe.put(_delta(text))  # room: returns without waiting
    assert [c.text for c in pipe.take()] == ["a", "b", "c"]
    assert not pipe.take()


async def test_a_full_pipe_makes_the_run_wait_until_the_reader_takes() -> None:
    pipe, signal = _pipe(limit=2)
    await pipe.put(_delta("a"))
    resumed: list[str] = []

    async def run() -> None:
        await pipe.put(_delta("b"))  # the pipe is full now: waits for the reader
        resumed.append("run")

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await anyio.wait_all_tasks_blocked()
        assert resumed == []  # still waiting for room
        assert [c.text for c in pipe.take()] == ["a", "b"]
    assert resumed == ["run"]
    assert not signal.cancelled


async def test_the_reader_waits_until_a_chunk_or_the_end_arrives() -> None:
    pipe, _ = _pipe()
    got: list[str] = []

    async def read() -> None:
        while True:
            batch = pipe.take()
            if batch:
                got.extend(c.text for c in batch)
            elif pipe.closed:
                return
            else:
                await pipe.readable()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        await anyio.wait_all_tasks_blocked()
        await pipe.put(_delta("x"))
        await anyio.wait_all_tasks_blocked()
        await pipe.put(_delta("y"))
        pipe.close()
    assert got == ["x", "y"]


async def test_the_reader_leaving_cancels_the_run_and_frees_a_waiting_put() -> None:
    from agentrig.cancel import is_abort

    pipe, signal = _pipe(limit=1)
    freed: list[bool] = []

    async def run() -> None:
        await pipe.put(_delta("a"))  # full at once: waits for room
        freed.append(True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await anyio.wait_all_tasks_blocked()
        assert freed == []
        pipe.leave()
    assert freed == [True]
    from agentrig.errors import AbortError

    assert signal.cancelled
    assert isinstance(signal.reason, AbortError)
    assert is_abort(signal.reason)
    with anyio.fail_after(1):
        await pipe.put(_delta("b"))  # dropped at once; the run sees its signal
    assert not pipe.take()
