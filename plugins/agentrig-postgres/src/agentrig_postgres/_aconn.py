"""psycopg's ``AsyncConnection`` waiting through anyio, so it runs on asyncio *and* trio.

psycopg does its protocol work in generators that never block: each yields the socket
readiness it needs (``Wait.R``, ``Wait.W`` or ``Wait.RW``) and is sent back what became
ready.  ``AsyncConnection`` drives them with asyncio's ``add_reader``/``add_writer`` and
guards the connection with an ``asyncio.Lock``; this subclass drives the same generators
with ``anyio.wait_readable``/``anyio.wait_writable`` and guards it with an anyio lock, so
every ``AsyncConnection`` method (``execute``, ``transaction``, ``notifies`` ...) works on
both backends.  Connecting resolves host names in a worker thread (libpq would block the
event loop) and drives libpq's connect generator the same way.

A wait interrupted (cancellation, KeyboardInterrupt) while a command is in flight closes
the connection: its protocol state is unknown, and the server rolls back what was not
committed.  Callers that must not leave a command half-done shield it.
"""

from __future__ import annotations

import asyncio
import select
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Self, TypeVar

import anyio
import anyio.to_thread
import psycopg
from psycopg import errors, pq
from psycopg.abc import PQGen, PQGenConn
from psycopg.conninfo import conninfo_attempts, conninfo_to_dict, make_conninfo
from psycopg.conninfo import timeout_from_conninfo as _timeout_from_conninfo
from psycopg.rows import TupleRow
from psycopg.waiting import Ready, Wait

__all__ = ["AnyioConnection"]

_RV = TypeVar("_RV")

_ACTIVE = pq.TransactionStatus.ACTIVE


class _Lock(asyncio.Lock):
    """``asyncio.Lock``'s interface (psycopg's connection lock) over an anyio lock."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = anyio.Lock(fast_acquire=True)

    async def acquire(self) -> Literal[True]:
        await self._lock.acquire()
        return True

    def release(self) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()


def _ready_now(fileno: int, wait: int) -> int:
    """What of ``wait`` the socket offers right now (a zero-timeout poll)."""
    poller = select.poll()
    poller.register(
        fileno, (select.POLLIN if wait & Wait.R else 0) | (select.POLLOUT if wait & Wait.W else 0)
    )
    ready = 0
    for _, mask in poller.poll(0):
        if mask & select.POLLIN:
            ready |= Ready.R
        if mask & select.POLLOUT:
            ready |= Ready.W
    return ready


async def _ready(fileno: int, wait: int) -> int:
    """Wait until the socket offers (part of) ``wait``; what it offers."""
    if wait & Wait.W:
        # a socket asked for writing nearly always is writable: a poll is cheaper than a
        # round through the event loop
        now = _ready_now(fileno, wait)
        if now:
            return now
    if wait == Wait.R:
        await anyio.wait_readable(fileno)
        return int(Ready.R)
    if wait == Wait.W:
        await anyio.wait_writable(fileno)
        return int(Ready.W)
    if wait != Wait.RW:
        raise psycopg.InternalError(f"bad poll status: {wait}")
    ready = 0
    async with anyio.create_task_group() as group:

        async def until(waiter: Callable[[int], Awaitable[None]], flag: int) -> None:
            nonlocal ready
            await waiter(fileno)
            ready |= flag
            group.cancel_scope.cancel()

        group.start_soon(until, anyio.wait_readable, int(Ready.R))
        group.start_soon(until, anyio.wait_writable, int(Ready.W))
    return ready


async def _drive(gen: PQGen[_RV], fileno: int) -> _RV:
    try:
        wait = next(gen)
        while True:
            wait = gen.send(Ready(await _ready(fileno, wait)))
    except StopIteration as stop:
        result: _RV = stop.value
        return result
    except OSError as exc:
        raise psycopg.OperationalError("connection socket closed") from exc


async def _drive_connect(gen: PQGenConn[_RV]) -> _RV:
    try:
        fileno, wait = next(gen)
        while True:
            fileno, wait = gen.send(Ready(await _ready(fileno, wait)))
    except StopIteration as stop:
        result: _RV = stop.value
        return result
    except OSError as exc:
        raise psycopg.OperationalError("connection socket closed") from exc


class AnyioConnection(psycopg.AsyncConnection[TupleRow]):
    """An ``AsyncConnection`` on any anyio backend (see the module docs)."""

    def __init__(self, pgconn: Any, **kwargs: Any) -> None:
        super().__init__(pgconn, **kwargs)
        self.lock = _Lock()

    @classmethod
    async def open(cls, conninfo: str, *, connect_timeout: float) -> Self:
        """Connect (autocommit); ``connect_timeout`` bounds each address tried."""
        params = conninfo_to_dict(conninfo, connect_timeout=max(2, round(connect_timeout)))
        timeout = _timeout_from_conninfo(params)
        attempts = await anyio.to_thread.run_sync(conninfo_attempts, params)
        failure: psycopg.Error | None = None
        for attempt in attempts:
            gen = cls._connect_gen(make_conninfo("", **attempt))
            try:
                with anyio.fail_after(timeout):
                    connection = await _drive_connect(gen)
            except TimeoutError:
                failure = errors.ConnectionTimeout("connection timeout expired")
            except psycopg.Error as exc:
                failure = exc
            else:
                await connection.set_autocommit(True)
                return connection
        # (the connection string is not quoted: it may hold a password)
        raise failure or psycopg.OperationalError("the host name resolved to no address")

    async def wait(
        self,
        gen: PQGen[_RV],
        interval: float = 0.1,
        timeout: float | None = None,  # noqa: ASYNC109 -- psycopg calls it so (overridden)
    ) -> _RV:
        """Consume ``gen`` on this connection's socket through anyio."""
        try:
            with anyio.fail_after(timeout):
                return await _drive(gen, self.pgconn.socket)
        except BaseException as exc:
            if self.pgconn.transaction_status == _ACTIVE:
                # interrupted mid-command: the protocol state is unknown
                self.pgconn.finish()
            if isinstance(exc, TimeoutError):
                raise errors._WaitTimeout("wait timeout expired") from None
            raise
