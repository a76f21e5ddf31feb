"""``agentrig migrate``: rewrite stored session events at the current schema version.

A dry run by default: per configured session store, how many events in how many sessions
are older than the current version (and whether any is newer than this code).  ``--apply``
lets each store rewrite them its own safe way -- a staged replace per file (JSONL), one
transaction (SQLite, PostgreSQL) -- after keeping a copy of the old data.  Reading never
needs this: older events are migrated in memory on every load.
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
        help="rewrite stored session events at the current schema version (dry run first)",
        description="Show, per session store FILE configures, how many stored events are "
        "older than the current schema version; with --apply, keep a copy of the old data "
        "and rewrite them (a staged file replace for jsonl, one transaction for sqlite and "
        "postgres).  Safe to run again after an interruption.",
    )
    parser.add_argument("-c", "--config", metavar="FILE", required=True, help="the composition")
    parser.add_argument("--store", metavar="ID", help="only this [session_stores.<ID>]")
    parser.add_argument(
        "--apply", action="store_true", help="rewrite (default: a dry run that changes nothing)"
    )
    parser.add_argument(
        "--backup",
        metavar="PATH",
        help="where the copy of the old data goes (one store only; default: beside the "
        "store -- <directory>.pre-migrate, <database>.pre-migrate, or a _pre_migrate table)",
    )
    parser.set_defaults(handler=run)


def _print(sid: str, kind: str, report: MigrationReport) -> None:
    print(f"store {sid} ({kind}): {report.summary()}")
    for session in report.sessions:
        if session.outdated or session.newer:
            newer = f", {session.newer} newer than this code" if session.newer else ""
            done = "rewritten" if report.applied else "older"
            print(
                f"  {session.session_id}: {session.outdated} of {session.records} event(s) "
                f"{done}{newer}"
            )


def run(args: argparse.Namespace) -> int:
    from agentrig.cli._sessions import _load, _with_stores
    from agentrig.session import MigratableStore

    loaded = _load(args)
    kinds = {str(sid): str(spec.kind) for sid, spec in loaded.config.session_stores.items()}
    chosen = [sid for sid in kinds if args.store in (None, sid)]
    if args.backup is not None and len(chosen) != 1:
        raise UsageError(
            f"--backup names one place, but {len(chosen)} session stores are configured; "
            "choose one with --store ID",
            code="cli.backup_needs_one_store",
        )
    backup = None if args.backup is None else Path(args.backup).expanduser().resolve()

    async def work(rt: Runtime, stores: list[tuple[str, SessionStore]]) -> int:
        pending = 0
        for sid, store in stores:
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
            _print(sid, kinds[sid], report)
        if not args.apply:
            hint = "; run again with --apply to rewrite them" if pending else ""
            print(f"dry run: nothing was changed{hint}")
        return EXIT_OK

    return _with_stores(args, work)


def doctor_lines(config: str) -> tuple[list[str], int]:
    """``agentrig doctor``'s lines about FILE's session stores, and how many are problems.

    A store holding older events is a note (it reads them; ``agentrig migrate`` rewrites
    them); one holding events newer than this code, or that cannot be read, is a problem.
    """
    import anyio

    from agentrig.cli._run import load_composition, open_agent_runtime
    from agentrig.cli._sessions import _load, _stores
    from agentrig.errors import AgentrigError
    from agentrig.session import MigratableStore

    if not load_composition(config).config.session_stores:
        return [], 0
    loaded = _load(argparse.Namespace(config=config, store=None))
    lines: list[str] = []
    problems = 0

    async def main() -> None:
        nonlocal problems
        async with open_agent_runtime(loaded, command="doctor") as rt:
            for sid, store in _stores(rt, None):
                if not isinstance(store, MigratableStore):
                    continue
                try:
                    report = await store.migration_report()
                except AgentrigError as exc:
                    problems += 1
                    lines.append(f"  STORE {sid}: cannot be checked: [{exc.code}] {exc}")
                    continue
                if report.newer:
                    problems += 1
                    names = ", ".join(s.session_id for s in report.newer)
                    lines.append(
                        f"  NEWER store {sid}: session(s) {names} hold {report.schema} events "
                        f"newer than version {report.current}; upgrade agentrig to read them"
                    )
                if report.outdated:
                    events = sum(s.outdated for s in report.outdated)
                    lines.append(
                        f"  MIGRATE store {sid}: {events} event(s) in {len(report.outdated)} "
                        f"session(s) are older than {report.schema} version {report.current} "
                        f"(read as they are); 'agentrig migrate -c {config} --apply' rewrites them"
                    )

    anyio.run(main)
    return lines, problems
