"""``agentrig chat -c FILE [-a AGENT] [--session ID]``: an interactive, streaming chat.

Each line read from stdin is one run of the agent; its answer streams to stdout as it
arrives (Markdown on a terminal, see ``_render``).  ``/exit`` or end of input ends the chat
(``SessionEnd`` hooks get ``reason: "prompt_input_exit"``); ``/clear`` ends the session
(``reason: "clear"``) and goes on in a fresh one (``SessionStart`` ``source: "clear"``).
Ctrl-C stops the running answer -- the turn is recorded as interrupted -- and returns to
the prompt; Ctrl-C at the prompt leaves (exit 130).  With ``--session ID`` the chat
continues a stored session when the agent has a session store and the session exists, else
it starts a new session with that id.  Approvals are asked as in ``run`` (``_approve``).

Exit codes: 0 ok, 1 at least one turn failed (each failure is reported on stderr and the
chat goes on), 2 usage or configuration errors, 3 a tool call needed approval and there
was no terminal to ask, 130 left with Ctrl-C.
"""

from __future__ import annotations

import argparse
import signal
import sys
from typing import IO, TYPE_CHECKING

from agentrig.cli._common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    Subparsers,
)
from agentrig.cli._continue import add_session_arguments, attach, check_session_arguments
from agentrig.cli._input import LineReader
from agentrig.cli._render import Renderer, make_renderer, stream_turn
from agentrig.cli._run import (
    CompositionError,
    add_cli_tools,
    add_common_arguments,
    attach_approver,
    can_ask,
    choose_agent,
    exit_for_refusals,
    load_composition,
    open_agent_runtime,
    report_failure,
    report_hooks,
)

if TYPE_CHECKING:
    import anyio

    from agentrig.agent import Agent
    from agentrig.cancel import CancelSignal
    from agentrig.ids import AgentId
    from agentrig.kernel import LoadedConfig, Runtime

__all__ = ["register", "run"]

EXIT_COMMAND = "/exit"
CLEAR_COMMAND = "/clear"
CONTEXT_COMMAND = "/context"
COMPACT_COMMAND = "/compact"

_HELP = """\
Chat with AGENT of FILE: every line you type is one turn; the answer streams as it
arrives.  Ctrl-C stops the answer and returns to the prompt.  Type /exit (or end the
input, Ctrl-D, or Ctrl-C at the prompt) to leave, /clear to start a fresh session,
/context to see how full the model's context window is, /compact [INSTRUCTIONS] to
summarise the older part of the conversation now.

--session ID continues the stored session ID when the agent has a session store and the
session exists; otherwise a new session is started under that id.  --continue continues
the agent's latest stored session.  Tool calls the rules
ask about are put to you as in 'agentrig run' (see --yes, --mode).

Exit codes: 0 ok, 1 a turn failed, 2 usage or configuration error, 3 a tool call needed
approval and there was no terminal to ask, 130 left with Ctrl-C at the prompt.
"""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "chat",
        help="chat with an agent interactively (streaming)",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common_arguments(parser)
    add_session_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import anyio

    try:
        loaded = load_composition(
            args.config,
            strict_plugins=args.strict_plugins,
            claude_settings=args.claude_settings,
            mode=args.mode,
        )
    except CompositionError as exc:
        exc.report("chat", sys.stderr)
        return EXIT_USAGE
    agent_id = choose_agent(loaded, args.agent)
    loaded = add_cli_tools(loaded, agent_id, args.tools)
    check_session_arguments(args, loaded, agent_id)
    code: int = anyio.run(_chat, loaded, agent_id, args)
    return code


async def _clear(rt: Runtime, agent: Agent) -> Agent:
    """``/clear``: end the session (``SessionEnd`` reason ``clear``) and start a fresh one."""
    agent_id = agent.id
    await rt.agents.dispose(agent_id, reason="clear")
    return await rt.agents.create(agent_id)


