"""The sampler of the tracer providers the plugin builds: the SDK's default decision, asked
in one step.

Unless ``OTEL_TRACES_SAMPLER`` names another sampler, the SDK's ``TracerProvider`` samples
with ``ParentBased(ALWAYS_ON)``: a span follows its parent's sampled flag, a span without a
parent is sampled.  That sampler reaches its answer through a second sampler, called by
keyword, and looks up the parent span twice -- about 8 % of what a span with its attributes
costs the SDK (benchmarks/README.md, "Tracing cost, tenth session").  :class:`ParentOrAlwaysOn`
decides the same in one look at the parent (a test compares it with the SDK's for every kind
of parent); any other ``OTEL_TRACES_SAMPLER`` is left to the SDK.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.environment_variables import OTEL_TRACES_SAMPLER
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_ON,
    Decision,
    ParentBased,
    Sampler,
    SamplingResult,
)
from opentelemetry.trace import Link, SpanKind
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes

__all__ = ["DEFAULT_SAMPLER_NAME", "ParentOrAlwaysOn", "default_sampler"]

#: the ``OTEL_TRACES_SAMPLER`` value of the SDK's default sampler
DEFAULT_SAMPLER_NAME = "parentbased_always_on"
#: what the SDK's ``ParentBased(ALWAYS_ON)`` calls itself (the same decision, the same name);
#: the SDK leaves that method unannotated
_describe_default: Callable[[], str] = ParentBased(ALWAYS_ON).get_description
_DESCRIPTION = _describe_default()


class ParentOrAlwaysOn(Sampler):
    """``ParentBased(ALWAYS_ON)``'s decision: drop a span whose parent (local or remote) is
    not sampled, record and sample every other; the parent's trace state is kept."""

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        parent = trace.get_current_span(parent_context).get_span_context()
        if parent is None or not parent.is_valid:  # a root span
            return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)
        if parent.trace_flags.sampled:
            return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes, parent.trace_state)
        return SamplingResult(Decision.DROP, None, parent.trace_state)

    def get_description(self) -> str:
        return _DESCRIPTION


def default_sampler() -> Sampler | None:
    """:class:`ParentOrAlwaysOn` when ``OTEL_TRACES_SAMPLER`` asks for the default (or is not
    set); None when it names another sampler, which the SDK's ``TracerProvider`` then builds
    from the variable (and ``OTEL_TRACES_SAMPLER_ARG``) itself."""
    value = os.environ.get(OTEL_TRACES_SAMPLER, "").strip().lower()
    return ParentOrAlwaysOn() if value in ("", DEFAULT_SAMPLER_NAME) else None
