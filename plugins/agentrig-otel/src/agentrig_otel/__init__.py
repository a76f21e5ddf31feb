"""OpenTelemetry traces and metrics of agentrig runs (GenAI semantic conventions).

Configure it with an ``[otel]`` table in ``agentrig.toml``, or attach it in code with your
own providers::

    telemetry = Telemetry(provider.get_tracer("agentrig"), meters.get_meter("agentrig"))
    async with open_runtime(config, plugins=[("my-telemetry", telemetry)]) as rt: ...

See ``docs/observability.md``.
"""

from agentrig_otel._config import OtelConfig
from agentrig_otel._setup import Pipeline, build_pipeline
from agentrig_otel._telemetry import Telemetry, redact

__all__ = ["OtelConfig", "Pipeline", "Telemetry", "build_pipeline", "redact"]
