"""The cost of agentrig-otel: the W loop with the plugin enabled (no-op exporter) vs without.

* **W with otel** -- the workload of ``bench_loop.py`` (R runs of K tool rounds, scripted
  model, one no-op tool) in a runtime whose ``[otel]`` table enables the plugin with
  ``exporter = "none"`` (OpenTelemetry's ``OTEL_TRACES_EXPORTER=none``): every span is
  started by the SDK's tracer, made current, given its GenAI attributes and events and
  ended, and its ids go on every session event and outgoing ``traceparent``; no metric
  reader exists, so nothing is measured (docs/observability.md, "Cost").  The plugin uses
  OpenTelemetry's public API only: most of this is the SDK's span.
  Floor: the same passes in a runtime without the table (the plugin installed but inert),
  measured interleaved in the same process.  Target: at most 1.5x.
* **W with otel and dropping exporters** -- the pipeline the plugin builds for a deployment
  (``agentrig_otel.exporting_pipeline``: the SDK's batch span processor behind the plugin's
  counted queue bound, the periodic metric reader, the SDK's histograms) with exporters that
  drop what they get: a real pipeline with a no-op exporter, the exporting threads' CPU
  included.  Same floor; reported, not a target: beyond the plugin it measures the SDK's
  export machinery.  The line also says how many spans the exporter received and how many
  the pipeline dropped (counted by the plugin: none with the default queue).
* ``--cpu`` times the passes with the process's CPU time instead of the wall clock (robust
  to other processes on a shared machine) and adds an informational row: a listener of
  ``observe`` that does nothing (what the loop spends building observations for any
  listener).  (The row without metrics is gone: ``exporter = "none"`` measures none.)
* ``--instructions`` counts instructions instead (valgrind's callgrind, ``_instructions.py``):
  one W pass of 30 runs per variant, each in a child process, counting only the timed
  section; repeatable to about 0.5 % however loaded the machine is.  Beside the target line
  it reports the do-nothing ``observe`` listener and the plugin over OpenTelemetry's no-op
  tracer (its scopes and the context API without the SDK's spans); the dropping exporters'
  line is left out (its export thread would be counted with the loop).  ``--anatomy`` adds
  the least tracing the public API allows, part by part (``_otel_least.py``).

Each line's ``value`` / ``floor`` / ``ratio`` are the best passes of variant and floor; the
medians of the same passes are beside them (``median_value``, ``median_floor``,
``median_ratio``): on a loaded machine the best pass flatters whichever variant happened to
meet a quiet moment, the median says how the passes went.

Prints one JSON object per line (DESIGN §10); ``--quick`` finishes in well under a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import Any

from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import compare, median
from _instructions import CountingClock, build_helper, count
from _otel_least import LEAST, least_trace
from bench_loop import MODEL, NOOP, AgentrigW, K, _config, _memory

import agentrig
from agentrig.plugin import Observation, hookimpl

TARGET = 1.5


class DropSpans(SpanExporter):
    """A span exporter that drops what it gets (and counts it)."""

    def __init__(self) -> None:
        self.received = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.received += len(spans)
        return SpanExportResult.SUCCESS


class DropMetrics(MetricExporter):
    """A metric exporter that drops what it gets."""

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        return None


#: what the dropping pipeline's exporter received and the pipeline dropped (after shutdown)
DROPS: dict[str, Any] = {}


def _dropping_telemetry(stack: ExitStack) -> Any:
    """agentrig-otel as it deploys (the plugin's own pipeline: batch span processor, periodic
    metric reader), with exporters that drop what they get."""
    from agentrig_otel import Telemetry, exporting_pipeline

    spans = DropSpans()
    pipeline = exporting_pipeline(spans, DropMetrics())

    def shutdown() -> None:
        pipeline.shutdown()
        DROPS["spans_exported"] = spans.received
        DROPS["dropped"] = {f"{s}/{r}": n for (s, r), n in pipeline.drops.total.items()}

    stack.callback(shutdown)
    return Telemetry(pipeline.tracer, pipeline.metrics)


class NullListener:
    """An ``observe`` listener that does nothing: the loop builds its observations."""

    @hookimpl
    def observe(self, payload: Observation) -> None:
        return None


Variant = tuple[dict[str, Any], list[tuple[str, object]]]


def _noop_telemetry() -> Any:
    """agentrig-otel over OpenTelemetry's no-op tracer: its scopes, no SDK span."""
    from agentrig_otel import Telemetry
    from opentelemetry import trace

    return Telemetry(trace.NoOpTracer())


