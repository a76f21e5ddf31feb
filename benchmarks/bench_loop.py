"""Agent-loop cost per model call, against a bare asyncio floor and two peer frameworks.

    python benchmarks/bench_loop.py [--quick]

* **W** -- R runs of K tool rounds each: per run the scripted model calls a no-op tool K
  times, then answers.  Cost per model call = wall / (R x (K + 1)), best of several
  repetitions.  Compared with, in the same run:

  - the *bare floor*: a hand-written asyncio loop doing the same message appends (a list of
    dicts) and the same Python tool calls;
  - **pydantic-ai** (``FunctionModel`` returning the tool calls, then text) and the **OpenAI
    Agents SDK** (``Runner.run`` with a scripted ``Model``), each when installed -- a
    missing peer is skipped with a message on stderr.  Target: agentrig <= 1/10 of the
    faster peer.

  Every framework runs one fresh conversation per run (agentrig: one agent, created before
  the timed section, per run; the peers: one reusable agent, fresh history per run).
  The peers' fake models return a whole reply without yielding to the event loop, so the
  compared agentrig row streams from a scripted provider with ``checkpoint="reply"`` (one
  event-loop turn per reply; the cancel signal is still checked per chunk).  The default
  ``checkpoint="chunk"`` (a turn before every chunk, like a network stream) is reported as
  ``w_agentrig_chunk_checkpoints``, informational.
  Peak traced memory (tracemalloc) of one W pass is measured in a separate, untimed pass.
* **step cost vs history length** -- one more run of K rounds on a session pre-filled with
  10, 1,000 and 10,000 events; target: cost per step at 10,000 within 1.5x of that at 10.
* **1,000 concurrent agents** -- created through ``rt.agents.create`` (one scripted
  provider each), then all ``run()`` at once in one task group: traced memory and RSS per
  idle agent, and the total wall time (reported, no target).
* **memory per retained finished W run** -- R agents each run one W conversation and are
  kept (idle, session and history in memory): traced memory per run, against the same
  figure for each peer keeping its run results (pydantic-ai's ``AgentRunResult``, the
  OpenAI Agents SDK's ``RunResult``).  Target: agentrig <= 15 KiB per run (issue 20).
* **10,000 idle agents** -- 10,000 agents on one event loop, each after one finished W
  run, then a second turn of all of them at once: RSS per idle agent, wall times, and a
  check that every second turn answered (reported, no target).

Ratios are against floors measured in the same process and run; no absolute time is a
pass/fail criterion.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit

import agentrig
from agentrig.llm import AssistantMessage, TextBlock, UserMessage
from agentrig.session import AssistantMessageEvent, UserMessageEvent
from agentrig.testing import Reply, ScriptedCall, ScriptedProvider
from agentrig.tools import tool

K = 5  # tool rounds per run
PEER_TARGET = 0.1  # agentrig's cost per model call <= 1/10 of the faster peer's
STEP_TARGET = 1.5  # step cost at 10,000 events within 1.5x of the cost at 10
RETAINED_TARGET_KIB = 15.0  # traced memory per retained finished W run

# Run options handed to every agent (the identical-input guard is left on: each call of a
# run carries different arguments, as a real model's would).
MODEL = "bench-model"


def noop_body(x: int = 0) -> str:
    """Does nothing."""
    return "ok"


NOOP = tool(id="noop", description="Does nothing.", risk="inspect")(noop_body)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def rss_bytes() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux: RSS is not reported
        return 0


def run_replies(k: int = K) -> list[Reply]:
    """One run's script: k tool calls (distinct arguments), then the answer."""
    return [
        *(Reply(tool_calls=(ScriptedCall("noop", {"x": i}),)) for i in range(k)),
        Reply(text="done"),
    ]


