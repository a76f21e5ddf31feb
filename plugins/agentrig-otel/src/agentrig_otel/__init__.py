"""OpenTelemetry traces and metrics of agentrig runs (GenAI semantic conventions).

Configure it with an ``[otel]`` table in ``agentrig.toml``, or attach it in code with your
own providers::

    telemetry = Telemetry(provider.get_tracer("agentrig"), meters.get_meter("agentrig"))
    async with open_runtime(config, plugins=[("my-telemetry", telemetry)]) as rt: ...

See ``docs/observability.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig.plugin import lazy_exports

# name -> defining module, imported on first use (PEP 562): the autoloaded composition step
# lives in this package, and an unconfigured install must not import the OpenTelemetry SDK
_LAZY: dict[str, str] = {
    "Drops": "agentrig_otel._drops",
    "OtelConfig": "agentrig_otel._config",
    "Pipeline": "agentrig_otel._setup",
    "Telemetry": "agentrig_otel._telemetry",
    "build_pipeline": "agentrig_otel._setup",
    "exporting_pipeline": "agentrig_otel._setup",
    "redact": "agentrig_otel._telemetry",
}

__all__ = [
    "Drops",
    "OtelConfig",
    "Pipeline",
    "Telemetry",
    "build_pipeline",
    "exporting_pipeline",
    "redact",
]


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)


if TYPE_CHECKING:
    from agentrig_otel._config import OtelConfig
    from agentrig_otel._drops import Drops
    from agentrig_otel._setup import Pipeline, build_pipeline, exporting_pipeline
    from agentrig_otel._telemetry import Telemetry, redact
