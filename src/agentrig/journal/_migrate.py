"""Rewriting a journal's records at the current version: what a journal offers
``agentrig migrate``.

A journal reads older records as they are (migrating them in memory); rewriting them is a
separate, explicit step, as for the session stores.  A journal that can rewrite implements
:class:`MigratableJournal`.  The report counts record versions per run; the codec is a
parameter so a backend's rewrite can be exercised across a version change before the
journal's schema has one.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agentrig.journal._records import JOURNAL_RECORD_CODEC, JournalRecordType, dump_record
from agentrig.schemas import VersionedJson
from agentrig.session import MigrationReport, count_versions

__all__ = ["MigratableJournal", "RecordCodec", "journal_report", "rewritten_record"]

RecordCodec = VersionedJson[JournalRecordType]
"""How a journal's records are stored: :data:`~agentrig.journal.JOURNAL_RECORD_CODEC`."""


@runtime_checkable
class MigratableJournal(Protocol):
    """A journal that can rewrite its older records at the current version."""

    async def migration_report(self) -> MigrationReport:
        """What :meth:`migrate` would rewrite, per run; changes nothing."""
        ...

    async def migrate(self, *, backup: Path | None = None) -> MigrationReport:
        """Keep a copy of the old data (at ``backup``, or the journal's default place), then
        rewrite every older record at the current version in one transaction.

        Refuses (:class:`~agentrig.schemas.SchemaTooNewError`) before changing anything when
        a record is newer than this code.  Interrupted, it leaves the journal as it was, and
        running it again completes.
        """
        ...


def journal_report(
    rows: Iterable[tuple[Any, str | bytes]], codec: RecordCodec = JOURNAL_RECORD_CODEC
) -> MigrationReport:
    """Tally ``(run_id, body)`` rows by run: how many records are older, or newer."""
    by_run: dict[str, list[int | None]] = {}
    for run_id, body in rows:
        version = codec.version_of(body) if isinstance(body, str | bytes) else None
        by_run.setdefault(str(run_id), []).append(version)
    return MigrationReport(
        tuple(
            count_versions(run, versions, current=codec.version)
            for run, versions in sorted(by_run.items())
        ),
        schema=codec.schema,
        current=codec.version,
        unit="run",
    )


def rewritten_record(body: str | bytes, codec: RecordCodec = JOURNAL_RECORD_CODEC) -> str | None:
    """The body of an older record at the current version; None to keep it as it is (it is
    current, or damaged -- a damaged record is reported when read, never dropped here)."""
    version = codec.version_of(body) if isinstance(body, str | bytes) else None
    if version is None or version >= codec.version:
        return None
    try:
        return dump_record(codec.parse(body), codec)
    except ValueError:
        return None