# ---- the floor ---------------------------------------------------------------------------------
async def floor_pass(runs: int, k: int = K) -> float:
    """The same work by hand: dict messages, appends, the python tool call. Returns seconds.

    The "model" is a coroutine returning the scripted reply (awaited, no event-loop yield).
    """
    fn = noop_body

    async def model(messages: list[dict[str, Any]], i: int) -> dict[str, Any]:
        if i < k:
            call = {"id": f"call_{i}", "name": "noop", "arguments": {"x": i}}
            return {"role": "assistant", "tool_calls": [call]}
        return {"role": "assistant", "content": "done"}

    start = time.perf_counter()
    for _ in range(runs):
        messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
        for i in range(k + 1):
            reply = await model(messages, i)
            messages.append(reply)
            for call in reply.get("tool_calls", ()):
                result = fn(**call["arguments"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return time.perf_counter() - start


# ---- agentrig ----------------------------------------------------------------------------------
def _config(agents: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"providers": {"local": {"kind": "scripted"}}, "agents": agents or {}}


def _memory() -> agentrig.MemorySource:
    memory = agentrig.MemorySource()
    memory.add("tools", "noop", NOOP)
    return memory


class AgentrigW:
    """One runtime; each pass creates R fresh agents (untimed), then times their runs."""

    def __init__(self) -> None:
        self.provider = ScriptedProvider(checkpoint="reply")
        self.passes = 0
        #: what a pass is timed with (``time.process_time`` for CPU time on a shared machine)
        self.clock: Callable[[], float] = time.perf_counter
        self.create_s = float("inf")  # best per-agent creation time seen (reported apart)

    async def one_pass(
        self, rt: Any, runs: int, checkpoint: Literal["chunk", "reply"] = "reply"
    ) -> float:
        self.passes += 1
        self.provider.checkpoint = checkpoint
        self.provider.requests.clear()  # kept by the scripted provider; not ours to measure
        for _ in range(runs):
            self.provider.add(*run_replies())
        created = time.perf_counter()
        agents = [
            await rt.agents.create(
                f"w{self.passes}-{i}", provider="local", model=MODEL, tools=[NOOP]
            )
            for i in range(runs)
        ]
        self.create_s = min(self.create_s, (time.perf_counter() - created) / runs)
        gc.collect()
        start = self.clock()
        for agent in agents:
            result = await agent.run("go")
            assert result.value == "done", result.value
        elapsed = self.clock() - start
        for agent in agents:
            await rt.agents.dispose(agent.id)
        return elapsed


# ---- peers ---------------------------------------------------------------------------------------
PeerPass = Callable[..., Awaitable[float]]  # (runs, keep=None) -> seconds


def pydantic_ai_pass() -> PeerPass | None:
    try:
        from pydantic_ai import Agent as PaiAgent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import AgentInfo, FunctionModel
    except ImportError:
        log("pydantic-ai not installed: skipped (pip install pydantic-ai-slim)")
        return None

    state = {"n": 0}

    def model_fn(messages: list[Any], info: AgentInfo) -> ModelResponse:
        i = state["n"] % (K + 1)
        state["n"] += 1
        if i < K:
            return ModelResponse(parts=[ToolCallPart("noop", {"x": i}, tool_call_id=f"call_{i}")])
        return ModelResponse(parts=[TextPart("done")])

    agent = PaiAgent(FunctionModel(model_fn))

    @agent.tool_plain
    def noop(x: int = 0) -> str:
        """Does nothing."""
        return "ok"

    async def one_pass(runs: int, keep: list[Any] | None = None) -> float:
        state["n"] = 0
        start = time.perf_counter()
        for _ in range(runs):
            result = await agent.run("go")
            assert result.output == "done", result.output
            if keep is not None:
                keep.append(result)
        return time.perf_counter() - start

    return one_pass


def openai_agents_pass() -> PeerPass | None:
    try:
        from agents import Agent as OaAgent
        from agents import ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
        from agents.models.interface import Model
        from openai.types.responses import (
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
        )
    except ImportError:
        log("openai-agents not installed: skipped (pip install openai-agents)")
        return None

    set_tracing_disabled(True)  # no trace export: we measure the loop, not the exporter

    class ScriptedModel(Model):
        def __init__(self) -> None:
            self.n = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            i = self.n % (K + 1)
            self.n += 1
            if i < K:
                output: list[Any] = [
                    ResponseFunctionToolCall(
                        arguments=json.dumps({"x": i}),
                        call_id=f"call_{i}",
                        name="noop",
                        type="function_call",
                        id=f"fc_{i}",
                        status="completed",
                    )
                ]
            else:
                output = [
                    ResponseOutputMessage(
                        id="msg",
                        content=[
                            ResponseOutputText(text="done", type="output_text", annotations=[])
                        ],
                        role="assistant",
                        status="completed",
                        type="message",
                    )
                ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    def noop(x: int = 0) -> str:
        """Does nothing."""
        return "ok"

    model = ScriptedModel()
    agent = OaAgent(name="bench", instructions=None, model=model, tools=[noop])

    async def one_pass(runs: int, keep: list[Any] | None = None) -> float:
        model.n = 0
        start = time.perf_counter()
        for _ in range(runs):
            result = await Runner.run(agent, "go", max_turns=K + 2)
            assert result.final_output == "done", result.final_output
            if keep is not None:
                keep.append(result)
        return time.perf_counter() - start

    return one_pass


# ---- W -------------------------------------------------------------------------------------------
async def traced_peak(fn: Callable[[], Awaitable[Any]]) -> int:
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    await fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak - base


async def bench_w(runs: int, repeats: int) -> None:
    calls = runs * (K + 1)
    peers: dict[str, PeerPass] = {}
    for name, make in (("pydantic_ai", pydantic_ai_pass), ("openai_agents", openai_agents_pass)):
        one = make()
        if one is not None:
            peers[name] = one
    w = AgentrigW()
    best: dict[str, float] = {
        "floor": float("inf"),
        "agentrig": float("inf"),
        "agentrig_chunk_checkpoints": float("inf"),
    }
    best.update({name: float("inf") for name in peers})
    async with agentrig.open_runtime(
        _config(), memory=_memory(), overrides=[("providers", "local", w.provider)], environ={}
    ) as rt:
        await w.one_pass(rt, min(runs, 20))  # warm-up (imports, plans, caches)
        for one in peers.values():
            await one(min(runs, 20))
        for _ in range(repeats):  # interleaved, so all see the same machine state
            best["floor"] = min(best["floor"], await floor_pass(runs))
            best["agentrig"] = min(best["agentrig"], await w.one_pass(rt, runs))
            best["agentrig_chunk_checkpoints"] = min(
                best["agentrig_chunk_checkpoints"], await w.one_pass(rt, runs, "chunk")
            )
            for name, one in peers.items():
                best[name] = min(best[name], await one(runs))

        # peak traced memory of one pass each (tracemalloc slows code down: untimed)
        peaks = {
            "floor": await traced_peak(lambda: floor_pass(runs)),
            "agentrig": await traced_peak(lambda: w.one_pass(rt, runs)),
        }
        for name, one in peers.items():
            peaks[name] = await traced_peak(lambda one=one: one(runs))  # type: ignore[misc]

    per_call = {name: seconds / calls * 1e6 for name, seconds in best.items()}  # us
    floor_us = per_call["floor"]
    emit("w_floor_bare_asyncio", floor_us, "us/model-call", runs=runs, rounds=K)
    for name in ("agentrig", "agentrig_chunk_checkpoints", *peers):
        emit(
            f"w_{name}",
            per_call[name],
            "us/model-call",
            floor=round(floor_us, 3),
            ratio=round(per_call[name] / floor_us, 1),
            target=None,
            floor_name="bare asyncio loop, same appends and tool calls",
            runs=runs,
            rounds=K,
        )
    emit("w_agentrig_agent_create", w.create_s * 1000, "ms/agent", note="untimed in W")
    if peers:
        fastest = min(peers, key=lambda n: per_call[n])
        ratio = per_call["agentrig"] / per_call[fastest]
        emit(
            "w_agentrig_vs_faster_peer",
            per_call["agentrig"],
            "us/model-call",
            floor=round(per_call[fastest], 3),
            ratio=round(ratio, 3),
            target=PEER_TARGET,
            ok=ratio <= PEER_TARGET,
            floor_name=f"{fastest} (faster peer), same workload",
        )
    else:
        log("no peer installed: the peer comparison is skipped")
    for name, peak in peaks.items():
        emit(f"w_peak_traced_{name}", peak / 1024, "KiB", runs=runs, rounds=K)


# ---- step cost vs history length -----------------------------------------------------------------
def prefill(agent: Any, events: int) -> None:
    session = agent.session
    for i in range(events // 2):
        session.append(UserMessageEvent(message=UserMessage.of(f"question {i}")))
        session.append(
            AssistantMessageEvent(
                message=AssistantMessage(
                    content=(TextBlock(text=f"answer {i}"),), stop_reason="end"
                )
            )
        )
    if events % 2:
        session.append(UserMessageEvent(message=UserMessage.of("one more")))


async def bench_step_cost(samples: int, batch: int) -> None:
    """Per size: ``batch`` pre-filled agents run back to back (timed together), per sample."""
    sizes = (10, 1_000, 10_000)
    provider = ScriptedProvider()
    results: dict[int, list[float]] = {n: [] for n in sizes}
    async with agentrig.open_runtime(
        _config(), memory=_memory(), overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        serial = 0
        for sample in range(samples + 1):  # the first round is a warm-up
            for size in sizes:  # interleaved
                provider.requests.clear()
                agents = []
                for _ in range(batch):
                    serial += 1
                    provider.add(*run_replies())
                    agent = await rt.agents.create(
                        f"s{serial}", provider="local", model=MODEL, tools=[NOOP]
                    )
                    prefill(agent, size)
                    agent.session.derive_messages()  # the history before is already projected
                    agents.append(agent)
                gc.collect()
                start = time.perf_counter()
                for agent in agents:
                    await agent.run("go")
                elapsed = time.perf_counter() - start
                if sample:
                    results[size].append(elapsed / (batch * (K + 1)) * 1000)
                for agent in agents:
                    await rt.agents.dispose(agent.id)
                del agents, agent
    cost = {n: statistics.median(v) for n, v in results.items()}
    for size in sizes:
        emit(f"step_cost_{size}_events", cost[size], "ms/step", samples=samples, batch=batch)
    ratio = cost[10_000] / cost[10]
    emit(
        "step_cost_flatness_10000_vs_10",
        cost[10_000],
        "ms/step",
        floor=round(cost[10], 4),
        ratio=round(ratio, 3),
        target=STEP_TARGET,
        ok=ratio <= STEP_TARGET,
        floor_name="step cost on a 10-event session, same run",
    )


# ---- 1,000 concurrent agents ---------------------------------------------------------------------
async def bench_concurrent(count: int) -> None:
    providers = [ScriptedProvider(run_replies()) for _ in range(count)]
    overrides = [("providers", f"p{i}", p) for i, p in enumerate(providers)]
    async with agentrig.open_runtime(
        _config(), memory=_memory(), overrides=overrides, environ={}
    ) as rt:
        # warm-up agent outside the measurement (first-use caches)
        warm = await rt.agents.create("warm", provider="local", model=MODEL, tools=[NOOP])
        await rt.agents.dispose(warm.id)
        gc.collect()
        rss_before = rss_bytes()
        tracemalloc.start()
        traced_before, _ = tracemalloc.get_traced_memory()
        agents = [
            await rt.agents.create(f"c{i}", provider=f"p{i}", model=MODEL, tools=[NOOP])
            for i in range(count)
        ]
        gc.collect()
        traced_after, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss_after = rss_bytes()

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for agent in agents:
                tg.start_soon(agent.run, "go")
        wall = time.perf_counter() - start
        rss_ran = rss_bytes()
        assert all(len(p.requests) == K + 1 for p in providers)
    emit(
        f"concurrent_{count}_agents_traced_per_idle_agent",
        (traced_after - traced_before) / count / 1024,
        "KiB/agent",
    )
    if rss_before:
        emit(
            f"concurrent_{count}_agents_rss_per_idle_agent",
            (rss_after - rss_before) / count / 1024,
            "KiB/agent",
        )
        emit(
            f"concurrent_{count}_agents_rss_growth_after_runs",
            (rss_ran - rss_after) / 1024 / 1024,
            "MiB",
        )
    emit(
        f"concurrent_{count}_agents_wall",
        wall * 1000,
        "ms",
        model_calls=count * (K + 1),
        per_model_call_ms=round(wall * 1000 / (count * (K + 1)), 4),
    )


# ---- memory per retained finished run ---------------------------------------------------------
async def retained_traced(fn: Callable[[list[Any]], Awaitable[Any]]) -> int:
    """Traced bytes still held after ``fn(keep)`` ran and a collection (kept in ``keep``)."""
    keep: list[Any] = []
    gc.collect()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    await fn(keep)
    gc.collect()
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert keep
    return held - base


async def bench_retained(runs: int) -> None:
    provider = ScriptedProvider(checkpoint="reply")
    peers: dict[str, PeerPass] = {}
    for name, make in (("pydantic_ai", pydantic_ai_pass), ("openai_agents", openai_agents_pass)):
        one = make()
        if one is not None:
            peers[name] = one
    async with agentrig.open_runtime(
        _config(), memory=_memory(), overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        serial = 0

        async def agentrig_runs(keep: list[Any]) -> None:
            nonlocal serial
            for _ in range(runs):
                serial += 1
                agent = await rt.agents.create(
                    f"r{serial}", provider="local", model=MODEL, tools=[NOOP]
                )
                result = await agent.run("go")
                assert result.value == "done", result.value
                keep.append(agent)
            provider.requests.clear()  # the scripted provider's own record, not the agents'

        # the scripted provider keeps its script: written before measuring, not ours to count
        for _ in range(2 * runs):
            provider.add(*run_replies())
        await agentrig_runs([])  # warm-up (first-use caches, interned payloads)
        held = {"agentrig": await retained_traced(agentrig_runs)}
        for name, one in peers.items():
            await one(min(runs, 20))  # warm-up
            held[name] = await retained_traced(lambda keep, one=one: one(runs, keep))
    per_run = {name: value / runs / 1024 for name, value in held.items()}
    emit(
        "w_retained_traced_per_finished_run_agentrig",
        per_run["agentrig"],
        "KiB/run",
        target=RETAINED_TARGET_KIB,
        ok=per_run["agentrig"] <= RETAINED_TARGET_KIB,
        kept="the idle agent: its session log, derived history and configuration",
        runs=runs,
        rounds=K,
    )
    for name in peers:
        emit(
            f"w_retained_traced_per_finished_run_{name}",
            per_run[name],
            "KiB/run",
            kept="the run result (its messages)",
            runs=runs,
            rounds=K,
        )


# ---- 10,000 idle agents ------------------------------------------------------------------------
async def bench_idle(count: int) -> None:
    provider = ScriptedProvider(checkpoint="reply")
    async with agentrig.open_runtime(
        _config(), memory=_memory(), overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        warm = await rt.agents.create("warm", provider="local", model=MODEL, tools=[NOOP])
        provider.add(*run_replies())
        await warm.run("go")
        await rt.agents.dispose(warm.id)
        provider.requests.clear()
        gc.collect()
        rss_before = rss_bytes()
        start = time.perf_counter()
        agents = []
        for i in range(count):  # one finished W run each, one after the other
            provider.add(*run_replies())
            agent = await rt.agents.create(f"i{i}", provider="local", model=MODEL, tools=[NOOP])
            result = await agent.run("go")
            assert result.value == "done", result.value
            agents.append(agent)
            if i % 500 == 0:
                provider.requests.clear()
        first = time.perf_counter() - start
        provider.requests.clear()
        gc.collect()
        rss_idle = rss_bytes()
        # all of them at once: a second turn each (the same reply, so the order of the
        # shared script does not matter)
        provider.add(*(Reply(text="again") for _ in range(count)))
        answers: list[str] = []

        async def second(agent: Any) -> None:
            answers.append((await agent.run("and again")).value)

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for agent in agents:
                tg.start_soon(second, agent)
        both = time.perf_counter() - start
        assert answers == ["again"] * count, "an idle agent did not answer its second turn"
        assert len({len(agent.session) for agent in agents}) == 1  # the same log shape each
    extra: dict[str, Any] = {"agents": count, "model_calls_first_turn": count * (K + 1)}
    if rss_before:
        extra["rss_per_idle_agent_kib"] = round((rss_idle - rss_before) / count / 1024, 2)
    emit(f"idle_{count}_agents_first_turns_sequential", first, "s", **extra)
    emit(
        f"idle_{count}_agents_second_turn_all_at_once",
        both,
        "s",
        agents=count,
        all_answered=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (< 1 minute)")
    parser.add_argument(
        "--only",
        choices=("w", "step", "concurrent", "retained", "idle"),
        default=None,
        help="one section only",
    )
    args = parser.parse_args()
    runs, repeats, samples, batch = (50, 3, 3, 4) if args.quick else (200, 5, 7, 10)
    # the concurrent section first: its RSS deltas are cleanest in a fresh process
    if args.only in (None, "concurrent"):
        asyncio.run(bench_concurrent(1000))
    if args.only in (None, "w"):
        asyncio.run(bench_w(runs, repeats))
    if args.only in (None, "step"):
        asyncio.run(bench_step_cost(samples, batch))
    if args.only in (None, "retained"):
        asyncio.run(bench_retained(runs))
    if args.only in (None, "idle"):
        asyncio.run(bench_idle(1_000 if args.quick else 10_000))


if __name__ == "__main__":
    main()
