"""The cost of durable runs (agentrig-dbos) on the SQLite default.

* **W durable** -- the workload of ``bench_loop.py`` (R runs of K tool rounds, scripted model,
  one no-op tool), each run a durable run (``durable.run``: a DBOS workflow on its SQLite
  system database, journaled in SQLite, a JSONL session per run).  Floor: the same runs
  journaled with the built-in ``SqliteJournal`` and the same JSONL store, without DBOS,
  measured interleaved in the same process.  Target: at most 3x per model call.

Queued-run throughput with 1, 2 and 4 workers on PostgreSQL is not measured yet.

Prints one JSON object per line (DESIGN §10); ``--quick`` finishes in about a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import compare
from agentrig_dbos import DURABLE
from bench_loop import MODEL, NOOP, K, _memory, run_replies

import agentrig
from agentrig.builtins.scripted import ScriptedProvider
from agentrig.journal import SqliteJournal, journaled_runtime

TARGET = 3.0


def _config(tmp: Path, durable: bool) -> dict[str, Any]:
    config: dict[str, Any] = {
        "providers": {"local": {"kind": "scripted"}},
        "tools": {"noop": {}},
        "session_stores": {
            "store": {"kind": "jsonl", "options": {"directory": str(tmp / "sessions")}}
        },
        "agents": {
            "w": {"provider": "local", "model": MODEL, "tools": ["noop"], "session_store": "store"}
        },
    }
    if durable:
        config["dbos"] = {"state_dir": str(tmp / "durable")}
    return config


async def bench(runs: int, repeats: int) -> None:
    calls = runs * (K + 1)
    best = {"journaled": float("inf"), "durable": float("inf")}
    passes = 0
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        plain_provider = ScriptedProvider(checkpoint="reply")
        durable_provider = ScriptedProvider(checkpoint="reply")
        journal = SqliteJournal(tmp / "journal" / "journal.sqlite3")
        async with (
            journaled_runtime(
                _config(tmp / "plain", False),
                journal,
                providers={"local": plain_provider},
                memory=_memory(),
                environ={},
            ) as rt_plain,
            agentrig.open_runtime(
                _config(tmp / "durable", True),
                memory=_memory(),
                overrides=[("providers", "local", durable_provider)],
                environ={},
            ) as rt_durable,
        ):
            durable = rt_durable.services.require(DURABLE)
            await durable.launch()

            async def journaled_pass(n: int) -> float:
                nonlocal passes
                passes += 1
                for _ in range(n):
                    plain_provider.add(*run_replies())
                agents = [
                    await rt_plain.agents.create(
                        f"p{passes}-{i}", rt_plain.config.agents["w"], session_id=f"s{passes}-{i}"
                    )
                    for i in range(n)
                ]
                start = time.perf_counter()
                for agent in agents:
                    result = await agent.run("go")
                    assert result.value == "done", result.value
                elapsed = time.perf_counter() - start
                for agent in agents:
                    await rt_plain.agents.dispose(agent.id)
                return elapsed

            async def durable_pass(n: int) -> float:
                nonlocal passes
                passes += 1
                for _ in range(n):
                    durable_provider.add(*run_replies())
                start = time.perf_counter()
                for i in range(n):
                    result = await durable.run("w", "go", run_id=f"d{passes}-{i}")
                    assert result.text == "done", result.text
                return time.perf_counter() - start

            await journaled_pass(min(runs, 10))  # warm-up
            await durable_pass(min(runs, 10))
            for _ in range(repeats):  # interleaved: both see the same machine state
                best["journaled"] = min(best["journaled"], await journaled_pass(runs))
                best["durable"] = min(best["durable"], await durable_pass(runs))
        await journal.aclose()
    per_call = {name: seconds / calls * 1e6 for name, seconds in best.items()}
    compare(
        "w_durable_sqlite",
        per_call["durable"],
        per_call["journaled"],
        "us/model-call",
        TARGET,
        floor_name="same W runs journaled with SqliteJournal, no DBOS",
        runs=runs,
        rounds=K,
        model=MODEL,
        tool=NOOP.id,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (about a minute)")
    args = parser.parse_args()
    runs, repeats = (20, 2) if args.quick else (100, 5)
    asyncio.run(bench(runs, repeats))


if __name__ == "__main__":
    main()