async def _chat(loaded: LoadedConfig, agent_id: AgentId, args: argparse.Namespace) -> int:
    import anyio

    out, err = sys.stdout, sys.stderr
    renderer = make_renderer(out, err)
    try:
        async with (
            open_agent_runtime(loaded, command="chat", err=err) as rt,
            LineReader() as lines,
        ):
            keys = _Interrupts()
            approver = attach_approver(
                rt,
                args,
                read_line=lines.next if can_ask(err) else None,
                err=err,
                renderer=renderer,
                turn_signal=lambda: keys.turn,
            )
            try:
                agent = await attach(rt, agent_id, args, "chat", err)
            except Exception as exc:
                report_failure("chat", exc, err)
                return EXIT_FAILURE
            problem: Exception | None = None
            code = EXIT_OK
            async with anyio.create_task_group() as tg:
                tg.start_soon(keys.watch)
                try:
                    code = await _converse(rt, agent, lines, renderer, keys, err)
                except Exception as exc:  # raised after the watcher stops, not grouped
                    problem = exc
                finally:
                    tg.cancel_scope.cancel()
            if problem is not None:
                raise problem
            refused = exit_for_refusals(approver, "chat", err)
            return code if code != EXIT_OK else refused
    except CompositionError as exc:
        exc.report("chat", err)
        return EXIT_USAGE


class _Interrupts:
    """Ctrl-C in a chat: the first stops the running answer, one at the prompt leaves."""

    def __init__(self) -> None:
        self.turn: CancelSignal | None = None
        self.prompt: anyio.CancelScope | None = None
        self.leave = False

    def leaving(self) -> bool:
        """Did a Ctrl-C at the prompt (or before it) ask to leave?"""
        return self.leave

    async def watch(self) -> None:
        import anyio

        with anyio.open_signal_receiver(signal.SIGINT) as received:
            async for _ in received:
                if self.turn is not None and not self.turn.cancelled:
                    self.turn.cancel("interrupted (Ctrl-C)")
                    continue
                self.leave = True
                if self.prompt is not None:
                    self.prompt.cancel()


async def _compact(agent: Agent, instructions: str, err: IO[str]) -> bool:
    """``/compact [INSTRUCTIONS]``: compact now and say what happened; False: it failed."""
    from agentrig.cli._transcript import compaction_line

    try:
        event = await agent.compact(instructions or None)
    except Exception as exc:
        report_failure("chat", exc, err)
        return False
    err.write((compaction_line(event) if event is not None else "nothing to compact") + "\n")
    return True


async def _converse(
    rt: Runtime,
    agent: Agent,
    lines: LineReader,
    renderer: Renderer,
    keys: _Interrupts,
    err: IO[str],
) -> int:
    """Read prompts and run turns until /exit, the end of input or a Ctrl-C at the prompt.

    Leaving ends the session with Claude Code's ``SessionEnd`` reason ``prompt_input_exit``;
    ``/clear`` ends it with ``clear`` and goes on in a fresh session.
    """
    import anyio

    from agentrig.cancel import CancelSignal

    interactive = sys.stdin.isatty()
    failed = False
    if interactive:
        err.write(
            f"agentrig chat: agent {agent.id}, session {agent.session_id} "
            f"-- {EXIT_COMMAND}, Ctrl-D or Ctrl-C to leave; Ctrl-C stops an answer\n"
        )
    while True:
        if interactive:
            err.write("> ")
            err.flush()
        line: str | None = None
        with anyio.CancelScope() as keys.prompt:
            line = await lines.next()
        keys.prompt = None
        if keys.leaving():
            err.write("\n")
            err.flush()
            await rt.agents.dispose(agent.id, reason="prompt_input_exit")
            return EXIT_INTERRUPTED
        prompt = line.strip() if line is not None else EXIT_COMMAND
        if prompt == EXIT_COMMAND:
            # the person left the prompt: Claude Code's SessionEnd reason for it
            await rt.agents.dispose(agent.id, reason="prompt_input_exit")
            break
        if prompt == CLEAR_COMMAND:
            agent = await _clear(rt, agent)
            if interactive:
                err.write(f"cleared: new session {agent.session_id}\n")
            continue
        if prompt == CONTEXT_COMMAND:
            err.write(f"context: {agent.context.describe()}\n")
            continue
        if prompt == COMPACT_COMMAND or prompt.startswith(COMPACT_COMMAND + " "):
            failed = (
                not await _compact(agent, prompt[len(COMPACT_COMMAND) :].strip(), err) or failed
            )
            continue
        if not prompt:
            continue
        keys.turn = CancelSignal()
        try:
            result = await stream_turn(agent, prompt, renderer, signal=keys.turn)
        except Exception as exc:
            failed = True
            report_failure("chat", exc, err)
            continue
        finally:
            keys.turn = None
        if result.interrupted:
            renderer.note("[interrupted] the answer was stopped (recorded as interrupted)")
        report_hooks(result, err)
        if interactive:
            err.write(f"context: {agent.context.describe()}\n")
    return EXIT_FAILURE if failed else EXIT_OK
