"""Executor ids that cannot collide, and runs that outlive their executor.

DBOS tags every run with the executor id of the process that runs it, and a process
launched with an id takes up the runs pending under it.  Two live workers with one id would
take up each other's runs; a worker that never comes back would leave its runs pending.

* A worker holds a **lease** on its id while it runs: a session advisory lock on a
  connection of its own (a PostgreSQL system database) or an exclusive ``flock`` of
  ``executor-<id>.lock`` beside the SQLite database.  Both go with the process, however it
  ends, so a dead worker never leaves a stale lease; a second live worker with the same id
  is refused, saying so.
* A **watcher** thread of every worker looks, every few seconds, for runs pending under
  another executor id for longer than ``recover_after`` seconds.  It takes that id's lease
  itself -- so the id is proven gone and cannot come back while it acts -- and puts those
  runs back on their queues (DBOS's public ``resume_workflow``), where any worker takes them
  up from their journals.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from agentrig_dbos._errors import DurableSetupError

__all__ = ["ExecutorLease", "Watcher", "lease_for", "take"]


class ExecutorLease(Protocol):
    """Holds one executor id (blocking calls: run them in a worker thread)."""

    def acquire(self) -> bool:
        """Take the id; False when a live process holds it."""
        ...

    def release(self) -> None:
        """Give it back (idempotent)."""
        ...

    def renew(self) -> bool:
        """Hold it still: take it again when it was lost (a restarted database server ends
        the session that held it); False when another process took it meanwhile."""
        ...


class _FileLease:
    def __init__(self, directory: Path, executor: str) -> None:
        self._path = directory / f"executor-{executor}.lock"
        self._fd: int | None = None

    def acquire(self) -> bool:
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing releases the lock

    def renew(self) -> bool:
        return self._fd is not None  # a lock on an open descriptor is never lost


class _PostgresLease:
    def __init__(self, url: str, app: str, executor: str) -> None:
        self._url = url
        self._key = f"agentrig.executor:{app}:{executor}"
        self._connection: Any = None

    def acquire(self) -> bool:
        import psycopg

        connection = psycopg.connect(self._url, autocommit=True, connect_timeout=10)
        row = connection.execute(
            "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (self._key,)
        ).fetchone()
        if row is None or not row[0]:
            connection.close()
            return False
        self._connection = connection
        return True

    def release(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            # unlocked before the session closes: a backend ends after close() returns, so
            # without it another worker could still find the id held just after a release
            with contextlib.suppress(Exception):
                connection.execute(
                    "SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (self._key,)
                )
            with contextlib.suppress(Exception):
                connection.close()  # a broken session's lock went with the session

    def renew(self) -> bool:
        connection = self._connection
        if connection is not None and not connection.closed:
            try:
                connection.execute("SELECT 1")
                return True
            except Exception:  # the session is gone, and the lock with it
                pass
        self.release()
        return self.acquire()


def lease_for(url: str, app: str, executor: str) -> ExecutorLease:
    """The lease of ``executor`` for a system database URL."""
    if url.startswith(("postgresql://", "postgres://")):
        return _PostgresLease(url, app, executor)
    return _FileLease(Path(url.removeprefix("sqlite:///")).parent, executor)


def take(url: str, app: str, executor: str) -> ExecutorLease:
    """This worker's lease on ``executor``, or :class:`DurableSetupError` naming it."""
    lease = lease_for(url, app, executor)
    if not lease.acquire():
        raise DurableSetupError(
            f"executor id {executor!r} is in use by a live worker on this system database; "
            "give each worker its own --executor-id (or [dbos] executor_id)"
        )
    return lease


class Watcher:
    """The thread that puts the runs of gone executors back on their queues."""

    def __init__(
        self,
        client: Any,
        url: str,
        app: str,
        mine: str,
        recover_after: float,
        default_queue: str,
        own: ExecutorLease | None = None,
    ) -> None:
        self._client = client
        #: this worker's own lease: renewed each look (a database restart ends its session;
        #: unrenewed, other workers would take this live worker for gone)
        self._own = own
        self._url, self._app, self._mine = url, app, mine
        self._recover_after = recover_after
        self._default_queue = default_queue
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="agentrig-recovery", daemon=True)
        #: how many runs this watcher put back on their queues
        self.recovered = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        interval = min(max(self._recover_after / 2, 0.5), 5.0)
        while not self._stop.wait(interval):
            with contextlib.suppress(Exception):  # the database may be restarting: next time
                self.keep()
                self.sweep()

    def keep(self) -> None:
        """Renew this worker's own lease (taken again after the database restarted)."""
        if self._own is not None and not self._own.renew():
            raise DurableSetupError(f"executor id {self._mine!r} was taken by another worker")

    def sweep(self) -> int:
        """One look: put back the runs of every executor that is gone; how many."""
        silent_since = (time.time() - self._recover_after) * 1000
        pending = self._client.list_workflows(status="PENDING", load_input=False, load_output=False)
        by_executor: dict[str, list[Any]] = {}
        for row in pending:
            executor = row.executor_id
            if not executor or executor == self._mine:
                continue
            if (row.updated_at or row.created_at or 0) > silent_since:
                continue
            by_executor.setdefault(executor, []).append(row)
        recovered = 0
        for executor, rows in sorted(by_executor.items()):
            lease = lease_for(self._url, self._app, executor)
            if not lease.acquire():
                continue  # alive (just busy)
            try:
                for row in rows:
                    queue = row.queue_name or self._default_queue
                    self._client.resume_workflow(row.workflow_id, queue_name=queue)
                    recovered += 1
            finally:
                lease.release()
        self.recovered += recovered
        return recovered
