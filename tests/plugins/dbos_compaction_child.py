"""Child process of the durable-compaction tests (``test_dbos_compaction.py``).

``python dbos_compaction_child.py <tmp> run <run id> <kill point>`` runs one durable run whose
second round compacts the history (a long prompt, a small window) and kills itself at the
point; ``... resume <run id>`` launches again (recovering what the executor left pending) and
prints the run's answer.  Every summary request the model is asked is one line in
``<tmp>/summaries.txt``, so the count spans processes.  ``<tmp>/settings.json`` holds the
``dbos`` and ``extra`` tables every process of one test shares (a PostgreSQL database).

Kill points: ``after-summary`` (the summary was answered and journaled; the compaction is
not logged yet), ``in-model-after-summary`` (the compaction is logged; the next round's
model call was journaled as made, never answered), ``none``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from _durable_support import config, die, effect_tool
from agentrig_dbos import DURABLE

from agentrig import hookimpl
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.kernel import MemorySource, Runtime, open_runtime
from agentrig.llm import ModelInfo, ModelRequest

WINDOW = 1000
COMPACTION = {"at": 0.3, "keep_last": 2}
PROMPT = "do the thing " + "x" * 2000  # about 500 tokens: past 30 % of the window
SUMMARY_MARK = "Summarise the conversation transcript"
LABELS = ("one", "two")


class Compacting(ScriptedProvider):
    """Answers by what the request shows was done (restart-proof, and a summary keeps it);
    a summary request is answered with the transcript's ``wrote`` lines, and counted."""

    def __init__(self, tmp: Path, point: str) -> None:
        super().__init__()
        self.tmp, self.point = tmp, point

    def _take(self, request: ModelRequest) -> Reply:
        self.requests.append(request)
        head = request.messages[0]
        if head.role == "system" and head.text.startswith(SUMMARY_MARK):
            with (self.tmp / "summaries.txt").open("a", encoding="utf-8") as handle:
                handle.write(f"{os.getpid()}\n")
                handle.flush()
                os.fsync(handle.fileno())
            wrote = re.findall(r"wrote \w+", request.messages[-1].text)
            return Reply(text="The user asked for the thing. " + "; ".join(wrote))
        seen = " ".join(m.text for m in request.messages if m.role in ("tool", "user"))
        done = {label for label in LABELS if f"wrote {label}" in seen}
        compacted = any(
            getattr(m, "source", None) == "compaction-summary" for m in request.messages
        )
        if compacted and self.point == "in-model-after-summary":
            die()  # the round after the compaction: journaled as made, never answered
        for label in LABELS:
            if label not in done:
                return Reply(
                    tool_calls=(ScriptedCall("effect", {"label": label}, id=f"call_{label}"),)
                )
        return Reply(text="done")


class Killer:
    """Kills the process once the summary was answered, before the compaction is logged."""

    def __init__(self, point: str) -> None:
        self.point = point

    @hookimpl(trylast=True)
    async def compaction(self, payload: Any, next: Any) -> Any:
        plan = await next(payload)
        if plan is not None and self.point == "after-summary":
            die()
        return plan


@asynccontextmanager
async def runtime(tmp: Path, point: str) -> AsyncIterator[Runtime]:
    shared = tmp / "settings.json"
    given: dict[str, Any] = (
        json.loads(shared.read_text(encoding="utf-8")) if shared.exists() else {}
    )
    settings = config(tmp, given.get("dbos"))
    for key, value in given.get("extra", {}).items():
        settings[key] = {**settings.get(key, {}), **value}
    settings["agents"]["assistant"]["compaction"] = COMPACTION
    memory = MemorySource()
    memory.add("tools", "effect", effect_tool(tmp / "marker.txt"))
    async with open_runtime(
        settings,
        memory=memory,
        overrides=[("providers", "local", Compacting(tmp, point))],
        plugins=[("killer", Killer(point))],
        environ={},
    ) as rt:
        rt.models.register(ModelInfo(model="m1", context_window=WINDOW))
        yield rt


async def main(tmp: Path, mode: str, run_id: str, point: str) -> None:
    async with runtime(tmp, point) as rt:
        durable = rt.services.require(DURABLE)
        if mode == "run":
            result = await durable.run("assistant", PROMPT, run_id=run_id)
        else:
            await durable.launch()
            result = await durable.result(run_id)
        print(f"finished: {result.text}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    anyio.run(main, Path(args[0]), args[1], args[2], args[3] if len(args) > 3 else "none")
