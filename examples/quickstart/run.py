"""The quickstart demo: one agent, two tools, a steering plugin, a streamed transcript.

Run it from the repository root with ``python3 dev.py demo`` (or ``python
examples/quickstart/run.py`` inside the venv).  Everything is offline: the model is the
built-in ``scripted`` provider replaying the script in ``agentrig.toml``.
"""

from __future__ import annotations

import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio

import agentrig
from agentrig.llm import (
    FinishChunk,
    ModelInfo,
    Pricing,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    ToolResultChunk,
)
from agentrig.session import SessionEvent, SteeringMessage

HERE = Path(__file__).resolve().parent
PROMPT = "What's the weather like in Lisbon right now?"

# Illustrative prices for the scripted model (USD per 1M tokens) -- not any vendor's.
DEMO_PRICING = Pricing(input="3.00", output="15.00")


class FahrenheitPlugin:
    """A lifecycle plugin: when a turn is about to end with a temperature given only in
    Celsius, steer the agent once to add Fahrenheit.  Steering keeps the turn going."""

    def __init__(self) -> None:
        self.steered = False

    @agentrig.hookimpl
    async def turn_stopping(self, payload: Any) -> None:
        message = payload.last_message
        text = message.text if message is not None else ""
        if not self.steered and "°C" in text and "°F" not in text:
            self.steered = True
            payload.agent.steer("Please also give the temperature in Fahrenheit.")


def _out(text: str = "", end: str = "\n") -> None:
    sys.stdout.write(text + end)
    sys.stdout.flush()


async def main() -> None:
    # The two tools are named in agentrig.toml as "quickstart_tools.py:<function>".
    async with agentrig.open_runtime(
        HERE / "agentrig.toml",
        resolver=agentrig.env_resolver(),
        plugins=[("fahrenheit", FahrenheitPlugin())],
    ) as rt:
        models = rt.models
        models.register(
            ModelInfo(
                model="scripted-demo",
                context_window=32_000,
                pricing=DEMO_PRICING,
                source="illustrative prices for the demo",
            )
        )
        agent = rt.agent("assistant")
        # Steering is a fact of the session log, not of the model's stream: collect it as it
        # is logged and print it where it entered -- before the next model response.
        steering: list[str] = []

        def collect_steering(event: SessionEvent) -> None:
            if isinstance(event.data, SteeringMessage):
                steering.append(event.data.message.text)

        agent.session.subscribe(collect_steering)

        _out(f"[user]      {PROMPT}")
        stream = agent.stream(PROMPT)
        calls: dict[int, list[str]] = {}
        at_line_start = True
        new_response = True
        async for chunk in stream:
            if new_response and not isinstance(chunk, ToolResultChunk):
                new_response = False
                for text in steering:
                    _out(f"[steer]     {text}")
                steering.clear()
            if isinstance(chunk, TextDelta):
                if at_line_start:
                    _out("[assistant] ", end="")
                    at_line_start = False
                _out(chunk.text, end="")
            elif isinstance(chunk, ToolCallStart):
                calls[chunk.index] = [chunk.name]
            elif isinstance(chunk, ToolCallDelta) and chunk.index in calls:
                calls[chunk.index].append(chunk.arguments)
            elif isinstance(chunk, FinishChunk):
                if not at_line_start:
                    _out()
                    at_line_start = True
                for name, *arguments in calls.values():
                    _out(f"[tool call] {name}({''.join(arguments)})")
                calls.clear()
                new_response = True
            elif isinstance(chunk, ToolResultChunk):
                _out(f"[result]    {chunk.name} -> {chunk.status}: {chunk.text}")

        result = stream.result
        record = result.invocation
        usage = record.usage
        _out()
        _out(f"answer:  {result.value}")
        _out(
            f"run:     {record.outcome}, {record.rounds} model calls, turn {record.turn}, "
            f"{record.duration_ms:.1f} ms"
        )
        if usage is not None:
            _out(
                f"usage:   {usage.prompt} prompt + {usage.completion} completion "
                f"= {usage.total} tokens"
            )
            cost: Decimal | None = models.cost(record.model or "", usage)
            _out(
                f"cost:    ${cost:.6f} (illustrative prices: ${DEMO_PRICING.input} / "
                f"${DEMO_PRICING.output} per 1M input / output tokens; not a real model's)"
            )
        kinds = list(dict.fromkeys(e.type for e in agent.session.events))
        _out(f"session: {agent.session_id}, {len(agent.session)} events in the log:")
        _out("         " + ", ".join(kinds))
    _out("runtime closed cleanly: " + str(rt.closed and rt.close_report == ()))


if __name__ == "__main__":
    anyio.run(main)
