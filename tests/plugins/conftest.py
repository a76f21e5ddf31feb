"""One PostgreSQL server for the durable-run tests of the whole session.

``initdb`` and a server start cost seconds on a loaded machine; the DBOS tests (chaos,
delegation, idempotent re-runs, compaction) share this one server, each test in its own
database.  It listens on loopback TCP too: DBOS waits out a restart of a server it reaches
over TCP (the chaos tests restart it; see ``_postgres_server``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _postgres_server import PostgresServer, postgres_server


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresServer]:
    with postgres_server(tcp=True) as running:
        yield running