def _variants(cpu: bool, stack: ExitStack, names: Sequence[str] = ()) -> dict[str, Variant]:
    """name -> (extra config, plugins), the first the floor: ``names``, or the timed lines'."""
    made: dict[str, Callable[[], Variant]] = {
        "plain": lambda: ({}, []),
        "otel": lambda: ({"otel": {"exporter": "none"}}, []),
        "otel_dropping_exporters": lambda: (
            {},
            [("otel-dropping", _dropping_telemetry(stack))],
        ),
        "observe_listener": lambda: ({}, [("null-listener", NullListener())]),
        "otel_noop_tracer": lambda: ({}, [("otel-noop", _noop_telemetry())]),
    }
    for least in LEAST:
        made[least] = lambda least=least: ({}, [(least.replace("_", "-"), least_trace(least))])
    timed = ["plain", "otel", "otel_dropping_exporters", *(["observe_listener"] if cpu else [])]
    return {name: made[name]() for name in names or timed}


async def bench(runs: int, repeats: int, cpu: bool) -> None:
    calls = runs * (K + 1)
    with ExitStack() as pipelines:
        variants = _variants(cpu, pipelines)
        passes = await _measure(variants, runs, repeats, cpu)
    report(passes, runs, calls, cpu)


async def _measure(
    variants: dict[str, Variant],
    runs: int,
    repeats: int,
    cpu: bool,
) -> dict[str, list[float]]:
    """Every timed pass of each variant, in seconds (interleaved: all see the same machine)."""
    passes: dict[str, list[float]] = {name: [] for name in variants}
    async with AsyncExitStack() as stack:
        loops: dict[str, tuple[Any, AgentrigW]] = {}
        for name, (extra, plugins) in variants.items():
            w = AgentrigW()
            if cpu:
                w.clock = time.process_time
            rt = await stack.enter_async_context(
                agentrig.open_runtime(
                    {**_config(), **extra},
                    memory=_memory(),
                    overrides=[("providers", "local", w.provider)],
                    plugins=plugins,
                    environ={},
                )
            )
            loops[name] = (rt, w)
        assert not loops["plain"][0].hooks.has_listeners("observe")
        assert loops["otel"][0].hooks.has_listeners("observe")
        for rt, w in loops.values():  # warm-up
            await w.one_pass(rt, min(runs, 20))
        for _ in range(repeats):  # interleaved: all see the same machine state
            for name, (rt, w) in loops.items():
                passes[name].append(await w.one_pass(rt, runs))
    return passes


#: the variants counted by ``--instructions``, the floor first
COUNTED = ("plain", "observe_listener", "otel_noop_tracer", "otel")
COUNTED_RUNS = 30


async def counted_pass(name: str, runs: int) -> None:
    """One W pass of variant ``name`` with its runs counted (a child under callgrind)."""
    with ExitStack() as pipelines:
        extra, plugins = _variants(True, pipelines, [name])[name]
        w = AgentrigW()
        async with agentrig.open_runtime(
            {**_config(), **extra},
            memory=_memory(),
            overrides=[("providers", "local", w.provider)],
            plugins=plugins,
            environ={},
        ) as rt:
            for _ in range(2):  # warm-up, not counted
                await w.one_pass(rt, 20)
            w.clock = CountingClock()
            await w.one_pass(rt, runs)


