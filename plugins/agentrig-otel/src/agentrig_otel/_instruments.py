"""The plugin's histograms, created on an OpenTelemetry meter and recorded through it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry.metrics import Meter

__all__ = ["DURATION_BOUNDARIES", "TOKEN_BOUNDARIES", "Instruments"]

#: ``gen_ai.client.token.usage``: the GenAI semantic conventions' ExplicitBucketBoundaries
TOKEN_BOUNDARIES: tuple[int, ...] = (
    1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
)  # fmt: skip
#: ``gen_ai.client.operation.duration`` (seconds); the plugin's tool durations use them too
DURATION_BOUNDARIES: tuple[float, ...] = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip
#: distinct attribute sets kept for reuse (beyond it the cache starts over)
MAX_ATTRIBUTE_SETS = 1024


class Instruments:
    """``gen_ai.client.token.usage``, ``gen_ai.client.operation.duration`` and
    ``agentrig.tool.duration``, with the attribute sets of their points built once each."""

    def __init__(self, meter: Meter) -> None:
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage",
            "{token}",
            "Tokens per model call",
            explicit_bucket_boundaries_advisory=TOKEN_BOUNDARIES,
        )
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            "s",
            "Model call duration",
            explicit_bucket_boundaries_advisory=DURATION_BOUNDARIES,
        )
        # its count is the number of calls by tool and outcome: no separate counter
        self.tool_duration = meter.create_histogram(
            "agentrig.tool.duration",
            "s",
            "Tool calls by tool and outcome",
            explicit_bucket_boundaries_advisory=DURATION_BOUNDARIES,
        )
        self._call_sets: dict[tuple[Any, ...], tuple[dict[str, Any], ...]] = {}
        self._tool_sets: dict[tuple[str, str], dict[str, Any]] = {}

    def model_call(self, data: Mapping[str, Any]) -> None:
        """A model call's token and duration points."""
        outcome = data.get("outcome")
        error = None if outcome == "success" else data.get("error_type") or str(outcome)
        key = (
            str(data.get("provider_kind") or data.get("provider") or ""),
            str(data.get("model") or ""),
            data.get("response_model"),
            error,
        )
        sets = self._call_sets.get(key)
        if sets is None:
            if len(self._call_sets) > MAX_ATTRIBUTE_SETS:
                self._call_sets.clear()
            sets = self._call_sets[key] = _call_attributes(*key)
        usage = data.get("usage")
        if usage is not None:
            self.tokens.record(usage.prompt, sets[0])
            self.tokens.record(usage.completion, sets[1])
        self.duration.record(float(data.get("duration_ms") or 0.0) / 1000, sets[2])

    def tool_call(self, data: Mapping[str, Any]) -> None:
        """A tool call's duration point, by tool and outcome."""
        key = (str(data.get("tool") or ""), str(data.get("status") or "ok"))
        attributes = self._tool_sets.get(key)
        if attributes is None:
            if len(self._tool_sets) > MAX_ATTRIBUTE_SETS:
                self._tool_sets.clear()
            attributes = self._tool_sets[key] = {
                "gen_ai.tool.name": key[0],
                "agentrig.tool.status": key[1],
            }
        self.tool_duration.record(float(data.get("duration_ms") or 0.0) / 1000, attributes)


def _call_attributes(
    provider: str, model: str, response_model: Any, error: str | None
) -> tuple[dict[str, Any], ...]:
    """The attribute sets of a model call's input-token, output-token and duration points."""
    common: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
    }
    if response_model:
        common["gen_ai.response.model"] = str(response_model)
    duration = {**common, "error.type": error} if error is not None else common
    return (
        {**common, "gen_ai.token.type": "input"},
        {**common, "gen_ai.token.type": "output"},
        duration,
    )
