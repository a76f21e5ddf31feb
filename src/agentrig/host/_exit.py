"""One per-process registry of what must go when the process ends.

Process-scoped directories and the process groups of children started in their own session
register here.  Why one registry: many entries then cost one ``atexit`` hook and one set of
signal handlers, and two registries could each take the other's signal handler for "someone
else's" and both stand aside.

Python runs ``atexit`` hooks on a normal exit and after an unhandled ``KeyboardInterrupt``,
but not when a signal's *default action* kills the process.  So for SIGTERM and SIGHUP (and
SIGINT if its handler was reset to the default) the registry installs a handler -- only
when the signal still has its default disposition, i.e. nobody else handles it.  The handler
runs the registry, restores the default and re-raises the signal, so the process dies by
that signal exactly as it would have.  A process with its own handler exits as that handler
decides, and its exit runs the registry through ``atexit``.  ``SIGKILL`` runs nothing: what
such a process leaves is swept by a later start (see :func:`~agentrig.host.sweep`).
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType

__all__ = ["ExitRegistry", "exit_registry"]

_log = logging.getLogger("agentrig.host.exit")

_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, name)
)


class ExitRegistry:
    """Callbacks run once when the process ends (normal exit or an unhandled signal).

    Entries are keyed so their owner can withdraw them (:meth:`unregister`) when the
    resource is released earlier.  Callbacks run newest first; a failing callback is logged
    and does not stop the others.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[object, Callable[[], object]] = {}
        self._installed_pid: int | None = None
        self._handled: dict[int, object] = {}

    def register(self, key: object, callback: Callable[[], object]) -> None:
        """Run ``callback`` at exit unless ``key`` is unregistered first."""
        with self._lock:
            self._entries[key] = callback
            if self._installed_pid != os.getpid():
                self._install()

    def unregister(self, key: object) -> None:
        """Withdraw an entry; unknown keys are ignored."""
        with self._lock:
            self._entries.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def run(self) -> None:
        """Run and clear every entry (idempotent; also used by the exit hooks)."""
        with self._lock:
            entries = list(self._entries.items())
            self._entries.clear()
        for key, callback in reversed(entries):
            try:
                callback()
            except Exception:  # a teardown path reports, it does not raise
                _log.warning("exit cleanup %r failed", key, exc_info=True)

    def _install(self) -> None:
        # After a fork the child inherits our handlers and atexit hook, but its entries
        # start empty (they are the parent's resources); re-arm for the child's own pid.
        self._installed_pid = os.getpid()
        atexit.register(self._at_exit, os.getpid())
        if threading.current_thread() is not threading.main_thread():
            return  # signal handlers can only be installed from the main thread
        for signum in _SIGNALS:
            try:
                current = signal.getsignal(signum)
            except (OSError, ValueError):  # pragma: no cover
                continue
            if current is signal.SIG_DFL:
                try:
                    signal.signal(signum, self._on_signal)
                except (OSError, ValueError):  # pragma: no cover
                    continue
                self._handled[signum] = current

    def _forget(self) -> None:
        # In a forked child: the entries are the parent's resources, never the child's.
        self._lock = threading.Lock()
        self._entries = {}

    def _at_exit(self, pid: int) -> None:
        if os.getpid() == pid:
            self.run()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self._installed_pid == os.getpid():
            self.run()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


_REGISTRY = ExitRegistry()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_REGISTRY._forget)


def exit_registry() -> ExitRegistry:
    """The registry of this process (one per interpreter)."""
    return _REGISTRY
