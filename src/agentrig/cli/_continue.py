"""Which conversation ``run`` and ``chat`` go on with: ``--session ID`` or ``--continue``.

``--session ID`` resumes the stored session ID when the agent has a session store holding
it, else starts a new session under that id.  ``--continue`` resumes the agent's latest
stored session -- the one with the newest event among the sessions the agent was created
with (a sub-agent's delegated sessions are not its own) -- or starts a new one when there
is none yet.
"""

from __future__ import annotations

import argparse
from typing import IO, TYPE_CHECKING

from agentrig.cli._common import UsageError, warning_line

if TYPE_CHECKING:
    from agentrig.agent import Agent
    from agentrig.ids import AgentId
    from agentrig.kernel import LoadedConfig, Runtime
    from agentrig.session import SessionStore

__all__ = ["add_session_arguments", "attach", "check_session_arguments"]


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    """``--session ID`` and ``--continue``, one or the other."""
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--session",
        metavar="ID",
        help="continue the stored session ID (or start a new session under that id)",
    )
    which.add_argument(
        "--continue",
        dest="continue_latest",
        action="store_true",
        help="continue the agent's latest stored session (needs a session store)",
    )


def check_session_arguments(
    args: argparse.Namespace, loaded: LoadedConfig, agent_id: AgentId
) -> None:
    """Refuse a malformed ``--session`` id, and ``--continue`` for an agent storing nothing."""
    if args.session is not None:
        from agentrig.errors import InvalidIdError
        from agentrig.ids import session_id

        try:
            session_id(args.session)
        except InvalidIdError as exc:
            raise UsageError(str(exc), code="cli.session_id") from None
    from agentrig.agent import agent_configs

    if args.continue_latest and agent_configs(loaded)[agent_id].session_store is None:
        raise UsageError(
            f"--continue: agent {agent_id} has no session store, so no earlier session was "
            "kept; name one as session_store in its [agents.<name>] table",
            code="cli.no_session_store",
        )


async def attach(
    rt: Runtime, agent_id: AgentId, args: argparse.Namespace, command: str, err: IO[str]
) -> Agent:
    """The agent to talk to: the configured one, or the one bound to the chosen session."""
    session: str | None = args.session
    store = _store(rt, agent_id)
    if args.continue_latest and store is not None:
        session = await _latest(store, agent_id)
        if session is None:
            err.write(f"agentrig {command}: no earlier session of agent {agent_id}: a new one\n")
    if session is None:
        return rt.agent(agent_id)
    # The runtime created the configured agent with a fresh session; hand its name over.
    await rt.agents.dispose(agent_id)
    if store is not None and await store.exists(session):
        agent = await rt.agents.resume(session, agent_id=agent_id)
        report = agent.load_report
        turns = sum(1 for e in agent.session.events if e.type == "turn/start")
        err.write(f"resumed session {session} ({turns} earlier turn(s))\n")
        if report is not None and report.damaged:
            damaged = f"the stored session was damaged: {report.detail}"
            err.write(warning_line(command, "session.damaged", damaged) + "\n")
        if agent.cut_off is not None:
            err.write(f"note: {agent.cut_off.describe()}\n")
        return agent
    return await rt.agents.create(agent_id, session_id=session)


def _store(rt: Runtime, agent_id: AgentId) -> SessionStore | None:
    from agentrig.agent import agent_configs
    from agentrig.session import SESSION_STORES

    store_id = agent_configs(rt.loaded)[agent_id].session_store
    return rt.catalog(SESSION_STORES).require(store_id) if store_id is not None else None


async def _latest(store: SessionStore, agent_id: AgentId) -> str | None:
    """The session of ``agent_id`` in ``store`` with the newest event (None: none yet)."""
    from agentrig.session import SessionLineage

    latest: tuple[float, str] | None = None
    for session in await store.list_sessions():
        events = (await store.load(session)).events
        lineage = next((e.data for e in events if isinstance(e.data, SessionLineage)), None)
        if lineage is not None and (
            lineage.origin == "delegated" or lineage.configured_as not in (None, agent_id)
        ):
            continue
        if events and (latest is None or events[-1].time > latest[0]):
            latest = (events[-1].time, session)
    return latest[1] if latest is not None else None
