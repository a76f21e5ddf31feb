"""Cost of the security layer: egress policy + pinned connections, and sealed session logs.

    python benchmarks/bench_security.py [--quick]

* ``egress_get_loopback`` -- N sequential GET requests to a loopback HTTP server (a thread,
  port 0) through ``agentrig.host.egress_client`` (policy ``allow_private=("127.0.0.1:<port>",)``),
  against a plain ``httpx.AsyncClient`` to the same server in the same run (the floor);
  ms/request, interleaved batches, median.
* ``egress_check_url`` -- the pure ``check_url`` judgement of one URL (µs, best of N).
* ``jsonl_append_sealed`` / ``jsonl_load_sealed`` -- a 10,000-event session log appended
  one event at a time, then loaded, through the ``jsonl`` store with a ``sodium`` sealer,
  against the same store without one (the floor); events/s.  For these lines ``ratio`` is
  the slowdown ``floor / value`` (plain throughput over sealed throughput; lower is better).

No target is set by the issue for these, so ``target`` is ``null``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_per_call_ns, emit, gc_paused, median

from agentrig.builtins._jsonl_store import JsonlSessionStore
from agentrig.host import EgressPolicy, check_url, egress_client
from agentrig.llm import AssistantMessage, TextBlock, UserMessage
from agentrig.session import (
    AssistantMessageEvent,
    Session,
    SessionEvent,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
)


def ratio_line(
    name: str, value: float, floor: float, unit: str, *, slowdown: float, **extra: Any
) -> None:
    emit(name, value, unit, floor=round(floor, 3), ratio=round(slowdown, 3), target=None, **extra)


# ---- (a) egress ----------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: both clients reuse their connection
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    body = b'{"ok":true}'

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: Any) -> None:
        return None


async def _requests(client: httpx.AsyncClient, url: str, count: int) -> float:
    start = time.perf_counter()
    for _ in range(count):
        response = await client.get(url)
        assert response.status_code == 200, response
    return (time.perf_counter() - start) * 1000 / count


async def bench_egress(requests: int, rounds: int) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    url = f"http://127.0.0.1:{port}/ping"
    policy = EgressPolicy(allow_private=(f"127.0.0.1:{port}",))
    try:
        async with (
            egress_client(policy=policy) as guarded,
            httpx.AsyncClient(trust_env=False) as plain,
        ):
            await _requests(guarded, url, 20)  # warm up (connection, imports)
            await _requests(plain, url, 20)
            values: list[float] = []
            floors: list[float] = []
            for _ in range(rounds):
                values.append(await _requests(guarded, url, requests))
                floors.append(await _requests(plain, url, requests))
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    value, floor = median(values), median(floors)
    ratio_line(
        "egress_get_loopback",
        value,
        floor,
        "ms/request",
        slowdown=value / floor,
        requests=requests * rounds,
    )

    calls = 2_000 if requests < 500 else 20_000
    with gc_paused():
        ns = best_per_call_ns(
            lambda n: [check_url(url, policy=policy) for _ in range(n)], calls, repeats=5
        )
    emit("egress_check_url", ns / 1000, "us", target=None)


# ---- (b) sealed sessions ---------------------------------------------------------------------


def _events(count: int) -> list[SessionEvent]:
    session = Session("ses_bench")
    turn = 0
    while len(session.events) < count:
        turn += 1
        session.append(TurnStart(turn=turn))
        session.append(UserMessageEvent(message=UserMessage.of(f"question {turn}: " + "x" * 80)))
        session.append(
            AssistantMessageEvent(
                message=AssistantMessage(content=(TextBlock(text=f"answer {turn} " + "y" * 200),))
            )
        )
        session.append(TurnEnd(turn=turn, reason="completed"))
    return list(session.events)[:count]


async def _append_and_load(
    store: JsonlSessionStore, session_id: str, events: list[SessionEvent]
) -> tuple[float, float]:
    writer = await store.open_writer(session_id)
    start = time.perf_counter()
    for event in events:
        await writer.append([event])
    append_s = time.perf_counter() - start
    await writer.aclose()
    start = time.perf_counter()
    report = await store.load(session_id)
    load_s = time.perf_counter() - start
    if report.damaged or len(report.events) != len(events):
        raise RuntimeError(f"the benchmark log did not round-trip: {report.detail}")
    return len(events) / append_s, len(events) / load_s


async def bench_sealed(count: int, rounds: int) -> None:
    from importlib.metadata import entry_points

    events = _events(count)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        factory = entry_points(group="agentrig.sealers")["sodium"].load()
        sealer = factory({"options": {"directory": str(base / "keys")}})
        sealed = JsonlSessionStore(base / "sealed", sealer=sealer)
        plain = JsonlSessionStore(base / "plain")
        results: dict[str, list[float]] = {k: [] for k in ("sa", "sl", "pa", "pl")}
        for i in range(rounds):
            sa, sl = await _append_and_load(sealed, f"ses_s{i}", events)
            pa, pl = await _append_and_load(plain, f"ses_p{i}", events)
            results["sa"].append(sa)
            results["sl"].append(sl)
            results["pa"].append(pa)
            results["pl"].append(pl)
        sealed_bytes = (base / "sealed" / "ses_s0.jsonl").stat().st_size
        plain_bytes = (base / "plain" / "ses_p0.jsonl").stat().st_size
    for name, value_key, floor_key in (
        ("jsonl_append_sealed", "sa", "pa"),
        ("jsonl_load_sealed", "sl", "pl"),
    ):
        value, floor = median(results[value_key]), median(results[floor_key])
        ratio_line(name, value, floor, "events/s", slowdown=floor / value, events=count)
    emit("jsonl_sealed_size_ratio", sealed_bytes / plain_bytes, "x", target=None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="finish in under a minute")
    args = parser.parse_args()
    requests, egress_rounds, sealed_rounds = (200, 3, 1) if args.quick else (1000, 7, 3)

    async def run() -> None:
        await bench_egress(requests, egress_rounds)
        await bench_sealed(10_000, sealed_rounds)

    anyio.run(run)


if __name__ == "__main__":
    main()
