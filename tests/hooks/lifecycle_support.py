"""Shared by the hook-lifecycle tests: real recording hooks and a scripted runtime around them.

``scripts/record.{sh,py,js}`` are hook programs written to Claude Code's documented
protocol: each appends the JSON input it got (and, for Python and Node, the transcript it
read) to ``HOOK_LOG``, prints ``HOOK_ANSWER`` and exits with ``HOOK_EXIT``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedProvider
from agentrig.ids import AgentId
from agentrig.kernel import load_config
from agentrig.tools import tool

SCRIPTS = Path(__file__).resolve().parent / "scripts"
LANGUAGES = ("bash", "python", "node")


def command(language: str) -> list[str]:
    """The argv that runs the recording hook written in ``language``."""
    if language == "bash":
        return ["bash", str(SCRIPTS / "record.sh")]
    if language == "python":
        return [sys.executable, str(SCRIPTS / "record.py")]
    return ["node", str(SCRIPTS / "record.js")]


def hook(
    log: Path,
    language: str = "python",
    *,
    answer: Mapping[str, Any] | str | None = None,
    exit: int = 0,
    stderr: str = "",
    matcher: str | None = None,
    once: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """One ``[[hooks.<Event>]]`` entry running the recording hook."""
    env = {"HOOK_LOG": str(log), "HOOK_EXIT": str(exit)}
    if answer is not None:
        env["HOOK_ANSWER"] = answer if isinstance(answer, str) else json.dumps(answer)
    if stderr:
        env["HOOK_STDERR"] = stderr
    if once:
        env["HOOK_ONCE"] = "1"
    entry: dict[str, Any] = {
        "strategy": "command",
        "options": {"command": command(language), "env": env, "timeout": 30, **options},
    }
    if matcher is not None:
        entry["matcher"] = matcher
    return entry


def records(log: Path) -> list[dict[str, Any]]:
    """What the recording hooks wrote, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def events(log: Path) -> list[str]:
    return [r["input"]["hook_event_name"] for r in records(log)]


RAN: list[str] = []


@tool(id="Bash", risk="execute", permission_arg=("command", "command"))
def bash_tool(command: str) -> str:
    """Run a command (a test double: records it; a command starting with 'fail' fails)."""
    RAN.append(command)
    if command.startswith("fail"):
        raise RuntimeError(f"{command} failed")
    return f"ran {command}"


@attrs.define
class Outcome:
    """What one scripted run left behind."""

    result: Any
    provider: ScriptedProvider
    session_events: list[Any]
    messages: list[Any]

    def request_texts(self, index: int) -> list[str]:
        """The texts of the messages sent with request ``index``."""
        return [m.text for m in self.provider.requests[index].messages if hasattr(m, "text")]

    def notices(self) -> list[Any]:
        return [e.data for e in self.session_events if e.type == "notice"]

    def turn_end(self) -> Any:
        return [e.data for e in self.session_events if e.type == "turn/end"][-1]

    def tool_texts(self) -> list[str]:
        return [m.text for m in self.messages if m.role == "tool"]


async def run_agent(
    tmp_path: Path,
    hooks: Mapping[str, Sequence[Mapping[str, Any]]],
    replies: Sequence[Reply | str],
    *,
    prompt: str = "go",
    plugins: Sequence[Any] = (),
    permissions: Mapping[str, Any] | None = None,
) -> Outcome:
    """Run ``prompt`` once in a fresh runtime with ``hooks``; the runtime is closed after."""
    RAN.clear()
    provider = ScriptedProvider(list(replies))
    memory = agentrig.MemorySource()
    memory.add("tools", "Bash", bash_tool)
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m", "tools": ["Bash"]}},
        "permissions": {"workspace": str(tmp_path), "mode": "bypass", **(permissions or {})},
        "hooks": {name: list(entries) for name, entries in hooks.items()},
    }
    loaded = attrs.evolve(load_config(config), base_dir=tmp_path)
    async with agentrig.open_runtime(
        loaded,
        memory=memory,
        overrides=[("providers", "local", provider)],
        environ={},
        plugins=[(f"p{i}", p) for i, p in enumerate(plugins)],
    ) as rt:
        agent = rt.agent(AgentId("a"))
        result = await agent.run(prompt)
        session_events = list(agent.session.events)
        messages = list(agent.session.derive_messages())
    return Outcome(result, provider, session_events, messages)