def instructions(runs: int, anatomy: bool) -> None:
    """The lines in instructions per model call, each variant counted in a child."""
    calls = runs * (K + 1)
    per_call: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        helper = build_helper(Path(tmp))
        for name in (*COUNTED, *(LEAST if anatomy else ())):
            child = [sys.executable, __file__, "--count", name, "--runs", str(runs)]
            per_call[name] = count(child, helper, Path(tmp), name)[-1] / calls / 1000
    common = {"runs": runs, "rounds": K, "model": MODEL, "tool": NOOP.id}
    common["clock"] = "instructions (callgrind), one pass"
    common["load_average"] = [round(x, 2) for x in os.getloadavg()]
    common["floor_name"] = "same W runs, plugin installed but not enabled"
    reported = {"informational": True}
    lines = [
        ("w_otel_enabled_noop_exporter_instructions", "otel", {}),
        ("w_observe_listener_instructions", "observe_listener", reported),
        ("w_otel_noop_tracer_instructions", "otel_noop_tracer", reported),
        *((f"w_{name}_instructions", name, reported) for name in LEAST if name in per_call),
    ]
    for line, name, extra in lines:
        value, floor = per_call[name], per_call["plain"]
        compare(line, value, floor, "k instructions/model-call", TARGET, **common, **extra)


def report(passes: dict[str, list[float]], runs: int, calls: int, cpu: bool) -> None:
    """One JSON line per target (and informational) comparison: best of the passes, and
    their medians beside."""
    best = {name: min(each) / calls * 1e6 for name, each in passes.items()}
    middle = {name: median(each) / calls * 1e6 for name, each in passes.items()}
    clock = "process CPU time" if cpu else "wall clock"
    common = {"runs": runs, "rounds": K, "model": MODEL, "tool": NOOP.id, "clock": clock}
    common["passes"] = len(passes["plain"])
    common["load_average"] = [round(x, 2) for x in os.getloadavg()]
    common["floor_name"] = "same W runs, plugin installed but not enabled"
    suffix = "_cpu" if cpu else ""
    reported = {"informational": True}  # no target: information beside the target line
    lines: list[tuple[str, str, dict[str, Any]]] = [
        (f"w_otel_enabled_noop_exporter{suffix}", "otel", {}),
        # the SDK's export machinery, see the module docstring
        (f"w_otel_dropping_exporters{suffix}", "otel_dropping_exporters", reported | DROPS),
        (f"w_observe_listener{suffix}", "observe_listener", reported),
    ]
    for line, name, extra in lines:
        if name not in best:
            continue
        compare(
            line,
            best[name],
            best["plain"],
            "us/model-call",
            TARGET,
            statistic="best",
            median_value=round(middle[name], 3),
            median_floor=round(middle["plain"], 3),
            median_ratio=round(middle[name] / middle["plain"], 3),
            **common,
            **extra,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (< 1 minute)")
    parser.add_argument(
        "--cpu", action="store_true", help="time with process CPU time (a shared machine)"
    )
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions (valgrind's callgrind)"
    )
    parser.add_argument(
        "--anatomy",
        action="store_true",
        help="with --instructions: also the least tracing the public API allows, part by part",
    )
    parser.add_argument("--count", help=argparse.SUPPRESS)  # a child of --instructions
    parser.add_argument("--runs", type=int, default=COUNTED_RUNS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.count:
        asyncio.run(counted_pass(args.count, args.runs))
        return
    if args.instructions:
        instructions(args.runs, args.anatomy)
        return
    runs, repeats = (50, 3) if args.quick else (200, 7)
    if args.cpu:
        runs, repeats = (60, 5) if args.quick else (60, 15)
    asyncio.run(bench(runs, repeats, args.cpu))


if __name__ == "__main__":
    main()
