"""agentrig-otel offline: run one agent and print the span tree it produced.

    python examples/otel/run.py

The ``[otel]`` table in ``agentrig.toml`` enables the plugin with the console exporter, so
the spans are also printed as JSON while the runtime closes.  This script adds a second,
in-memory listener so it can print the same spans as a tree.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from agentrig_otel import Telemetry
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import agentrig

HERE = Path(__file__).resolve().parent


@agentrig.tool(risk="inspect")
def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


def tree(spans: tuple[ReadableSpan, ...]) -> list[str]:
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent, []).append(span)
    lines: list[str] = []

    def walk(parent: int | None, depth: int) -> None:
        for span in sorted(children.get(parent, []), key=lambda s: s.start_time or 0):
            took = ((span.end_time or 0) - (span.start_time or 0)) / 1e6
            lines.append(f"{'  ' * depth}{span.name}  ({took:.2f} ms)")
            walk(span.context.span_id, depth + 1)

    walk(None, 0)
    return lines


async def main() -> None:
    memory = agentrig.MemorySource()
    memory.add("tools", "word_count", word_count)
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    mirror = Telemetry(provider.get_tracer("agentrig"))
    async with agentrig.open_runtime(
        HERE / "agentrig.toml", memory=memory, plugins=[("span-tree", mirror)]
    ) as rt:
        result = await rt.agent("assistant").run("How many words: traces make agents visible?")
        print(f"answer: {result.value}")
    print("span tree:")
    for line in tree(spans.get_finished_spans()):
        print("  " + line)


if __name__ == "__main__":
    anyio.run(main)
