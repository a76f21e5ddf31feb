"""``agentrig migrate``: rewrite stored session events and journal records at the current
schema version.

A dry run by default: per configured session store, how many events in how many sessions
are older than the current version (and whether any is newer than this code), and the same
for the execution journal's records by run.  ``--apply`` lets each store rewrite them its
own safe way -- a staged replace per file (JSONL), one transaction (SQLite, PostgreSQL) --
after keeping a copy of the old data.  Reading never needs this: older records are
migrated in memory on every load.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from agentrig.cli._common import EXIT_OK, Subparsers, UsageError

if TYPE_CHECKING:
    from agentrig.kernel import Runtime
    from agentrig.session import MigrationReport, SessionStore

__all__ = ["register"]


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "migrate",
        help="rewrite stored session events and journal records at the current schema "
        "version (dry run first)",
        description="Show, per session store FILE configures and for its execution journal "
        "(the [dbos] one), how many stored records are older than the current schema "
        "version; with --apply, keep a copy of the old data and rewrite them (a staged file "
        "replace for jsonl, one transaction for sqlite and postgres).  Safe to run again "
        "after an interruption.",
    )
    parser.add_argument("-c", "--config", metavar="FILE", required=True, help="the composition")
    parser.add_argument("--store", metavar="ID", help="only this [session_stores.<ID>]")
    parser.add_argument(
        "--journal", action="store_true", help="only the execution journal (no session store)"
    )
    parser.add_argument(
        "--apply", action="store_true", help="rewrite (default: a dry run that changes nothing)"
    )
    parser.add_argument(
        "--backup",
        metavar="PATH",
        help="where the copy of the old data goes (one store, or --journal, only; default: "
        "beside the store -- <directory>.pre-migrate, <database>.pre-migrate, or a "
        "_pre_migrate table)",
    )
    parser.set_defaults(handler=run)


def _print(name: str, report: MigrationReport) -> None:
    print(f"{name}: {report.summary()}")
    record = "event" if report.unit == "session" else "record"
    for session in report.sessions:
        if session.outdated or session.newer:
            newer = f", {session.newer} newer than this code" if session.newer else ""
            done = "rewritten" if report.applied else "older"
            print(
                f"  {session.session_id}: {session.outdated} of {session.records} {record}(s) "
                f"{done}{newer}"
            )


async def _journal(rt: Runtime, args: argparse.Namespace, backup: Path | None) -> int:
    """Report or migrate the runtime's journal; how many runs hold older records."""
    from agentrig.journal import JOURNAL, MigratableJournal

    listener = rt.services.get(JOURNAL)
    if listener is None:
        if args.journal:
            raise UsageError(
                f"--journal: {args.config} configures no execution journal (it comes with [dbos])",
                code="cli.no_journal",
            )
        if not rt.config.session_stores:
            raise UsageError(
                f"{args.config} configures no session store and no execution journal: "
                "nothing to migrate",
                code="cli.no_session_store",
            )
        return 0
    journal = listener.journal
    kind = type(journal).__name__
    if not isinstance(journal, MigratableJournal):
        print(f"journal ({kind}): cannot be rewritten in place; it reads older records as they are")
        return 0
    if args.apply:
        report = await journal.migrate(backup=backup)
    else:
        report = await journal.migration_report()
    _print(f"journal ({kind})", report)
    return 0 if args.apply else len(report.outdated)


