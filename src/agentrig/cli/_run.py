"""``agentrig run -c FILE [-a AGENT] PROMPT``: run one turn and print the answer.

When stdout is a terminal the answer streams as it arrives, rendered by ``_render``
(Markdown, one line per tool call, a status line); otherwise the final text is printed once.
``--json`` prints the run result instead: the value and the invocation record, with usage
and cost when they are known.  A tool call the rules ask about is answered as ``_approve``
describes (the person, ``--yes``, or nobody); ``--mode`` replaces the permission mode.

Secrets (``$ENV:NAME`` references) are resolved through :func:`agentrig.env_resolver` and
nowhere else.  Exit codes: 0 ok, 1 the run failed (``error [code]: message`` on stderr),
2 usage or configuration errors, 3 a tool call needed approval and nobody could give it,
130 interrupted.

The helpers here (:func:`load_composition`, :func:`open_agent_runtime`, :func:`attach_approver`)
are shared with ``agentrig chat``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from decimal import Decimal
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from agentrig.cli import _collector
from agentrig.cli._common import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    MODES,
    Subparsers,
    UsageError,
    config_path,
    prompt_text,
    show_traceback,
    warning_line,
)
from agentrig.cli._continue import add_session_arguments, attach, check_session_arguments
from agentrig.cli._input import LineReader
from agentrig.cli._render import Renderer, ToolLines, make_renderer, short, stream_turn

if TYPE_CHECKING:
    from agentrig.agent import RunRecord, RunResult
    from agentrig.cancel import CancelSignal
    from agentrig.cli._approve import CliApprover
    from agentrig.ids import AgentId
    from agentrig.kernel import LoadedConfig, Runtime

__all__ = [
    "CompositionError",
    "add_cli_tools",
    "choose_agent",
    "load_composition",
    "report_hooks",
    "open_agent_runtime",
    "register",
    "report_failure",
    "result_to_dict",
    "run",
    "attach_approver",
    "can_ask",
    "exit_for_refusals",
    "warn_unloaded_listeners",
]

_HELP = """\
Compose the runtime of FILE, run one turn of AGENT for PROMPT and print the answer.
The answer streams as it arrives when stdout is a terminal; otherwise the final text is
printed.  --json prints the run result (value, invocation record with usage and cost).

When AGENT has a session store, the run's session id is printed on stderr ("session ID")
and the conversation can go on: --session ID continues that session, --continue the
agent's latest one.  'agentrig sessions search -c FILE TEXT' finds past conversations.

AGENT may be left out when FILE declares exactly one agent.  $ENV:NAME secret references
are read from the environment.

A tool call the permission rules ask about is put to you on the terminal: allow once,
allow for this session, or deny.  Without a terminal such a call is refused unless --yes
(approve every ask) is given or --mode decides it.

