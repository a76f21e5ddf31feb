"""The PostgreSQL session store (agentrig-postgres): what one append costs the client.

* **append** -- one-event batches appended by a session writer of the ``postgres`` store
  (psycopg's async connection waiting through anyio; one statement that inserts the row and
  sends the NOTIFY), on asyncio and on trio.  Floor: the same statement with the same
  parameters executed by psycopg's *synchronous* connection in the same process -- the least
  a Python client does per append.  Process CPU time (``time.process_time_ns``: the server's
  work is in its own process) and wall time per append, store and floor interleaved, best
  of ``--passes``.  The server is the tests' helper (``tests/plugins/_postgres_server.py``:
  Unix socket, ``fsync=off``).

Prints one JSON object per line (DESIGN §10) and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "plugins"))  # PostgreSQL

import psycopg
from _common import emit
from _postgres_server import postgres_server
from agentrig_postgres import CHANNEL, PostgresSessionStore

from agentrig.ids import SessionId
from agentrig.session import Session, SessionEvent, TurnStart, dump_event


def _events(session_id: str, count: int) -> list[SessionEvent]:
    session = Session(SessionId(session_id))
    return [session.append(TurnStart(turn=n)) for n in range(1, count + 1)]


async def _store_pass(dsn: str, session_id: str, count: int) -> tuple[float, float]:
    store = PostgresSessionStore(dsn)
    writer = await store.open_writer(session_id)
    events = _events(session_id, count)
    await writer.append(events[:5])  # connect, prepare the statement
    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
    for event in events[5:]:
        await writer.append([event])
    wall, cpu = time.perf_counter_ns() - wall, time.process_time_ns() - cpu
    await writer.aclose()
    await store.aclose()
    return wall / (count - 5) / 1e3, cpu / (count - 5) / 1e3


def _floor_pass(dsn: str, session_id: str, count: int) -> tuple[float, float]:
    statement = PostgresSessionStore(dsn).append_statement
    events = _events(session_id, count)
    with psycopg.connect(dsn, autocommit=True) as connection:

        def append(event: SessionEvent) -> None:
            payload = f"public {session_id} {event.seq}"
            params = (session_id, [event.seq], [dump_event(event)], CHANNEL, payload)
            connection.execute(statement, params)

        for event in events[:5]:
            append(event)
        wall, cpu = time.perf_counter_ns(), time.process_time_ns()
        for event in events[5:]:
            append(event)
        wall, cpu = time.perf_counter_ns() - wall, time.process_time_ns() - cpu
    return wall / (count - 5) / 1e3, cpu / (count - 5) / 1e3


def _best(passes: list[tuple[float, float]]) -> tuple[float, float]:
    return min(p[0] for p in passes), min(p[1] for p in passes)


def bench_append(dsn: str, backend: str, count: int, passes: int) -> None:
    store: list[tuple[float, float]] = []
    floor: list[tuple[float, float]] = []
    for n in range(passes):
        store.append(anyio.run(_store_pass, dsn, f"ses_{backend}_{n}", count, backend=backend))
        floor.append(_floor_pass(dsn, f"ses_floor_{backend}_{n}", count))
    (store_wall, store_cpu), (floor_wall, floor_cpu) = _best(store), _best(floor)
    for measure, value, base in (("cpu", store_cpu, floor_cpu), ("wall", store_wall, floor_wall)):
        emit(
            f"pg_append_{measure}_{backend}",
            value,
            "us/append",
            floor=round(base, 1),
            ratio=round(value / base, 2),
            floor_name="the same statement on psycopg's sync connection",
            appends=count - 5,
            passes=passes,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer appends (seconds)")
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    count = 205 if args.quick else 1005
    print(f"# load average before: {os.getloadavg()}", flush=True)
    with postgres_server() as server:
        dsn = server.create_database("bench")
        for backend in ("asyncio", "trio"):
            bench_append(dsn, backend, count, args.passes)
    print(f"# load average after: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
