"""The autoloaded part of agentrig-otel: one composition step, inert without ``[otel]``.

Nothing listens to observations unless the config enables the plugin, so an installed but
unconfigured agentrig-otel costs the loop nothing -- and its start nothing: the
OpenTelemetry SDK is imported only then.
"""

from __future__ import annotations

import anyio.to_thread

from agentrig.plugin import Composition, compose_step

__all__ = ["compose_otel"]


@compose_step("check")
def compose_otel(payload: Composition) -> None:
    """Attach the telemetry listener when ``[otel]`` enables it."""
    rt = payload.runtime
    if "otel" not in rt.loaded.sections:
        return  # not even the config model is imported without an [otel] table
    from agentrig_otel._config import OtelConfig

    config = rt.config_section("otel", OtelConfig)
    if config is None or not config.enabled:
        return
    # the SDK is imported only when telemetry is on (an unconfigured install costs nothing)
    from agentrig_otel._setup import build_pipeline
    from agentrig_otel._telemetry import Telemetry

    pipeline = build_pipeline(config)
    telemetry = Telemetry(
        pipeline.tracer, pipeline.metrics, capture_content=config.capture_content, runtime=rt
    )
    rt.add_plugin("otel-telemetry", telemetry)
    telemetry.provide_trace_context(payload)  # idempotent: once, whichever runs first

    async def flush() -> None:
        # exporting may block on the network: off the event loop
        await anyio.to_thread.run_sync(pipeline.shutdown)

    rt.on_close("otel", flush)