Exit codes: 0 ok, 1 the run failed, 2 usage or configuration error, 3 a tool call needed
approval and there was no terminal to ask (see --yes, --mode), 130 interrupted.
"""


class CompositionError(Exception):
    """The config could not be composed (exit code 2); ``lines`` are printed to stderr.

    Each line is ``error [code]: FILE: key.path: message`` -- one per problem, no traceback.
    """

    def __init__(self, lines: list[str], cause: BaseException | None = None) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines
        self.cause = cause  # shown with --debug

    def report(self, command: str, err: IO[str]) -> None:
        if self.cause is not None:
            show_traceback(self.cause, err)
        for line in self.lines:
            err.write(f"agentrig {command}: {line}\n")
        err.flush()


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-c",
        "--config",
        metavar="FILE",
        required=True,
        help="the composition file (agentrig.toml)",
    )
    parser.add_argument(
        "-a",
        "--agent",
        metavar="AGENT",
        help="the agent to use (default: the only agent of FILE)",
    )
    parser.add_argument(
        "--claude-settings",
        action="store_true",
        help="also apply the project's Claude Code settings: .claude/settings.json and "
        ".claude/settings.local.json next to FILE (hooks and permissions, read verbatim)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        help="the permission mode for this command, instead of [permissions] mode of FILE: "
        "default asks before modifying or running things, plan allows only inspecting, "
        "accept-edits also allows modifying, bypass allows all but the always-ask cases",
    )
    parser.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="approve every tool call the rules ask about, without asking (your consent for "
        "non-interactive use; deny rules still deny, and the cases asked in every mode -- an "
        "ask rule, a catastrophic call -- still need a person)",
    )
    parser.add_argument(
        "--tools",
        metavar="REF",
        action="append",
        default=[],
        help="give AGENT the tools REF names: 'package.module:function' or "
        "'path/to/file.py:function' (relative to the current directory); repeatable. "
        "Loading REF runs its code: name only code you trust",
    )
    parser.add_argument(
        "--strict-plugins",
        action="store_true",
        help="fail when an autoloaded listener plugin cannot be loaded (like plugins.strict "
        "in FILE); without it each such plugin is one warning line on stderr",
    )


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run one prompt through an agent and print the answer",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common_arguments(parser)
    add_session_arguments(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the run result as JSON (value, invocation record, usage, cost_usd)",
    )
    parser.add_argument(
        "prompt", metavar="PROMPT", nargs="?", help="the user message ('-' reads it from stdin)"
    )
    parser.add_argument(
        "-f",
        "--file",
        "--prompt-file",
        dest="prompt_file",
        metavar="FILE",
        help="read the user message from FILE (UTF-8) instead of PROMPT "
        "(--prompt-file is the old name)",
    )
    parser.set_defaults(handler=run)


def read_prompt(args: argparse.Namespace) -> str:
    """The prompt of ``run``: the argument, stdin (``-``) or ``--prompt-file``, as UTF-8.

    Checked before the runtime opens, so a prompt that is not UTF-8 is a usage error
    (exit 2) and nothing reaches the session.
    """
    given: str | None = args.prompt
    if args.prompt_file is not None:
        if given is not None:
            raise UsageError("give either PROMPT or --file, not both", code="cli.two_prompts")
        path = Path(args.prompt_file)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise UsageError(
                f"cannot read the prompt file {path}: {exc.strerror or exc}",
                code="cli.prompt_file",
            ) from None
        return _not_empty(prompt_text(raw, f"the file {path}"), f"the file {path}")
    if given is None:
        raise UsageError(
            "give the PROMPT, '-' to read it from stdin, or --file FILE", code="cli.no_prompt"
        )
    if given == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        text = prompt_text(stdin.read() if stdin is not None else sys.stdin.read(), "stdin")
        return _not_empty(text, "stdin")
    return _not_empty(prompt_text(given, "the command line"), "the command line")


def _not_empty(prompt: str, source: str) -> str:
    """A prompt of only whitespace asks nothing: refused before anything is sent or stored."""
    if not prompt.strip():
        raise UsageError(
            f"the prompt from {source} is empty; give the question to ask",
            code="cli.empty_prompt",
        )
    return prompt


# ---- shared with chat ----------------------------------------------------------------------


def load_composition(
    file: str,
    *,
    strict_plugins: bool = False,
    claude_settings: bool = False,
    mode: str | None = None,
) -> LoadedConfig:
    """Validate FILE; a missing file is a usage error, an invalid one a CompositionError.

    ``strict_plugins`` (``--strict-plugins``) turns ``plugins.strict`` on;
    ``claude_settings`` (``--claude-settings``) adds the project's Claude Code settings files;
    ``mode`` (``--mode``) replaces ``[permissions] mode`` (bypass is refused when the
    config sets ``disable_bypass``).
    """
    import attrs

    from agentrig.errors import ConfigError
    from agentrig.kernel import load_config

    path = config_path(file)
    extra: list[str] = []
    if claude_settings:
        project = path.resolve().parent / ".claude"
        names = ("settings.json", "settings.local.json")
        extra = [str(project / n) for n in names if (project / n).is_file()]
        if not extra:
            raise UsageError(
                f"--claude-settings: no {' or '.join(names)} in {project}",
                code="cli.no_claude_settings",
            )
    try:
        loaded = load_config(path, extend={"claude_code": {"settings": extra}} if extra else None)
    except ConfigError as exc:
        raise CompositionError(_issue_lines(file, exc), exc) from None
    if strict_plugins:
        plugins = loaded.config.plugins.model_copy(update={"strict": True})
        config = loaded.config.model_copy(update={"plugins": plugins})
        loaded = attrs.evolve(loaded, config=config)
    if mode is not None:
        from agentrig.permissions import permissions_config

        if mode == "bypass" and permissions_config(loaded).disable_bypass:
            raise UsageError(
                f"--mode bypass is refused: {file} sets [permissions] disable_bypass",
                code="cli.bypass_disabled",
            )
        table = {**loaded.sections.get("permissions", {}), "mode": mode}
        loaded = attrs.evolve(loaded, sections={**loaded.sections, "permissions": table})
    return loaded


def choose_agent(loaded: LoadedConfig, requested: str | None) -> AgentId:
    """The agent to use: ``requested`` if declared, else the only declared agent."""
    from agentrig.agent import agent_configs

    agents = sorted(agent_configs(loaded))
    source = loaded.source or "the config"
    if requested is not None:
        if requested not in agents:
            from agentrig.errors import did_you_mean

            known = ", ".join(agents) or "none"
            hint = did_you_mean(requested, agents)
            raise UsageError(
                f"{source} declares no agent {requested!r}{hint} (agents: {known})",
                code="cli.unknown_agent",
            )
        from agentrig.ids import AgentId

        return AgentId(requested)  # a declared name: validated by the config
    if len(agents) == 1:
        return agents[0]
    if not agents:
        raise UsageError(
            f"{source} declares no agents; add an [agents.<name>] table", code="cli.no_agents"
        )
    raise UsageError(
        f"{source} declares {len(agents)} agents ({', '.join(agents)}); choose one with -a AGENT",
        code="cli.choose_agent",
    )


def add_cli_tools(loaded: LoadedConfig, agent_id: AgentId, refs: list[str]) -> LoadedConfig:
    """``--tools REF ...``: the agent's tools plus ``refs`` (a file is relative to the current
    directory, not to the config file; a module is imported from it too)."""
    if not refs:
        return loaded
    import attrs

    from agentrig.builtins import anchored, is_tool_ref

    for ref in refs:
        if not is_tool_ref(ref):
            raise UsageError(
                f"--tools {ref}: expected 'package.module:function' or "
                "'path/to/file.py:function' (installed tools are named in the config)",
                code="cli.tool_ref",
            )
    added = [anchored(ref, Path.cwd()) for ref in refs]
    if any(ref == anchored(ref, Path("/")) for ref in refs):  # a module: import it from here
        here = str(Path.cwd())
        if here not in sys.path:
            sys.path.insert(0, here)
    agents = dict(loaded.sections["agents"])  # the agent was chosen from them
    table = agents[agent_id]
    agents[agent_id] = {**table, "tools": [*table.get("tools", ()), *added]}
    return attrs.evolve(loaded, sections={**loaded.sections, "agents": agents})


def _issue_lines(file: str, exc: Exception) -> list[str]:
    from agentrig.errors import error_info

    issues = getattr(exc, "issues", ())
    if issues:
        return [f"error [{issue.code}]: {file}: {issue}" for issue in issues]
    info = error_info(exc)
    return [f"error [{info.code}]: {file}: {info.message}"]


@asynccontextmanager
async def open_agent_runtime(
    loaded: LoadedConfig, *, command: str = "run", err: IO[str] | None = None
) -> AsyncIterator[Runtime]:
    """``open_runtime`` with the environment as the only secret resolver.

    Composition failures (an invalid config, a missing secret, a broken or disabled plugin,
    a factory that raised) become :class:`CompositionError`; errors raised by the caller's
    block pass unchanged.  Every autoloaded listener plugin that did not load is one warning
    line on ``err`` (default stderr) -- ``plugins.strict`` makes it a composition failure.
    """
    import agentrig

    opened = False
    try:
        async with agentrig.open_runtime(loaded, resolver=agentrig.env_resolver()) as rt:
            opened = True
            _collector.resume()  # start-up is over: what it made is frozen, the rest collected
            warn_unloaded_listeners(rt, command, sys.stderr if err is None else err)
            yield rt
    except Exception as exc:
        if opened:
            raise
        raise CompositionError(_issue_lines(loaded.source or "config", exc), exc) from None


def warn_unloaded_listeners(rt: Runtime, command: str, err: IO[str]) -> None:
    """One ``warning [code]:`` line per autoloaded listener plugin that failed or is in conflict."""
    from agentrig.cli._plugin_report import plugin_report

    wanted = set(rt.index.autoload_names("plugins"))
    for row in plugin_report(rt.index):
        if row.kind == "plugins" and row.id in wanted and row.status in ("failed", "conflict"):
            dist = f"{row.distribution or '?'} {row.version or ''}".strip()
            code = "plugin.conflict" if row.status == "conflict" else "plugin.load_failed"
            message = f"listener plugin {row.id!r} ({dist}) is not loaded: {row.error}"
            err.write(warning_line(command, code, message) + "\n")
            if row.status == "conflict":
                wanted.discard(row.id)  # one line for the conflict, not one per distribution
    err.flush()


def report_hooks(result: RunResult[Any], err: IO[str]) -> None:
    """What the run's hooks said to the user (``systemMessage`` ...) and why it stopped early
    (a hook's ``stopReason``, ``[timeout]`` for its deadline): one stderr line each, never
    mixed into the answer."""
    for notice in result.invocation.notices:
        err.write(f"[hook] {short(notice, 500)}\n")
    if result.invocation.stop_reason:
        label = "timeout" if result.timed_out else "stopped"
        err.write(f"[{label}] {result.invocation.stop_reason}\n")
    failure = result.response_failure
    if failure is not None:  # the agent classifies replies: say this was no answer
        said = f": {short(failure.text, 500)}" if failure.text else ""
        err.write(f"[{failure.kind}] the model's reply reported a {failure.kind}{said}\n")
    err.flush()


def report_failure(command: str, exc: BaseException, err: IO[str]) -> None:
    from agentrig.errors import error_info

    show_traceback(exc, err)
    info = error_info(exc)
    err.write(f"agentrig {command}: error [{info.code}]: {info.message}\n")
    err.flush()


def _jsonable(value: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Decimal):
        return float(value)
    return value


def result_to_dict(rt: Runtime, result: RunResult[Any]) -> dict[str, Any]:
    """The run result as JSON-ready data; ``cost_usd`` is None when usage or price is unknown."""
    return {"value": _jsonable(result.value), "invocation": _record_to_dict(rt, result.invocation)}


def _record_to_dict(rt: Runtime, record: RunRecord) -> dict[str, Any]:
    """One run record as JSON-ready data, its sub-agents' and handoff's records included."""
    import attrs

    data = attrs.asdict(record, recurse=False)
    for name in ("usage", "compaction_usage"):
        usage = getattr(record, name)
        data[name] = usage.model_dump(mode="json") if usage is not None else None
    total = record.total_usage
    data["total_usage"] = total.model_dump(mode="json") if total is not None else None
    failure = record.response_failure
    data["response_failure"] = attrs.asdict(failure) if failure is not None else None
    data["reasoning"] = [audit.to_dict() for audit in record.reasoning]
    data["subagents"] = [_record_to_dict(rt, child) for child in record.subagents]
    handoff = record.handoff
    data["handoff"] = _record_to_dict(rt, handoff) if handoff is not None else None
    cost = None
    if record.model is not None:
        cost = rt.models.cost(record.model, record.usage)
    data["cost_usd"] = float(cost) if cost is not None else None
    return data


# ---- the command ---------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    import anyio

    loaded_or_code = _prepare(args)
    if isinstance(loaded_or_code, int):
        return loaded_or_code
    loaded, agent_id = loaded_or_code
    code: int = anyio.run(_run_async, loaded, agent_id, args)
    return code


def _prepare(args: argparse.Namespace) -> tuple[LoadedConfig, AgentId] | int:
    args.prompt = read_prompt(args)
    try:
        loaded = load_composition(
            args.config,
            strict_plugins=args.strict_plugins,
            claude_settings=args.claude_settings,
            mode=args.mode,
        )
    except CompositionError as exc:
        exc.report("run", sys.stderr)
        return EXIT_USAGE
    agent_id = choose_agent(loaded, args.agent)
    loaded = add_cli_tools(loaded, agent_id, args.tools)
    check_session_arguments(args, loaded, agent_id)
    return loaded, agent_id


async def _run_async(loaded: LoadedConfig, agent_id: AgentId, args: argparse.Namespace) -> int:
    out, err = sys.stdout, sys.stderr
    # on a terminal the answer streams; into a pipe stdout gets the final answer alone once
    # the run ends, and tool activity is one ``[tool]`` line per call and result on stderr
    piped = not args.json and not out.isatty()
    renderer: Renderer | None = None
    if not args.json:
        renderer = ToolLines(out, err) if piped else make_renderer(out, err)
    try:
        async with (
            open_agent_runtime(loaded, command="run", err=err) as rt,
            AsyncExitStack() as stack,
        ):
            read_line = None
            if can_ask(err):
                read_line = (await stack.enter_async_context(LineReader())).next
            approver = attach_approver(rt, args, read_line=read_line, err=err, renderer=renderer)
            try:
                agent = await attach(rt, agent_id, args, "run", err)
                if agent.config.session_store is not None:  # stored: it can be continued
                    err.write(f"session {agent.session_id}\n")
                    err.flush()
                if renderer is not None and not piped:
                    streamed = await stream_turn(agent, args.prompt, renderer)
                    report_hooks(streamed, err)
                    return exit_for_refusals(approver, "run", err)
                if renderer is not None:
                    result = await stream_turn(agent, args.prompt, renderer)
                else:
                    result = await agent.run(args.prompt)
            except Exception as exc:
                report_failure("run", exc, err)
                if args.json:
                    _print_json_error(exc, out)
                return EXIT_FAILURE
            if args.json:
                json.dump(result_to_dict(rt, result), out, indent=2, ensure_ascii=False)
                out.write("\n")
            else:
                text = result.value if isinstance(result.value, str) else str(result.value)
                out.write(text if text.endswith("\n") else text + "\n")
                report_hooks(result, err)
            out.flush()
            return exit_for_refusals(approver, "run", err, shown=False)
    except CompositionError as exc:
        exc.report("run", err)
        return EXIT_USAGE


def can_ask(err: IO[str]) -> bool:
    """Can a person answer here: are stdin and ``err`` (where the question goes) terminals?"""
    return sys.stdin.isatty() and err.isatty()


def attach_approver(
    rt: Runtime,
    args: argparse.Namespace,
    *,
    read_line: Callable[[], Awaitable[str | None]] | None,
    err: IO[str],
    renderer: Renderer | None,
    turn_signal: Callable[[], CancelSignal | None] | None = None,
) -> CliApprover:
    """Register the command's approver (``--yes``, the terminal, or nobody) on ``rt``."""
    from agentrig.cli._approve import CliApprover  # pluggy's marker: not on the --help path

    approver = CliApprover(
        consent=args.yes,
        read_line=read_line,
        err=err,
        renderer=renderer,
        turn_signal=turn_signal,
    )
    rt.add_plugin("agentrig.cli-approver", approver)
    return approver


def exit_for_refusals(
    approver: CliApprover, command: str, err: IO[str], *, shown: bool = True
) -> int:
    """0, or :data:`EXIT_REFUSED` with one line naming the flags when asks went unanswered.

    Calls refused otherwise (a rule, the mode, the person) keep exit code 0; unless the
    streamed output showed them (``shown``), one ``note:`` line names them.
    """
    from agentrig.cli._approve import EXIT_REFUSED, denial_note, refusal_message

    if approver.refused:
        message = refusal_message(approver.refused, consent=approver.consent)
        err.write(f"agentrig {command}: {message}\n")
        err.flush()
        return EXIT_REFUSED
    if approver.denied and not shown:
        err.write(f"agentrig {command}: {denial_note(approver.denied)}\n")
        err.flush()
    return EXIT_OK


def _print_json_error(exc: BaseException, out: IO[str]) -> None:
    from agentrig.errors import error_info

    info = error_info(exc)
    json.dump(
        {"error": {"code": info.code, "message": info.message, "category": info.category}},
        out,
        indent=2,
    )
    out.write("\n")
