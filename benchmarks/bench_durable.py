"""The cost of durable runs (agentrig-dbos) on the SQLite default.

* **W durable** -- the workload of ``bench_loop.py`` (R runs of K tool rounds, scripted model,
  one no-op tool), each run a durable run (``durable.run``: a DBOS workflow on its SQLite
  system database, journaled in SQLite, a JSONL session per run).  Floor: the same runs
  journaled with the built-in ``SqliteJournal`` and the same JSONL store, without DBOS,
  measured interleaved in the same process.  Target: at most 3x per model call.

* **queued throughput** -- N W-workload runs submitted to the queue (``durable.submit``)
  and executed by 1, 2 and 4 ``worker`` processes sharing a PostgreSQL the benchmark starts
  itself (``tests/plugins/_postgres_server.py``, the tests' helper): DBOS system database,
  journal and sessions all on it, a fresh database per worker count.  The clock runs from
  the first submit until the database counts every run finished; runs/second per worker
  count and the scaling 2w/1w and 4w/1w.  Each worker takes at most ``--per-worker`` runs
  at once.  The model answers by round (restart-proof), so any worker can take any run.
  Every process shares the machine's cores (``cores`` in the output).

Prints one JSON object per line (DESIGN §10); ``--quick`` finishes in under a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "plugins"))  # PostgreSQL

from _common import compare, emit
from _postgres_server import postgres_server
from agentrig_dbos import DURABLE
from bench_loop import MODEL, NOOP, K, _memory, run_replies

import agentrig
from agentrig.agent import agent_configs
from agentrig.journal import SqliteJournal, journaled_runtime
from agentrig.llm import ModelRequest
from agentrig.testing import Reply, ScriptedCall, ScriptedProvider

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

            plain_config = agent_configs(rt_plain.loaded)["w"]

            async def journaled_pass(n: int) -> float:
                nonlocal passes
                passes += 1
                for _ in range(n):
                    plain_provider.add(*run_replies())
                agents = [
                    await rt_plain.agents.create(
                        f"p{passes}-{i}",
                        plain_config,
                        session_id=f"s{passes}-{i}",
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


# ---- queued-run throughput on PostgreSQL ------------------------------------------------------
class ByRound(ScriptedProvider):
    """The W script answered by the number of tool results so far: any worker, any run."""

    def _take(self, request: ModelRequest) -> Reply:
        done = sum(1 for m in request.messages if m.role == "tool")
        if done < K:
            return Reply(tool_calls=(ScriptedCall("noop", {"x": done}, id=f"call_{done}"),))
        return Reply(text="done")


def _queued_config(dsn: str, per_worker: int) -> dict[str, Any]:
    return {
        "providers": {"local": {"kind": "scripted"}},
        "tools": {"noop": {}},
        "session_stores": {"store": {"kind": "postgres", "options": {"dsn": dsn}}},
        "agents": {
            "w": {"provider": "local", "model": MODEL, "tools": ["noop"], "session_store": "store"}
        },
        "dbos": {
            "system_database_url": dsn,
            "queues": {"agentrig": {"worker_concurrency": per_worker}},
        },
    }


async def worker(settings: dict[str, Any], executor: str) -> None:
    """A worker process: executes queued runs until terminated."""
    async with agentrig.open_runtime(
        settings,
        memory=_memory(),
        overrides=[("providers", "local", ByRound(checkpoint="reply"))],
        environ={},
    ) as rt:
        await rt.services.require(DURABLE).launch(executor_id=executor)
        print("ready", flush=True)
        await asyncio.Event().wait()


def _wait_finished(dsn: str, runs: int) -> None:
    """Block until the system database counts ``runs`` finished runs (polled every 20 ms)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as connection:
        while True:
            row = connection.execute(
                "SELECT count(*) FROM dbos.workflow_status WHERE status = 'SUCCESS'"
            ).fetchone()
            if row is not None and row[0] >= runs:
                return
            time.sleep(0.02)


async def queued_pass(dsn: str, workers: int, runs: int, per_worker: int) -> float:
    """Seconds for ``workers`` worker processes to finish ``runs`` queued runs."""
    settings = _queued_config(dsn, per_worker)
    command = [sys.executable, __file__, "--worker", json.dumps(settings)]
    processes = [
        await asyncio.create_subprocess_exec(*command, f"e{i}", stdout=subprocess.PIPE)
        for i in range(workers)
    ]
    try:
        for process in processes:
            assert process.stdout is not None
            line = await process.stdout.readline()
            assert line.strip() == b"ready", f"worker did not start: {line!r}"
        async with agentrig.open_runtime(settings, memory=_memory(), environ={}) as rt:
            durable = rt.services.require(DURABLE)
            start = time.perf_counter()
            ids = [await durable.submit("w", "go", run_id=f"q{i}") for i in range(runs)]
            await asyncio.to_thread(_wait_finished, dsn, runs)
            elapsed = time.perf_counter() - start
            for run_id in ids:
                result = await durable.result(run_id)
                assert result.text == "done", result.text
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            await process.wait()
    return elapsed


async def bench_queued(runs: int, per_worker: int) -> None:
    rates: dict[int, float] = {}
    with postgres_server() as server:
        for workers in (1, 2, 4):
            dsn = server.create_database(f"w{workers}")
            rates[workers] = runs / await queued_pass(dsn, workers, runs, per_worker)
            emit(
                f"queued_throughput_postgres_{workers}w",
                rates[workers],
                "runs/s",
                workers=workers,
                runs=runs,
                rounds=K,
                per_worker=per_worker,
                cores=os.cpu_count(),
            )
    for workers in (2, 4):
        emit(
            f"queued_scaling_postgres_{workers}w_over_1w",
            rates[workers] / rates[1],
            "x",
            cores=os.cpu_count(),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (under a minute)")
    parser.add_argument("--per-worker", type=int, default=4, help="runs at once per worker")
    parser.add_argument(
        "--worker", nargs=2, metavar=("SETTINGS", "EXECUTOR"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.worker:
        asyncio.run(worker(json.loads(args.worker[0]), args.worker[1]))
        return
    runs, repeats = (20, 2) if args.quick else (100, 5)
    asyncio.run(bench(runs, repeats))
    asyncio.run(bench_queued(40 if args.quick else 200, args.per_worker))


if __name__ == "__main__":
    main()
