"""Crash child: runs one journaled agent and SIGKILLs itself at a named point.

``python journal_child.py <tmp dir> <point> [SCRIPT]`` (``two-rounds``, ``repeat``,
``compact``, ``compact-second``; ``idempotent``: two rounds with an idempotent tool;
``idempotent-resume``: continues the crashed ``idempotent`` run instead) -- the point
(also read from the environment variable ``JOURNAL_KILL_AT`` when no argument is given) is
one of

``before-model-intent:<call>``  ``after-model-intent:<call>``  ``after-model-result:<call>``
``after-tool-intent``  ``after-effect``  ``after-tool-result``  ``none``

where ``<call>`` is a journal model-call id (``m1``, ``m2``; ``c2``: a compaction's summary
call).  The agent runs the two-round
script of :mod:`journal_support` with a SQLite journal and a JSONL session store in the
directory; the marker file's lines are the tool's effects.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
from journal_support import (
    AGENT,
    COMPACT_WINDOW,
    COMPACTION,
    LONG_PROMPT,
    SESSION,
    Reply,
    ScriptedCall,
    ScriptedProvider,
    agent_config,
    create_agent,
    effect_tool,
    journaled,
    two_round_script,
)

from agentrig.journal import (
    ModelIntent,
    ModelSettlement,
    SqliteJournal,
    ToolIntent,
    ToolSettlement,
    continue_execution,
)
from agentrig.llm import ModelInfo


def die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


class KillingJournal(SqliteJournal):
    """A SQLite journal that dies around the writes named by the kill point."""

    def __init__(self, path: Path, point: str) -> None:
        super().__init__(path)
        self.point = point

    def at(self, name: str, call: str | None = None) -> None:
        if self.point == name or (call is not None and self.point == f"{name}:{call}"):
            die()

    async def model_intent(self, intent: ModelIntent) -> None:
        self.at("before-model-intent", intent.call_id)
        await super().model_intent(intent)
        self.at("after-model-intent", intent.call_id)

    async def model_result(self, settlement: ModelSettlement) -> None:
        await super().model_result(settlement)
        self.at("after-model-result", settlement.call_id)

    async def tool_intent(self, intent: ToolIntent) -> None:
        await super().tool_intent(intent)
        self.at("after-tool-intent")

    async def tool_result(self, settlement: ToolSettlement) -> None:
        await super().tool_result(settlement)
        self.at("after-tool-result")


def script_of(name: str) -> list[Reply]:
    if name == "compact":  # round 1 calls the effect, then the summary, then the answer
        first, last = two_round_script()
        return [first, Reply(text="The user asked for the thing."), last]
    if name == "compact-second":  # a first run; the second compacts in its first round
        return [*two_round_script(), Reply(text="The user asked for the thing."), Reply(text="ok")]
    if name == "idempotent-resume":  # the run's round 1 is journaled: only the answer
        return [Reply(text="done after one")]
    if name == "repeat":  # identical input twice (run with identical_input_limit=1)
        return [
            Reply(tool_calls=(ScriptedCall("effect", {"label": "one"}, id="call_a"),)),
            Reply(tool_calls=(ScriptedCall("effect", {"label": "one"}, id="call_b"),)),
            Reply(text="gave up"),
        ]
    return two_round_script()


async def main(tmp: Path, point: str, script: str) -> None:
    journal = KillingJournal(tmp / "private" / "journal.sqlite3", point)
    marker = tmp / "marker.txt"
    tool = effect_tool(
        marker,
        after_effect=die if point == "after-effect" else None,
        idempotent=script.startswith("idempotent"),  # two rounds, an idempotent tool
    )
    provider = ScriptedProvider(script_of(script))
    async with journaled(tmp, journal, provider, [tool]) as rt:
        limit = 1 if script == "repeat" else 3
        if script == "idempotent-resume":  # continue the crashed run (and crash again)
            resumed = await continue_execution(
                rt, journal, agent_id=AGENT, session_id=SESSION, config=agent_config()
            )
            result = resumed.outcome
        elif script.startswith("compact"):
            rt.models.register(ModelInfo(model="m1", context_window=COMPACT_WINDOW))
            agent = await create_agent(rt, compaction=COMPACTION)
            if script == "compact-second":
                await agent.run("do the thing")
            result = await agent.run(LONG_PROMPT)
        else:
            agent = await create_agent(rt, identical_input_limit=limit)
            result = await agent.run("do the thing")
        print(f"finished: {result.value}")
    await journal.aclose()


if __name__ == "__main__":
    directory = Path(sys.argv[1])
    kill_at = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("JOURNAL_KILL_AT", "none")
    anyio.run(main, directory, kill_at, sys.argv[3] if len(sys.argv) > 3 else "two-rounds")
