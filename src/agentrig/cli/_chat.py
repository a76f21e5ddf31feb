"""``agentrig chat -c FILE [-a AGENT] [--session ID]``: an interactive, streaming chat.

Each line read from stdin is one run of the agent; its answer streams to stdout as it
arrives, tool activity goes to stderr.  ``/exit`` or end of input ends the chat.  With
``--session ID`` the chat continues a stored session when the agent has a session store
and the session exists, else it starts a new session with that id.

Exit codes: 0 ok, 1 at least one turn failed (each failure is reported on stderr and the
chat goes on), 2 usage or configuration errors.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

from agentrig.cli._common import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    Subparsers,
    UsageError,
    prompt_text,
)
from agentrig.cli._run import (
    CompositionError,
    add_cli_tools,
    add_common_arguments,
    choose_agent,
    load_composition,
    open_agent_runtime,
    report_failure,
    report_hooks,
    stream_turn,
)
from agentrig.ids import AgentId, SessionId
from agentrig.session import SESSION_STORES

if TYPE_CHECKING:
    import anyio.abc
    import anyio.from_thread

    from agentrig.agent import Agent
    from agentrig.kernel import LoadedConfig, Runtime

__all__ = ["register", "run"]

EXIT_COMMAND = "/exit"

_HELP = """\
Chat with AGENT of FILE: every line you type is one turn; the answer streams as it
arrives.  Type /exit (or end the input, Ctrl-D) to leave.

--session ID continues the stored session ID when the agent has a session store and the
session exists; otherwise a new session is started under that id.  Exit codes: 0 ok,
1 a turn failed, 2 usage or configuration error.
"""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "chat",
        help="chat with an agent interactively (streaming)",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common_arguments(parser)
    parser.add_argument(
        "--session",
        metavar="ID",
        help="continue (or start) the session ID",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import anyio

    try:
        loaded = load_composition(
            args.config,
            strict_plugins=args.strict_plugins,
            claude_settings=args.claude_settings,
        )
    except CompositionError as exc:
        exc.report("chat", sys.stderr)
        return EXIT_USAGE
    agent_id = choose_agent(loaded, args.agent)
    loaded = add_cli_tools(loaded, agent_id, args.tools)
    if args.session is not None:
        from agentrig.errors import InvalidIdError
        from agentrig.ids import session_id

        try:
            session_id(args.session)
        except InvalidIdError as exc:
            raise UsageError(str(exc)) from None
    code: int = anyio.run(_chat, loaded, agent_id, args.session)
    return code


async def _attach(rt: Runtime, agent_id: AgentId, session: SessionId | None, err: IO[str]) -> Agent:
    """The agent to chat with: the configured one, or the one bound to ``session``."""
    if session is None:
        return rt.agent(agent_id)
    config = rt.config.agents[agent_id]
    # The runtime created the configured agent with a fresh session; hand its name over.
    await rt.agents.dispose(agent_id)
    if config.session_store is not None:
        store = rt.catalog(SESSION_STORES).require(config.session_store)
        if await store.exists(session):
            agent = await rt.agents.resume(session, agent_id=agent_id)
            report = agent.load_report
            turns = sum(1 for e in agent.session.events if e.type == "turn/start")
            err.write(f"resumed session {session} ({turns} earlier turn(s))\n")
            if report is not None and report.damaged:
                err.write(f"warning: the stored session was damaged: {report.detail}\n")
            if agent.cut_off is not None:
                err.write(f"note: {agent.cut_off.describe()}\n")
            return agent
    return await rt.agents.create(agent_id, session_id=session)


async def _chat(loaded: LoadedConfig, agent_id: AgentId, session: SessionId | None) -> int:
    out, err = sys.stdout, sys.stderr
    interactive = sys.stdin.isatty()
    failed = False
    try:
        async with (
            open_agent_runtime(loaded, command="chat", err=err) as rt,
            _LineReader() as lines,
        ):
            try:
                agent = await _attach(rt, agent_id, session, err)
            except Exception as exc:
                report_failure("chat", exc, err)
                return EXIT_FAILURE
            if interactive:
                err.write(
                    f"agentrig chat: agent {agent.id}, session {agent.session_id} "
                    f"-- {EXIT_COMMAND} or Ctrl-D to leave\n"
                )
            while True:
                if interactive:
                    err.write("> ")
                    err.flush()
                line = await lines.next()
                if line is None:
                    break
                prompt = line.strip()
                if prompt == EXIT_COMMAND:
                    break
                if not prompt:
                    continue
                try:
                    report_hooks(await stream_turn(agent, prompt, out=out, err=err), err)
                except Exception as exc:
                    failed = True
                    report_failure("chat", exc, err)
    except CompositionError as exc:
        exc.report("chat", err)
        return EXIT_USAGE
    return EXIT_FAILURE if failed else EXIT_OK


def _stdin_lines() -> Callable[[], str | bytes]:
    """A function returning the next line of stdin (empty at its end).

    A real stdin is read with ``os.read`` on its descriptor, outside Python's buffered
    reader: a daemon thread blocked inside that reader holds its lock, and the interpreter
    aborts if it has to take the lock at exit.  A stdin object without a descriptor (a test's
    ``StringIO``) is read line by line, as bytes when it has a binary buffer.
    """
    import io
    import os

    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        binary = getattr(sys.stdin, "buffer", None)
        return binary.readline if binary is not None else sys.stdin.readline
    pending = bytearray()

    def next_line() -> bytes:
        while True:
            end = pending.find(b"\n")
            if end >= 0:
                line = bytes(pending[: end + 1])
                del pending[: end + 1]
                return line
            chunk = os.read(fd, 65536)
            if not chunk:
                line = bytes(pending)
                pending.clear()
                return line
            pending.extend(chunk)

    return next_line


class _LineReader:
    """Lines of stdin, read by a daemon thread so a blocked read never holds the exit.

    Lines are read as bytes (when stdin has a binary buffer) and decoded here, strictly:
    a line that is not UTF-8 is a usage error before it becomes a turn.
    """

    def __init__(self) -> None:
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._receive: anyio.abc.ObjectReceiveStream[str | bytes | None] | None = None

    async def __aenter__(self) -> _LineReader:
        import anyio
        import anyio.from_thread

        send, receive = anyio.create_memory_object_stream[str | bytes | None](1)
        portal = anyio.from_thread.BlockingPortal()
        await portal.__aenter__()
        self._portal, self._receive = portal, receive
        next_line = _stdin_lines()

        def read() -> None:
            try:
                while True:
                    line = next_line()
                    portal.call(send.send, line or None)
                    if not line:
                        return
            except Exception:  # the chat ended first (portal closed): nothing to deliver
                return

        threading.Thread(target=read, name="agentrig-chat-stdin", daemon=True).start()
        return self

    async def next(self) -> str | None:
        """The next line, or None at end of input; :class:`UsageError` if it is not UTF-8."""
        import anyio

        assert self._receive is not None
        try:
            line = await self._receive.receive()
        except anyio.EndOfStream:
            return None
        return None if line is None else prompt_text(line, "stdin")

    async def __aexit__(self, *exc: object) -> None:
        if self._receive is not None:
            await self._receive.aclose()
        if self._portal is not None:
            await self._portal.__aexit__(None, None, None)
