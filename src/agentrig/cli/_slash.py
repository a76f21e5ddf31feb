"""The chat's ``/commands``: answered by the chat itself, never sent to the model.

A line whose first word is ``/`` and a name (``/help``, ``/tools`` ...) is a command; a
name the chat does not know is answered with a line pointing at ``/help``.  Any other line
is a message -- ``//text`` sends ``/text``, and a path such as ``/usr/bin/env`` is sent as
it is.  The commands that only tell something are answered here; ``/exit``, ``/clear``,
``/compact``, ``/context`` and ``/multiline`` act on the chat (``_chat``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentrig.agent import Agent

__all__ = ["COMMANDS", "parse", "tell"]

COMMANDS: dict[str, str] = {
    "/help": "this list",
    "/model": "[NAME [PROVIDER]] the agent's model, provider and presets; NAME (a preset "
    "or a model) switches to it",
    "/session": "the session id and where it is stored",
    "/tools": "the tools the agent is offered (and the deferred ones)",
    "/context": "how full the model's context window is",
    "/compact": "[INSTRUCTIONS] summarise the older part of the conversation now",
    "/multiline": "switch multi-line mode on or off (Enter adds a line, Alt-Enter sends)",
    "/clear": "end this session and start a fresh one",
    "/exit": "leave the chat (so do Ctrl-D and Ctrl-C at the prompt)",
}
"""Every command with its one-line description, in ``/help`` order."""

_COMMAND = re.compile(r"/([A-Za-z][A-Za-z0-9_-]*)(?:\s+(.*))?", re.DOTALL)

_KEYS = """\
keys: Up/Down walk the history; Alt-Enter (or Esc, Enter) adds a line break; a paste of
several lines is one message; Ctrl-C stops an answer, at the prompt it leaves; '//text'
sends '/text'."""


def parse(line: str) -> tuple[str, str] | str:
    """``(command, argument)`` for a command line, else the message to send."""
    if line.startswith("//"):
        return line[1:]
    found = _COMMAND.fullmatch(line)
    if found is None:
        return line
    return f"/{found.group(1).lower()}", (found.group(2) or "").strip()


def tell(command: str, argument: str, agent: Agent) -> str | None:
    """The answer to a command that only tells something; None for the others."""
    if command == "/help":
        width = max(len(name) for name in COMMANDS)
        rows = [f"  {name:<{width}}  {what}" for name, what in COMMANDS.items()]
        return "\n".join(["commands:", *rows, _KEYS])
    if command == "/model":
        return _model(agent, argument)
    if command == "/session":
        store = agent.config.session_store
        where = f"stored in {store}" if store is not None else "not stored (no session store)"
        turns = sum(1 for e in agent.session.events if e.type == "turn/start")
        return f"session {agent.session_id}, {turns} turn(s), {where}"
    if command == "/tools":
        return _tools(agent)
    if command not in COMMANDS:
        return f"unknown command {command} (not sent to the model); /help lists the commands"
    return None


def _model(agent: Agent, argument: str) -> str:
    """``/model`` shows the model and the presets; ``/model NAME`` switches to the preset
    NAME, or else to the model NAME; ``/model NAME PROVIDER`` to a model of a provider
    (each checked first)."""
    from agentrig.errors import AgentrigError

    words = argument.split()
    if len(words) > 2:
        return f"/model {argument}: give a preset, or a model name and at most a provider id"
    presets = agent.runtime.model_selection.presets
    try:
        preset = presets.find(words[0]) if len(words) == 1 else None
        if preset is not None:
            agent.select(preset)
        elif words:
            agent.set_model(words[0], provider=words[1] if len(words) == 2 else None)
        names = presets.names()
    except AgentrigError as exc:
        return f"/model {argument}: error [{exc.code}]: {exc}"
    chosen = agent.selection
    effort = f", reasoning effort {chosen.reasoning_effort}" if chosen.reasoning_effort else ""
    line = f"model {chosen.model} (provider {chosen.provider}{effort})"
    if preset is not None:
        line += f" from preset {preset.name}"
    return line + (f"\npresets: {', '.join(names)}" if names else "")


def _tools(agent: Agent) -> str:
    offered = agent.offered_tools()
    withheld = agent.withheld_tools()
    if not offered and not withheld:
        return "no tools"
    lines = [f"tools offered ({len(offered)}):"]
    for tool in sorted(offered, key=lambda t: t.id):
        summary = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        lines.append(f"  {tool.id}" + (f"  {summary[:80]}" if summary else ""))
    if withheld:
        names = ", ".join(sorted(t.id for t in withheld))
        lines.append(f"deferred, loaded on demand ({len(withheld)}): {names}")
    return "\n".join(lines)
