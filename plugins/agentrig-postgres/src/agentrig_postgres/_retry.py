"""Which PostgreSQL failures pass by themselves, and how long a call waits them out.

A server restarting (``pg_ctl restart``, a failover, an administrator's shutdown), a
connection cut by the network, a serialization failure or a deadlock: each is over once
the server is back or the conflicting transaction has gone, so the call that met it
reconnects and tries again -- with a growing pause, for at most ``retry_for`` seconds --
instead of failing the run it belongs to.  A failure that says something is wrong with
what was asked (a missing database or table, a refused password, a violated constraint)
is raised at once: waiting would not change it.
"""

from __future__ import annotations

import psycopg
from psycopg import errors

__all__ = ["Backoff", "is_transient"]

#: SQLSTATE classes and codes of failures that pass: connection exceptions, insufficient
#: resources, operator intervention (shutdown, crash of another backend, "cannot connect
#: now"), serialization failures and deadlocks, an idle-in-transaction session timeout
_TRANSIENT_CLASSES = ("08", "53", "57")
_TRANSIENT_CODES = frozenset({"40001", "40P01", "25P03"})
#: a statement timeout or an explicit cancel: retrying would undo what the server decided
_NOT_TRANSIENT_CODES = frozenset({"57014"})
#: libpq's words for "nobody answered" (a connection attempt carries no SQLSTATE)
_UNREACHABLE = (
    "connection refused",
    "no such file or directory",
    "the database system is starting up",
    "the database system is shutting down",
    "the database system is in recovery mode",
    "the database system is not yet accepting connections",
    "server closed the connection unexpectedly",
    "terminating connection",
    "connection reset",
    "could not receive data",
    "could not send data",
    "consuming input failed",
    "sending query failed",
    "connection socket closed",
    "the connection is closed",
    "connection timeout expired",
    "timeout expired",
)


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is a PostgreSQL failure that passes by itself (see the module docs)."""
    if not isinstance(exc, psycopg.OperationalError):
        return False
    code = exc.sqlstate or ""
    if code in _NOT_TRANSIENT_CODES:
        return False
    if code in _TRANSIENT_CODES or code.startswith(_TRANSIENT_CLASSES):
        return True
    if isinstance(exc, errors.ConnectionTimeout):
        return True
    if code:
        return False
    text = str(exc).lower()
    return any(words in text for words in _UNREACHABLE)


class Backoff:
    """Pauses between the attempts of one call: 0.05 s doubling to 2 s, until ``retry_for``
    seconds after the first failure (``retry_for = 0``: no retry)."""

    __slots__ = ("_deadline", "_delay", "_retry_for")

    def __init__(self, retry_for: float) -> None:
        self._retry_for = retry_for
        self._deadline: float | None = None
        self._delay = 0.05

    def next_pause(self, now: float) -> float | None:
        """The pause before the next attempt, or None when the time is up."""
        if self._deadline is None:
            self._deadline = now + self._retry_for
        left = self._deadline - now
        if left <= 0:
            return None
        pause = min(self._delay, left)
        self._delay = min(self._delay * 2, 2.0)
        return pause
