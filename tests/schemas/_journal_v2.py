"""A journal record schema with a version 2, to exercise ``migrate`` across a version change.

The journal's schema is still at version 1, so its rewrite path would otherwise never run:
this registry defines ``agentrig.journal.record`` versions 1 and 2 (the same shape, the step
between them the identity) and a codec writing version 2.  Run as a script it is the child
of the crash tests: ``python _journal_v2.py DATABASE BACKUP`` migrates the SQLite journal
DATABASE with it; ``python _journal_v2.py --postgres DSN`` the PostgreSQL journal at DSN,
slowly (each record's step sleeps, after saying ``rewriting`` once), to be killed midway.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio

from agentrig.journal import JOURNAL_RECORD_SCHEMA, SqliteJournal
from agentrig.journal._records import RECORD_ADAPTER
from agentrig.schemas import SchemaRegistry, VersionedJson

__all__ = ["codec_v2"]


def _slow(payload: Any) -> Any:
    if not _said:
        _said.append(True)
        print("rewriting", flush=True)
    time.sleep(0.05)
    return payload


_said: list[bool] = []


def codec_v2(*, slow: bool = False) -> VersionedJson[Any]:
    registry = SchemaRegistry()
    registry.define(JOURNAL_RECORD_SCHEMA, 1, RECORD_ADAPTER)
    registry.define(JOURNAL_RECORD_SCHEMA, 2, RECORD_ADAPTER)
    registry.add_migration(JOURNAL_RECORD_SCHEMA, 1, _slow if slow else lambda payload: payload)
    return VersionedJson(
        registry,
        JOURNAL_RECORD_SCHEMA,
        from_json=RECORD_ADAPTER.validate_json,
        from_data=RECORD_ADAPTER.validate_python,
    )


async def _main(database: Path, backup: Path) -> None:
    journal = SqliteJournal(database)
    try:
        report = await journal.migrate(backup=backup, codec=codec_v2())
    finally:
        await journal.aclose()
    print(report.summary())


async def _postgres(dsn: str) -> None:
    from agentrig_postgres import PostgresJournal

    journal = PostgresJournal(dsn)
    try:
        report = await journal.migrate(codec=codec_v2(slow=True))
    finally:
        await journal.aclose()
    print(report.summary())


if __name__ == "__main__":
    if sys.argv[1] == "--postgres":
        anyio.run(_postgres, sys.argv[2])
    else:
        anyio.run(_main, Path(sys.argv[1]), Path(sys.argv[2]))
