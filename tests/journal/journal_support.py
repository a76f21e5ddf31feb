"""Shared helpers of the execution-journal tests (imported by the test modules and the
crash child): a runtime with one journaled scripted agent, a marker-file tool whose line
is its effect, and readers for the marker and the session log."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agentrig import hookimpl
from agentrig.agent import Agent, AgentConfig
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.ids import AgentId, SessionId
from agentrig.journal import ExecutionJournal, attach_journal
from agentrig.kernel import MemorySource, Runtime, open_runtime
from agentrig.llm import Provider, ToolMessage
from agentrig.tools import ToolContext, tool

AGENT = "assistant"
SESSION = "ses_journal_1"


def effect_tool(
    marker: Path, *, before_effect: Any = None, after_effect: Any = None, idempotent: bool = False
) -> Any:
    """A tool whose effect is one line appended to ``marker``: an ``inspect`` tool (it runs
    alongside others), declared not idempotent -- its effect must happen exactly once --
    unless ``idempotent`` (a crash mid-effect then runs it again)."""

    def effect(label: str, ctx: ToolContext) -> str:
        if before_effect is not None:
            before_effect()
        with marker.open("a", encoding="utf-8") as handle:
            handle.write(f"{label}\n")
            handle.flush()
        if after_effect is not None:
            after_effect()
        return f"wrote {label}"

    effect.__doc__ = "Append the label to the marker file."
    return tool(id="effect", risk="inspect", idempotent=idempotent)(effect)


def marker_lines(marker: Path) -> list[str]:
    if not marker.exists():
        return []
    return marker.read_text(encoding="utf-8").splitlines()


def two_round_script() -> list[Reply]:
    """Round 1 calls the effect; round 2 answers."""
    return [
        Reply(tool_calls=(ScriptedCall("effect", {"label": "one"}, id="call_a"),)),
        Reply(text="done after one"),
    ]


COMPACT_WINDOW = 1000
"""The context window (tokens) of ``m1`` in the compaction script."""
COMPACTION = {"at": 0.3, "keep_last": 2}
"""Round 2 of the compaction script passes ``at``: the prompt is summarised first."""
LONG_PROMPT = "do the thing " + "x" * 2000


def config(tmp: Path) -> dict[str, Any]:
    return {
        "providers": {"local": {"kind": "scripted"}},
        "session_stores": {
            "store": {"kind": "jsonl", "options": {"directory": str(tmp / "sessions")}}
        },
        "tools": {"effect": {}},
        "permissions": {"mode": "bypass"},
    }


def agent_config(**overrides: Any) -> AgentConfig:
    """The agent's config (``tools`` must go through the config: ``create(tools=)`` takes
    tool objects)."""
    settings: dict[str, Any] = {
        "provider": "local",
        "model": "m1",
        "tools": ["effect"],
        "session_store": "store",
    }
    settings.update(overrides)
    return AgentConfig.model_validate(settings)


@asynccontextmanager
async def journaled(
    tmp: Path,
    journal: ExecutionJournal,
    provider: Provider,
    tools: Iterable[Any],
    *,
    plugins: Sequence[tuple[str, object]] = (),
    permissions: dict[str, Any] | None = None,
) -> AsyncIterator[Runtime]:
    memory = MemorySource()
    settings = config(tmp)
    settings["tools"] = {}
    for item in tools:
        memory.add("tools", item.id, item)
        settings["tools"][item.id] = {}
    if permissions is not None:
        settings["permissions"] = permissions
    attached = attach_journal(journal)
    async with open_runtime(
        settings,
        memory=memory,
        plugins=(*attached.plugins, *plugins),
        overrides=attached.overrides({"local": provider}),
        environ={},
    ) as rt:
        yield rt


async def create_agent(rt: Runtime, **overrides: Any) -> Agent:
    agent: Agent = await rt.agents.create(
        AgentId(AGENT), agent_config(**overrides), session_id=SessionId(SESSION)
    )
    return agent


class Observer:
    """A listener plugin recording the tool calls and turn closings it observes."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    async def tool_execution(self, payload: Any, next: Any) -> Any:
        self.seen.append(f"tool:{payload.call.name}")
        return await next(payload)

    @hookimpl
    def turn_stopping(self, payload: Any) -> None:
        self.seen.append("turn_stopping")


def tool_results(agent: Agent) -> list[ToolMessage]:
    return [e.data.message for e in agent.session.events if e.type == "tool/result"]


__all__ = [
    "AGENT",
    "COMPACTION",
    "COMPACT_WINDOW",
    "LONG_PROMPT",
    "Observer",
    "SESSION",
    "Reply",
    "ScriptedCall",
    "ScriptedProvider",
    "agent_config",
    "config",
    "create_agent",
    "effect_tool",
    "journaled",
    "marker_lines",
    "tool_results",
    "two_round_script",
]
