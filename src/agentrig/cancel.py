"""Cancellation signals and the one abort classifier.

A run's :class:`CancelSignal` is its only source of cancellation: it carries a reason, reaches
every provider call and tool (``ctx.signal``) and works on asyncio and trio alike.
:func:`is_abort` judges a failure by the signal and the exception's type, never its message.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from types import TracebackType
from typing import final

import anyio

from agentrig.errors import AbortError, is_cancellation

__all__ = ["CancelSignal", "is_abort"]


@final
class CancelSignal:
    """A one-shot, thread-unsafe cancellation flag with a reason and listeners."""

    __slots__ = ("_callbacks", "_event", "_reason", "_set")

    def __init__(self) -> None:
        self._set = False
        self._reason: object = None
        self._callbacks: list[Callable[[object], None]] = []
        self._event: anyio.Event | None = None

    @property
    def cancelled(self) -> bool:
        return self._set

    @property
    def reason(self) -> object:
        """What the canceller passed (``None`` while not cancelled)."""
        return self._reason

    def cancel(self, reason: object = "cancelled") -> bool:
        """Set the signal; returns False when it was already set (the first reason wins)."""
        if self._set:
            return False
        self._set = True
        self._reason = reason
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(reason)
        if self._event is not None:
            self._event.set()
        return True

    def on_cancel(self, callback: Callable[[object], None]) -> Callable[[], None]:
        """Call ``callback(reason)`` when the signal fires (at once if it already has).

        Returns a function that removes the listener.
        """
        if self._set:
            callback(self._reason)
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._callbacks.remove(callback)

        return remove

    def abort_error(self) -> AbortError:
        """The error a cancelled operation raises: the reason itself when it is an AbortError."""
        if isinstance(self._reason, AbortError):
            return self._reason
        error = AbortError(f"aborted: {self._reason}", reason=self._reason)
        if isinstance(self._reason, BaseException):
            error.__cause__ = self._reason
        return error

    def raise_if_cancelled(self) -> None:
        if self._set:
            raise self.abort_error()

    async def wait(self) -> object:
        """Block until the signal fires; returns the reason."""
        if not self._set:
            if self._event is None:
                self._event = anyio.Event()
            await self._event.wait()
        return self._reason

    def scope(
        self, cancel_scope: anyio.CancelScope | None = None
    ) -> contextlib.AbstractContextManager[anyio.CancelScope]:
        """An anyio cancel scope, cancelled when this signal fires; after the block,
        :meth:`raise_if_cancelled` turns the swallowed cancellation into an AbortError.

        ``cancel_scope`` is a fresh, unentered scope to use: a caller entering many in one task
        makes each from the class of its first, so anyio does not look the event loop's
        library up every time.
        """
        return _SignalScope(self, cancel_scope)

    def __repr__(self) -> str:
        state = f"cancelled reason={self._reason!r}" if self._set else "live"
        return f"<CancelSignal {state}>"


class _SignalScope:
    # A class rather than @contextmanager: one is entered per provider call and per blocking
    # tool step, and a generator-based manager costs about three times as much.
    __slots__ = ("_scope", "_signal")

    def __init__(self, signal: CancelSignal, scope: anyio.CancelScope | None) -> None:
        self._signal = signal
        self._scope = anyio.CancelScope() if scope is None else scope

    # the signal's listener is this object: no bound method made, found by identity at exit
    def __call__(self, _reason: object) -> None:
        self._scope.cancel()

    def __enter__(self) -> anyio.CancelScope:
        scope = self._scope.__enter__()
        signal = self._signal
        if signal._set:
            scope.cancel()
        else:
            signal._callbacks.append(self)
        return scope

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        callbacks = self._signal._callbacks
        if self in callbacks:  # gone already when the signal fired
            callbacks.remove(self)
        return bool(self._scope.__exit__(exc_type, exc, tb))


def is_abort(error: BaseException, signal: CancelSignal | None = None) -> bool:
    """Was ``error`` an abort?

    True for an :class:`AbortError` (or any exception named ``AbortError``), for the
    backend's cancellation exception, and for any error raised while ``signal`` was already
    cancelled with that error as its reason.  Message text is never consulted.
    """
    if isinstance(error, AbortError) or getattr(error, "name", None) == "AbortError":
        return True
    if is_cancellation(error):
        return True
    return signal is not None and signal.cancelled and signal.reason is error
