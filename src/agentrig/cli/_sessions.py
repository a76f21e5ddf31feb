"""``agentrig sessions list | search TEXT | show ID | export ID | compact ID``: the stored
sessions of a composition.

Reads the session stores FILE configures (``[session_stores.*]``) and nothing else: the
runtime is composed without providers, tools or agents, so no model key is needed and no
tool code runs.  ``show`` prints the transcript as text, then the session's place in a
delegation tree (the parent that delegated to it, the sub-agent sessions it started);
``search`` finds the sessions whose user, assistant or steering messages contain TEXT
(case-insensitively), newest first, with the lines that matched; ``export`` writes it as text,
Markdown or JSON (every event, as stored, plus the session's total usage).  ``compact``
is the one action that composes the agents too: it resumes the session with its agent and
compacts it (the summary model is called), appending a ``context/compaction`` event.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from agentrig.cli._common import EXIT_OK, EXIT_USAGE, Subparsers, UsageError

if TYPE_CHECKING:
    from agentrig.kernel import LoadedConfig, Runtime
    from agentrig.session import SessionStore

__all__ = ["register"]

#: what a sessions command composes: the stores (with their sealers and credentials) only
_SKIPPED_STEPS = ("compose-providers", "compose-tools", "compose-agents")


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "sessions",
        help="list stored sessions, show or export one (text, markdown, json)",
        description="List the sessions in FILE's session stores; show or export one.",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", dest="action")
    listing = actions.add_parser("list", help="one line per stored session")
    search = actions.add_parser(
        "search", help="find the sessions whose messages contain TEXT (newest first)"
    )
    show = actions.add_parser("show", help="print a session's transcript")
    export = actions.add_parser("export", help="write a session's transcript")
    compact = actions.add_parser(
        "compact", help="summarise the older part of a session now (calls the agent's model)"
    )
    for action in (listing, search, show, export, compact):
        action.add_argument(
            "-c", "--config", metavar="FILE", required=True, help="the composition file"
        )
    for action in (listing, search, show, export):  # compact: the agent's own store
        action.add_argument(
            "--store", metavar="ID", help="only this [session_stores.<ID>] (default: all)"
        )
    listing.add_argument("--json", action="store_true", help="print a JSON array")
    search.add_argument("text", metavar="TEXT", help="the words to look for (case-insensitive)")
    search.add_argument("--json", action="store_true", help="print a JSON array")
    search.add_argument(
        "-n", "--limit", type=int, default=10, metavar="N", help="at most N sessions (10)"
    )
    for action in (show, export, compact):
        action.add_argument("session", metavar="ID", help="the session id (ses_...)")
    compact.add_argument(
        "-a",
        "--agent",
        metavar="AGENT",
        help="the agent the session belongs to (default: the only one)",
    )
    compact.add_argument(
        "--instructions", metavar="TEXT", help="what the summary should keep or focus on"
    )
    export.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="markdown",
        help="text, markdown (default) or json (every event as stored)",
    )
    export.add_argument("-o", "--output", metavar="PATH", help="write to PATH instead of stdout")
    compact.set_defaults(handler=_compact)
    listing.set_defaults(handler=_list)
    search.set_defaults(handler=_search)
    show.set_defaults(handler=_show, format="text", output=None, tree=True)
    export.set_defaults(handler=_show, tree=False)
    parser.set_defaults(handler=lambda args: _missing_action(parser))


def _missing_action(parser: argparse.ArgumentParser) -> int:
    raise UsageError(
        "choose an action: list, search TEXT, show ID, export ID or compact ID (see --help)",
        code="cli.no_action",
    )


def _load(args: argparse.Namespace, *, stores_needed: bool = True) -> LoadedConfig:
    """FILE's composition for a store command (``stores_needed``: refuse one without a
    session store here; ``agentrig migrate`` also serves the journal and checks later)."""
    import attrs

    from agentrig.cli._run import load_composition

    loaded = load_composition(args.config)
    stores = loaded.config.session_stores
    source = loaded.source or args.config
    if not stores and stores_needed:
        raise UsageError(
            f"{source} configures no session store, so no session was kept; add "
            "[session_stores.<id>] and name it as session_store in [agents.<name>]",
            code="cli.no_session_store",
        )
    if args.store is not None and args.store not in stores:
        raise UsageError(
            f"{source} has no session store {args.store!r} (stores: {', '.join(sorted(stores))})",
            code="cli.unknown_store",
        )
    config = loaded.config
    plugins = config.plugins.model_copy(
        update={"disabled": (*config.plugins.disabled, *_SKIPPED_STEPS)}
    )
    return attrs.evolve(loaded, config=config.model_copy(update={"plugins": plugins}))


def _stores(rt: Runtime, only: str | None) -> list[tuple[str, SessionStore]]:
    from agentrig.session import SESSION_STORES

    catalog = rt.catalog(SESSION_STORES)
    return [(sid, catalog.require(sid)) for sid in sorted(catalog.ids()) if only in (None, sid)]


def _with_stores(args: argparse.Namespace, work: Any, *, stores_needed: bool = True) -> int:
    import anyio

    from agentrig.cli._run import CompositionError, open_agent_runtime

    async def main(loaded: LoadedConfig) -> int:
        async with open_agent_runtime(loaded, command="sessions") as rt:
            code: int = await work(rt, _stores(rt, args.store))
            return code

    try:
        result: int = anyio.run(main, _load(args, stores_needed=stores_needed))
    except CompositionError as exc:  # each problem one line, as run and chat print them
        exc.report("sessions", sys.stderr)
        return EXIT_USAGE
    return result


def _list(args: argparse.Namespace) -> int:
    async def work(rt: Runtime, stores: list[tuple[str, SessionStore]]) -> int:
        rows = []
        for sid, store in stores:
            for session in await store.list_sessions():
                report = await store.load(session)
                rows.append(_row(sid, session, report))
        rows.sort(key=lambda r: r["updated"] or 0.0, reverse=True)
        if args.json:
            json.dump(rows, sys.stdout, indent=2)
            sys.stdout.write("\n")
            return EXIT_OK
        if not rows:
            print("no stored sessions")
            return EXIT_OK
        print(f"{'SESSION':<40} {'STORE':<12} {'TURNS':>5} {'EVENTS':>6}  UPDATED")
        for r in rows:
            updated = _when(r["updated"])
            print(
                f"{r['session']:<40} {r['store']:<12} {r['turns']:>5} {r['events']:>6}  {updated}"
            )
        return EXIT_OK

    return _with_stores(args, work)


def _search(args: argparse.Namespace) -> int:
    wanted = args.text.casefold()
    if not wanted.strip():
        raise UsageError("give the TEXT to look for", code="cli.empty_search")
    if args.limit < 1:
        raise UsageError(f"--limit {args.limit}: give 1 or more", code="cli.limit")

    async def work(rt: Runtime, stores: list[tuple[str, SessionStore]]) -> int:
        found = []
        for sid, store in stores:
            for session in await store.list_sessions():
                report = await store.load(session)
                matches = [
                    _snippet(who, text, wanted)
                    for who, text in _said(report.events)
                    if wanted in text.casefold()
                ]
                if matches:
                    found.append({**_row(sid, session, report), "matches": matches})
        found.sort(key=lambda r: r["updated"] or 0.0, reverse=True)
        found = found[: args.limit]
        if args.json:
            json.dump(found, sys.stdout, indent=2, ensure_ascii=False)
            sys.stdout.write("\n")
        elif not found:
            print(f"no stored session mentions {args.text!r}")
        for r in [] if args.json else found:
            print(f"{r['session']}  {r['store']}  {_when(r['updated'])}")
            for line in r["matches"]:
                print(f"  {line}")
        return EXIT_OK

    return _with_stores(args, work)


def _said(events: Any) -> list[tuple[str, str]]:
    """The messages of a session as ``(who, text)`` (tool traffic left out)."""
    lines = []
    for e in events:
        kind = e.data.type
        if kind == "user/message":
            who = "user"
        elif kind == "assistant/message":
            who = "assistant"
        elif kind == "steering/message":
            who = "steering"
        else:
            continue
        text = " ".join(e.data.message.text.split())
        if text:
            lines.append((who, text))
    return lines


def _snippet(who: str, text: str, wanted: str, width: int = 100) -> str:
    """``who: text``, the text cut to about ``width`` characters around the first match."""
    if len(text) <= width:
        return f"{who}: {text}"
    at = text.casefold().find(wanted)
    start = max(0, at - width // 3)
    more = "..." if start + width < len(text) else ""
    return f"{who}: {'...' if start else ''}{text[start : start + width]}{more}"


def _row(store: str, session: str, report: Any) -> dict[str, Any]:
    events = report.events
    return {
        "session": session,
        "store": store,
        "turns": sum(1 for e in events if e.data.type == "turn/start"),
        "events": len(events),
        "updated": events[-1].time if events else None,
        "damaged": report.detail if report.damaged else None,
    }


def _when(time: float | None) -> str:
    import datetime

    if time is None:
        return "-"
    moment = datetime.datetime.fromtimestamp(time, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _show(args: argparse.Namespace) -> int:
    from agentrig.cli._transcript import render
    from agentrig.errors import InvalidIdError
    from agentrig.ids import session_id

    try:
        session_id(args.session)
    except InvalidIdError as exc:
        raise UsageError(str(exc), code="cli.session_id") from None

    async def work(rt: Runtime, stores: list[tuple[str, SessionStore]]) -> int:
        found = [(sid, store) for sid, store in stores if await store.exists(args.session)]
        if not found:
            known = [s for _, store in stores for s in await store.list_sessions()]
            raise _unknown(args.session, [sid for sid, _ in stores], known)
        if len(found) > 1:
            names = ", ".join(sid for sid, _ in found)
            raise UsageError(
                f"session {args.session} is in several stores ({names}); choose one with --store",
                code="cli.ambiguous_session",
            )
        sid, store = found[0]
        report = await store.load(args.session)
        damaged = (report.detail or "") if report.damaged else ""
        text = render(
            args.session, sid, report.events, args.format, damaged=damaged, window=_window(rt)
        )
        if args.tree:
            text += await _tree(args.session, report.events, stores)
        if args.output is None:
            sys.stdout.write(text)
        else:
            _write(args.output, text)
        return EXIT_OK

    return _with_stores(args, work)


async def _tree(session: str, events: Any, stores: list[tuple[str, SessionStore]]) -> str:
    """The lines saying where ``session`` sits in a delegation tree ("" when nowhere)."""
    from agentrig.session import SessionLineage

    def lineage_of(log: Any) -> SessionLineage | None:
        # the last one: a handed-off session's log starts with a copy of its parent's
        found = [e.data for e in log if isinstance(e.data, SessionLineage)]
        return found[-1] if found else None

    lines: list[str] = []
    own = lineage_of(events)
    if own is not None and own.origin in ("delegated", "handoff"):
        how = "delegated by" if own.origin == "delegated" else "handed the conversation by"
        lines.append(
            f"{how} agent {own.parent_agent} (session {own.parent_session}) as "
            f"{own.configured_as}, depth {own.depth}"
        )
    children: list[str] = []
    for store_id, store in stores:
        for other in await store.list_sessions():
            if other == session:
                continue
            lineage = lineage_of((await store.load(other)).events)
            if lineage is not None and lineage.parent_session == session:
                mode = " handoff" if lineage.origin == "handoff" else ""
                children.append(f"  {other}  {lineage.configured_as}{mode} ({store_id})")
    if children:
        lines.append(f"sub-agent sessions ({len(children)}):")
        lines.extend(sorted(children))
    return "".join(f"{line}\n" for line in ["", *lines]) if lines else ""


def _compact(args: argparse.Namespace) -> int:
    """Resume the session with its agent and compact it now."""
    import anyio

    from agentrig.agent import agent_configs
    from agentrig.cli._run import (
        CompositionError,
        choose_agent,
        load_composition,
        open_agent_runtime,
        report_failure,
    )
    from agentrig.cli._transcript import compaction_line

    try:
        loaded = load_composition(args.config)
    except CompositionError as exc:
        exc.report("sessions", sys.stderr)
        return EXIT_USAGE
    agent_id = choose_agent(loaded, args.agent)
    store_id = agent_configs(loaded)[agent_id].session_store

    async def main() -> int:
        from agentrig.session import SESSION_STORES

        async with open_agent_runtime(loaded, command="sessions") as rt:
            if store_id is None or not await rt.catalog(SESSION_STORES).require(store_id).exists(
                args.session
            ):
                where = f"store {store_id}" if store_id else "no session store"
                raise UsageError(
                    f"no session {args.session} for agent {agent_id} ({where})",
                    code="cli.unknown_session",
                )
            await rt.agents.dispose(agent_id)  # the configured agent hands its name over
            agent = await rt.agents.resume(args.session, agent_id=agent_id)
            try:
                event = await agent.compact(args.instructions)
            except Exception as exc:
                report_failure("sessions", exc, sys.stderr)
                return 1
            print(compaction_line(event) if event is not None else "nothing to compact")
            return EXIT_OK

    try:
        result: int = anyio.run(main)
    except CompositionError as exc:
        exc.report("sessions", sys.stderr)
        return EXIT_USAGE
    return result


def _window(rt: Runtime) -> Any:
    """A model's context window, when provider packages registered model metadata (the
    sessions commands compose no providers: otherwise unknown)."""
    from agentrig.kernel import MODELS

    models = rt.services.get(MODELS)
    return models.context_window if models is not None else None


def _unknown(session: str, stores: list[str], known: list[str]) -> UsageError:
    from agentrig.errors import did_you_mean

    hint = did_you_mean(session, known, show=str)
    where = ", ".join(stores)
    return UsageError(
        f"no session {session} in store(s) {where}{hint} ('agentrig sessions list' shows them)",
        code="cli.unknown_session",
    )


def _write(path: str, text: str) -> None:
    from pathlib import Path

    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}", code="cli.output") from None
