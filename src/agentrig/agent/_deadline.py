"""A run's own deadline: a cancel signal that fires when the run has taken too long.

Kept apart from the turn: the run driver wraps whole runs (a turn plus its structured-output
retries) in it, and a deadline is a reason on the run's signal, not a cancellation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from agentrig.agent._results import DeadlineExceededError
from agentrig.cancel import CancelSignal

__all__ = ["with_deadline"]

_T = TypeVar("_T")


def with_deadline(
    seconds: float | None,
    signal: CancelSignal,
    body: Callable[[CancelSignal], Awaitable[_T]],
) -> Awaitable[_T]:
    """Run ``body`` with a signal that fires ``seconds`` from now (or when ``signal`` does).

    The deadline is this run's own: when it passes, the run's signal fires with a
    :class:`DeadlineExceededError` and the loop ends the turn ``interrupted`` with that reason.
    A cancellation from the caller is not ours and propagates untouched.  Without a deadline
    this is ``body(signal)`` itself (no coroutine of its own around every run).
    """
    if seconds is None:
        return body(signal)
    return _timed(seconds, signal, body)


async def _timed(
    seconds: float, signal: CancelSignal, body: Callable[[CancelSignal], Awaitable[_T]]
) -> _T:
    own = CancelSignal()

    def pass_on(reason: object) -> None:
        own.cancel(reason)  # the caller's cancel reaches the run as before

    forward = signal.on_cancel(pass_on)
    result: list[_T] = []
    failure: list[Exception] = []

    async def expire() -> None:
        await anyio.sleep(seconds)
        own.cancel(DeadlineExceededError(seconds))

    try:
        async with anyio.create_task_group() as timer:
            timer.start_soon(expire)
            try:
                result.append(await body(own))
            except Exception as exc:  # raised as itself below, not in an exception group
                failure.append(exc)
            timer.cancel_scope.cancel()
    finally:
        forward()
    if failure:
        raise failure[0]
    return result[0]
