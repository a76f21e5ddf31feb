"""The guarded-agent demo: a Claude Code settings.json guards an agent's tool calls.

Run it from the repository root inside the venv::

    python examples/guarded-agent/run.py

Everything is offline: the model is the built-in ``scripted`` provider replaying the script
in ``agentrig.toml``, and the ``shell`` tool only *pretends* to run commands.  The rules and
hooks come from ``.claude/settings.json``, read verbatim through ``[claude_code] settings``:
``hooks/deny_rm.sh`` (shell, exit 2 to deny) and ``hooks/audit.py`` (Python, a Claude Code
JSON answer) are real subprocesses, and ``shell(ls *)`` / ``shell(curl *)`` are permission
rules.  The runtime composes them into the agent's tool gate by itself.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import anyio

import agentrig
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

    with tempfile.TemporaryDirectory() as scratch:
        audit_log = Path(scratch) / "audit.jsonl"
        os.environ["GUARDED_AUDIT_LOG"] = str(audit_log)  # the hooks inherit it

        async with agentrig.open_runtime(HERE / "agentrig.toml", memory=memory) as rt:
            agent = rt.agent("guarded")
            _out(f"[user]      {PROMPT}")
            result = await agent.run(PROMPT)
            for message in agent.session.derive_messages():
                if isinstance(message, ToolMessage):
                    _out(f"[tool]      {message.name} -> {message.status}: {message.text}")
            _out(f"[assistant] {result.value}")
            for notice in result.invocation.notices:
                _out(f"[hook]      {notice}")

        _out()
        _out("audit log written by hooks/audit.py:")
        for line in audit_log.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            _out(f"  {record['event']} {record['tool']} {json.dumps(record['input'])}")
    _out("runtime closed cleanly: " + str(rt.closed and rt.close_report == ()))


if __name__ == "__main__":
    anyio.run(main)
