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
import sys
from contextlib import nullcontext
from typing import IO, TYPE_CHECKING

from agentrig.cli._chat_input import ChatInput, Interrupts, no_echo, open_chat_input
from agentrig.cli._common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    Subparsers,
)
from agentrig.cli._continue import add_session_arguments, attach, check_session_arguments
from agentrig.cli._render import Renderer, make_renderer, stream_turn
from agentrig.cli._run import (
    CompositionError,
    add_cli_tools,
    add_common_arguments,
    attach_approver,
    choose_agent,
    exit_for_refusals,
    load_composition,
    open_agent_runtime,
    report_failure,
    report_hooks,
)
from agentrig.cli._slash import parse, tell

if TYPE_CHECKING:
    from agentrig.agent import Agent
    from agentrig.ids import AgentId
    from agentrig.kernel import LoadedConfig, Runtime

__all__ = ["register", "run"]

EXIT_COMMAND = "/exit"
CLEAR_COMMAND = "/clear"
CONTEXT_COMMAND = "/context"
COMPACT_COMMAND = "/compact"
MULTILINE_COMMAND = "/multiline"

_HELP = """\
Chat with AGENT of FILE: every message you send is one turn; the answer streams as it
arrives.  Ctrl-C stops the answer and returns to the prompt.  Type /exit (or end the
input, Ctrl-D, or Ctrl-C at the prompt) to leave; /help lists the other commands
(/model, /session, /tools, /context, /compact [INSTRUCTIONS], /multiline, /clear).  A
/command is answered by the chat, never sent to the model ('//text' sends '/text').

On a terminal the line can be edited (arrow keys, Up/Down for the history, kept owner-only
in $XDG_STATE_HOME/agentrig/chat-history); a paste of several lines is one message;
Alt-Enter adds a line break, and /multiline makes Enter add lines (Alt-Enter sends).
Otherwise each line of stdin is one message.

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
    keys = Interrupts()
    try:
        async with (
            open_agent_runtime(loaded, command="chat", err=err) as rt,
            open_chat_input(keys, err) as messages,
        ):
            approver = attach_approver(
                rt,
                args,
                read_line=messages.ask,
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
                    code = await _converse(rt, agent, messages, renderer, err)
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
    messages: ChatInput,
    renderer: Renderer,
    err: IO[str],
) -> int:
    """Read messages and run turns until /exit, the end of input or a Ctrl-C at the prompt.

    Leaving ends the session with Claude Code's ``SessionEnd`` reason ``prompt_input_exit``;
    ``/clear`` ends it with ``clear`` and goes on in a fresh session.  Every other
    ``/command`` is answered here (``_slash``) and never reaches the model.
    """
    from agentrig.cancel import CancelSignal

    keys = messages.keys
    failed = False
    if messages.interactive:
        err.write(
            f"agentrig chat: agent {agent.id}, session {agent.session_id} -- /help for the "
            f"commands; {EXIT_COMMAND}, Ctrl-D or Ctrl-C to leave; Ctrl-C stops an answer\n"
        )
    while True:
        line = await messages.message()
        if keys.leave:
            err.write("\n")
            err.flush()
            await rt.agents.dispose(agent.id, reason="prompt_input_exit")
            return EXIT_INTERRUPTED
        parsed = parse(line.strip()) if line is not None else (EXIT_COMMAND, "")
        if parsed == (EXIT_COMMAND, ""):
            # the person left the prompt: Claude Code's SessionEnd reason for it
            await rt.agents.dispose(agent.id, reason="prompt_input_exit")
            break
        if isinstance(parsed, tuple):
            command, argument = parsed
            if command == CLEAR_COMMAND and not argument:
                agent = await _clear(rt, agent)
                if messages.interactive:
                    err.write(f"cleared: new session {agent.session_id}\n")
            elif command == CONTEXT_COMMAND and not argument:
                err.write(f"context: {agent.context.describe()}\n")
            elif command == COMPACT_COMMAND:
                failed = not await _compact(agent, argument, err) or failed
            elif command == MULTILINE_COMMAND and not argument and messages.editor is not None:
                messages.editor.multiline = not messages.editor.multiline
                err.write(_multiline_note(messages.editor.multiline) + "\n")
            elif command == MULTILINE_COMMAND and not argument:
                err.write("/multiline: each line of a piped chat is one message\n")
            else:
                told = tell(command, argument, agent)
                err.write(f"{told or f'{command} takes no argument here'}\n")
            err.flush()
            continue
        prompt = parsed
        if not prompt.strip():
            continue
        keys.turn = CancelSignal()
        try:
            with no_echo() if messages.editor is not None else nullcontext():
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
        if messages.interactive:
            err.write(f"context: {agent.context.describe()}\n")
    return EXIT_FAILURE if failed else EXIT_OK


def _multiline_note(on: bool) -> str:
    if on:
        return "multi-line mode on: Enter adds a line, Alt-Enter (or Esc, Enter) sends"
    return "multi-line mode off: Enter sends, Alt-Enter (or Esc, Enter) adds a line"
