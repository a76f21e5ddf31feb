"""The ``[otel]`` table: where traces and metrics go, and whether content is recorded."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["OtelConfig"]


class OtelConfig(BaseModel):
    """``[otel]`` in ``agentrig.toml``.  Without this table the plugin does nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: ``false`` keeps the table but records nothing
    enabled: bool = True
    #: ``otlp-http`` / ``otlp-grpc`` send to a collector (endpoint and headers from here or the
    #: standard ``OTEL_EXPORTER_OTLP_*`` variables); ``console`` prints spans; ``global`` uses
    #: the tracer and meter providers the application configured itself; ``none`` records
    #: spans into a provider without an exporter (for measuring the plugin's own cost) and
    #: no metrics (without a reader nothing could read them)
    exporter: Literal["otlp-http", "otlp-grpc", "console", "global", "none"] = "otlp-http"
    #: the collector's base URL (``http://localhost:4318`` for OTLP over HTTP)
    endpoint: str | None = None
    #: extra headers for the exporter (an API key of a hosted backend, for instance)
    headers: dict[str, str] = Field(default_factory=dict)
    #: the ``service.name`` resource attribute (``OTEL_SERVICE_NAME`` otherwise)
    service_name: str | None = None
    #: record prompts, completions, tool arguments and results (secret-like keys redacted)
    capture_content: bool = False
    #: also export metrics (token usage, operation and tool durations)
    metrics: bool = True

    @model_validator(mode="after")
    def _no_unused_keys(self) -> OtelConfig:
        # keys that configure something this exporter does not build would be ignored
        unused = []
        if not self.exporter.startswith("otlp-"):
            unused += [k for k in ("endpoint", "headers") if getattr(self, k)]
        if self.exporter == "global" and self.service_name is not None:
            unused.append("service_name")
        if self.exporter == "none" and "metrics" in self.model_fields_set:
            unused.append("metrics")  # no reader: nothing is measured either way
        if unused:
            why = dict.fromkeys(_WHY[key] for key in unused)  # each reason once, in order
            raise ValueError(
                f"{', '.join(unused)} would have no effect with exporter {self.exporter!r}: "
                + "; ".join(why)
                + f" -- remove {'them' if len(unused) > 1 else 'it'} or choose another exporter"
            )
        return self


#: why a key has no effect with the exporter it was refused with (``_no_unused_keys``)
_WHY = {
    "endpoint": "endpoint and headers configure the otlp-http and otlp-grpc exporters",
    "headers": "endpoint and headers configure the otlp-http and otlp-grpc exporters",
    "service_name": "the application's own providers are used as they are",
    "metrics": "nothing is exported, so no metric is measured either way",
}
