"""Rewriting a session store's events at the current version: what a store offers
``agentrig migrate``.

A store reads older events as they are (migrating them in memory); rewriting them is a
separate, explicit step.  A store that can rewrite implements :class:`MigratableStore`: a
dry :meth:`~MigratableStore.migration_report` (what would change, per session) and
:meth:`~MigratableStore.migrate` (back up, then rewrite; safe to run again after a crash).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol, runtime_checkable

import attrs

from agentrig.schemas import SCHEMAS, SchemaTooNewError
from agentrig.session._versions import SESSION_EVENT_SCHEMA, SESSION_EVENT_VERSION

__all__ = [
    "MigratableStore",
    "MigrationReport",
    "SessionVersions",
    "count_versions",
    "refuse_newer",
]


@attrs.frozen(slots=True)
class SessionVersions:
    """The stored versions of one session's events."""

    session_id: str
    records: int
    #: events older than the current version (what a migration rewrites)
    outdated: int
    #: events newer than this code reads (a migration refuses the store)
    newer: int = 0
    #: records whose version cannot be read (damaged): left as they are
    unreadable: int = 0
    #: the newest version seen (0 when none was readable)
    newest: int = 0


def count_versions(
    session_id: str, versions: Iterable[int | None], *, current: int = SESSION_EVENT_VERSION
) -> SessionVersions:
    """Tally one session's record versions (None: unreadable) against ``current``.

    Other stores of versioned records (the execution journal, by run) tally theirs too.
    """
    records = outdated = newer = unreadable = newest = 0
    for version in versions:
        records += 1
        if version is None:
            unreadable += 1
            continue
        newest = max(newest, version)
        if version < current:
            outdated += 1
        elif version > current:
            newer += 1
    return SessionVersions(session_id, records, outdated, newer, unreadable, newest)


def refuse_newer(report: MigrationReport, where: str) -> None:
    """Raise :class:`~agentrig.schemas.SchemaTooNewError` when ``report`` found events newer
    than this code: a migration changes nothing then."""
    if report.newer:
        found = max(s.newest for s in report.newer)
        info = SCHEMAS.info(report.schema)
        names = ", ".join(s.session_id for s in report.newer)
        raise SchemaTooNewError(
            report.schema, found, report.current, f"{info.upgrade} (in {where}: {names})"
        )


@attrs.frozen(slots=True)
class MigrationReport:
    """What a store holds (dry run) or what a migration rewrote (``applied``)."""

    sessions: tuple[SessionVersions, ...]
    applied: bool = False
    #: where the old data was kept (a directory, a file, a table)
    backup: str | None = None
    schema: str = SESSION_EVENT_SCHEMA
    current: int = SESSION_EVENT_VERSION
    #: what one entry of ``sessions`` is: a session, or a run (the execution journal)
    unit: str = "session"

    def done(self, backup: str | None = None) -> MigrationReport:
        """This report as the result of a migration that kept its copy at ``backup``."""
        return attrs.evolve(self, applied=True, backup=backup)

    @property
    def outdated(self) -> tuple[SessionVersions, ...]:
        """The sessions holding events older than the current version."""
        return tuple(s for s in self.sessions if s.outdated)

    @property
    def newer(self) -> tuple[SessionVersions, ...]:
        """The sessions holding events newer than this code reads."""
        return tuple(s for s in self.sessions if s.newer)

    def summary(self) -> str:
        """One line: how many events in how many sessions are (or were) older."""
        events = sum(s.outdated for s in self.sessions)
        total = sum(s.records for s in self.sessions)
        verb = "rewritten" if self.applied else "to rewrite"
        unit, record = self.unit, "event" if self.unit == "session" else "record"
        line = (
            f"{self.schema} (current version {self.current}): {len(self.sessions)} {unit}(s), "
            f"{total} {record}(s); {events} {record}(s) in {len(self.outdated)} {unit}(s) {verb}"
        )
        if self.newer:
            line += f"; {len(self.newer)} {unit}(s) hold {record}s newer than this code reads"
        if self.backup is not None:
            line += f"; backup: {self.backup}"
        return line


@runtime_checkable
class MigratableStore(Protocol):
    """A session store that can rewrite its older events at the current version."""

    async def migration_report(self) -> MigrationReport:
        """What :meth:`migrate` would rewrite; changes nothing."""
        ...

    async def migrate(self, *, backup: Path | None = None) -> MigrationReport:
        """Keep a copy of what changes (at ``backup``, or the store's default place), then
        rewrite every older event at the current version.

        Refuses (:class:`~agentrig.schemas.SchemaTooNewError`) before changing anything when
        an event is newer than this code.  A session being written is refused
        (:class:`~agentrig.session.WriterConflictError`).  Interrupted, it leaves every
        session either old or rewritten, and running it again completes the rest.
        """
        ...
