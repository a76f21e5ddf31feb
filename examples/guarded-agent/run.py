"""The guarded-agent demo: PreToolUse command hooks allow one tool call and deny another.

Run it from the repository root inside the venv::

    python examples/guarded-agent/run.py

Everything is offline: the model is the built-in ``scripted`` provider replaying the script
in ``agentrig.toml``, and the ``shell`` tool only *pretends* to run commands.  The hooks are
real subprocesses: ``hooks/deny_rm.sh`` (shell, exit 2 to deny) and ``hooks/audit.py``
(Python, a Claude Code JSON answer).

Until the runtime composes hooks into its own gate, this script builds the gate itself:
``HookRunner.from_runtime(rt)`` reads ``[[hooks.*]]`` from the config and
``make_hook_gate(runner)`` turns the PreToolUse hooks into the agent's tool-call gate.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import anyio

import agentrig
from agentrig.agent import AgentRegistry
from agentrig.builtins import hook_command
from agentrig.hooks import HookRunner, make_hook_gate
from agentrig.llm import ToolMessage
from agentrig.tools import tool

HERE = Path(__file__).resolve().parent
PROMPT = "Have a look at the project and clean up the build directory."


@tool(risk="execute", permission_arg=("command", "command"))
def shell(command: str) -> str:
    """Run a shell command (a demo: it reports what it would run and runs nothing)."""
    return f"(pretend) ran {command!r}: README.md  build/  src/"


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


async def main() -> None:
    memory = agentrig.MemorySource()
    memory.add("tools", "shell", shell, distribution="guarded-agent")
    # The `command` strategy enters like its installed entry point would, only in memory.
    memory.add("hook_strategies", "command", hook_command.factory, distribution="agentrig")

    with tempfile.TemporaryDirectory() as scratch:
        audit_log = Path(scratch) / "audit.jsonl"
        os.environ["GUARDED_AUDIT_LOG"] = str(audit_log)  # the hooks inherit it

        async with agentrig.open_runtime(HERE / "agentrig.toml", memory=memory) as rt:
            runner = HookRunner.from_runtime(rt)
            registry = AgentRegistry(rt, gate=make_hook_gate(runner, cwd=HERE))
            agent = await registry.create(
                "guarded",
                provider="local",
                model="scripted-demo",
                tools=[rt.tools.require("shell")],
            )
            try:
                _out(f"[user]      {PROMPT}")
                result = await agent.run(PROMPT)
                for message in agent.session.derive_messages():
                    if isinstance(message, ToolMessage):
                        _out(f"[tool]      {message.name} -> {message.status}: {message.text}")
                _out(f"[assistant] {result.value}")
            finally:
                await registry.aclose()
                await runner.aclose()

        _out()
        _out("audit log written by hooks/audit.py:")
        for line in audit_log.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            _out(f"  {record['event']} {record['tool']} {json.dumps(record['input'])}")
    _out("runtime closed cleanly: " + str(rt.closed and rt.close_report == ()))


if __name__ == "__main__":
    anyio.run(main)