def run(args: argparse.Namespace) -> int:
    from agentrig.cli._sessions import _load, _with_stores
    from agentrig.session import MigratableStore

    loaded = _load(args, stores_needed=False)
    kinds = {str(sid): str(spec.kind) for sid, spec in loaded.config.session_stores.items()}
    if args.journal and args.store is not None:
        raise UsageError("--journal and --store each choose one store: give one", code="cli.usage")
    chosen = [] if args.journal else [sid for sid in kinds if args.store in (None, sid)]
    # the journal too when nothing narrows the command to one session store
    journal = args.journal or (args.store is None and args.backup is None)
    if args.backup is not None and not args.journal and len(chosen) != 1:
        raise UsageError(
            f"--backup names one place, but {len(chosen)} session stores are configured; "
            "choose one with --store ID",
            code="cli.backup_needs_one_store",
        )
    backup = None if args.backup is None else Path(args.backup).expanduser().resolve()

    async def work(rt: Runtime, stores: list[tuple[str, SessionStore]]) -> int:
        pending = 0
        for sid, store in stores if not args.journal else []:
            if not isinstance(store, MigratableStore):
                print(
                    f"store {sid} ({kinds[sid]}): cannot be rewritten in place (its plugin "
                    "offers no migration); it reads older events as they are"
                )
                continue
            if args.apply:
                report = await store.migrate(backup=backup)
            else:
                report = await store.migration_report()
                pending += len(report.outdated)
            _print(f"store {sid} ({kinds[sid]})", report)
        if journal:
            pending += await _journal(rt, args, backup)
        elif args.store is None:
            print("journal: left out (--backup names one store's copy; migrate it with --journal)")
        if not args.apply:
            hint = "; run again with --apply to rewrite them" if pending else ""
            print(f"dry run: nothing was changed{hint}")
        return EXIT_OK

    return _with_stores(args, work, stores_needed=False)


def _doctor_report(name: str, report: MigrationReport, apply: str) -> tuple[list[str], int]:
    """Doctor's lines about one store's (or the journal's) report, and its problems."""
    record = "event" if report.unit == "session" else "record"
    lines: list[str] = []
    problems = 0
    if report.newer:
        problems += 1
        names = ", ".join(s.session_id for s in report.newer)
        lines.append(
            f"  NEWER {name}: {report.unit}(s) {names} hold {report.schema} {record}s "
            f"newer than version {report.current}; upgrade agentrig to read them"
        )
    if report.outdated:
        count = sum(s.outdated for s in report.outdated)
        lines.append(
            f"  MIGRATE {name}: {count} {record}(s) in {len(report.outdated)} "
            f"{report.unit}(s) are older than {report.schema} version {report.current} "
            f"(read as they are); '{apply}' rewrites them"
        )
    return lines, problems


def doctor_lines(config: str) -> tuple[list[str], int]:
    """``agentrig doctor``'s lines about FILE's session stores and execution journal, and
    how many are problems.

    A store holding older records is a note (it reads them; ``agentrig migrate`` rewrites
    them); one holding records newer than this code, or that cannot be read, is a problem.
    """
    import anyio

    from agentrig.cli._run import load_composition, open_agent_runtime
    from agentrig.cli._sessions import _load, _stores
    from agentrig.errors import AgentrigError
    from agentrig.journal import JOURNAL, MigratableJournal
    from agentrig.session import MigratableStore

    composition = load_composition(config)
    if not composition.config.session_stores and not composition.sections:
        return [], 0  # no store, and no plugin table that could bring a journal
    loaded = _load(argparse.Namespace(config=config, store=None), stores_needed=False)
    lines: list[str] = []
    problems = 0

    async def main() -> None:
        nonlocal problems
        async with open_agent_runtime(loaded, command="doctor") as rt:
            checked: list[tuple[str, MigratableStore | MigratableJournal, str]] = [
                (f"store {sid}", store, f"agentrig migrate -c {config} --apply")
                for sid, store in _stores(rt, None)
                if isinstance(store, MigratableStore)
            ]
            listener = rt.services.get(JOURNAL)
            if listener is not None and isinstance(listener.journal, MigratableJournal):
                apply = f"agentrig migrate -c {config} --journal --apply"
                checked.append(("journal", listener.journal, apply))
            for name, store, apply in checked:
                try:
                    report = await store.migration_report()
                except AgentrigError as exc:
                    problems += 1
                    shown = name.removeprefix("store ")
                    lines.append(f"  STORE {shown}: cannot be checked: [{exc.code}] {exc}")
                    continue
                found, bad = _doctor_report(name, report, apply)
                lines.extend(found)
                problems += bad

    anyio.run(main)
    return lines, problems
