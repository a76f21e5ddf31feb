"""A worker keeps its executor id's lease across a restart of its PostgreSQL server.

The lease is a session advisory lock; a server restart ends every session, so the lock is
gone while the worker lives on -- and other workers' watchers would take the live worker
for gone and put its runs back on their queues while it still executes them, and a second
worker with its id could start.  Every watcher look renews its own lease first.
"""

from __future__ import annotations

import os

import pytest
from _postgres_server import PostgresServer
from agentrig_dbos._executors import lease_for

pytestmark = [pytest.mark.integration]


def test_the_lease_is_taken_again_after_the_server_restarted(pg_cluster: PostgresServer) -> None:
    dsn = pg_cluster.create_database(f"lease{os.getpid()}")
    mine, other = lease_for(dsn, "app", "w1"), lease_for(dsn, "app", "w1")
    assert mine.acquire()
    try:
        assert not other.acquire()  # a second live worker with the id is refused
        pg_cluster.restart()  # pg_ctl restart -m immediate: the lock's session is gone
        assert mine.renew()  # taken again
        assert not other.acquire()  # so the id is still held
        assert mine.renew()  # and holding it is a no-op
    finally:
        mine.release()
    assert other.acquire()
    other.release()
