"""The plugin's providers sample as the SDK's default does, and as ``OTEL_TRACES_SAMPLER`` says.

:class:`ParentOrAlwaysOn` stands in for ``ParentBased(ALWAYS_ON)`` (the SDK's default) in the
providers the plugin builds; it must decide exactly as the SDK's does for every kind of parent,
and any other ``OTEL_TRACES_SAMPLER`` must still be the SDK's to build.
"""

from __future__ import annotations

from typing import Any

import pytest
from agentrig_otel import exporting_pipeline
from agentrig_otel._sampler import ParentOrAlwaysOn, default_sampler
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased, SamplingResult
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags, TraceState

TRACE_ID = 0x0AF7651916CD43DD8448EB211C80319C
SDK_DEFAULT = ParentBased(ALWAYS_ON)


def _parent(remote: bool, sampled: bool, state: TraceState | None) -> Context:
    flags = TraceFlags(TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT)
    span = SpanContext(TRACE_ID, 0xB7AD6B7169203331, remote, flags, state)
    return trace.set_span_in_context(NonRecordingSpan(span))


PARENTS: dict[str, Context | None] = {
    "no parent": None,
    "an empty context": Context(),
    **{
        f"{where} parent, {'sampled' if sampled else 'not sampled'}{with_state}": _parent(
            where == "remote", sampled, TraceState([("vendor", "v1")]) if with_state else None
        )
        for where in ("local", "remote")
        for sampled in (True, False)
        for with_state in ("", " with a trace state")
    },
}


def _decided(result: SamplingResult) -> tuple[Any, ...]:
    return result.decision, dict(result.attributes), result.trace_state


@pytest.mark.parametrize("attributes", [None, {"gen_ai.operation.name": "chat", "n": 1}])
@pytest.mark.parametrize("parent", PARENTS.values(), ids=PARENTS.keys())
def test_it_decides_as_the_sdks_default_for_every_parent(
    parent: Context | None, attributes: dict[str, Any] | None
) -> None:
    ours, sdk = ParentOrAlwaysOn(), SDK_DEFAULT
    args = (TRACE_ID, "chat m", SpanKind.CLIENT, attributes)
    assert _decided(ours.should_sample(parent, *args)) == _decided(sdk.should_sample(parent, *args))
    # and with the parent current instead of passed (how a tracer asks without a context)
    token = otel_context.attach(parent if parent is not None else Context())
    try:
        assert _decided(ours.should_sample(None, *args)) == _decided(sdk.should_sample(None, *args))
    finally:
        otel_context.detach(token)


def test_it_has_the_sdks_description() -> None:
    assert ParentOrAlwaysOn().get_description() == SDK_DEFAULT.get_description()


@pytest.mark.parametrize("value", [None, "parentbased_always_on", " ParentBased_Always_On "])
def test_the_default_or_nothing_gets_the_one_step_sampler(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("OTEL_TRACES_SAMPLER", raising=False)
    else:
        monkeypatch.setenv("OTEL_TRACES_SAMPLER", value)
    assert isinstance(default_sampler(), ParentOrAlwaysOn)
    pipeline = exporting_pipeline(None, None)
    assert pipeline.tracer_provider is not None
    assert isinstance(pipeline.tracer_provider.sampler, ParentOrAlwaysOn)
    span = pipeline.tracer.start_span("root")
    assert span.is_recording()
    assert span.get_span_context().trace_flags.sampled
    pipeline.shutdown()


@pytest.mark.parametrize(
    ("value", "argument"),
    [("always_off", None), ("traceidratio", "0"), ("parentbased_always_off", None)],
)
def test_another_sampler_is_the_sdks_to_build(
    monkeypatch: pytest.MonkeyPatch, value: str, argument: str | None
) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", value)
    if argument is not None:
        monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", argument)
    assert default_sampler() is None
    pipeline = exporting_pipeline(None, None)
    assert pipeline.tracer_provider is not None
    assert not isinstance(pipeline.tracer_provider.sampler, ParentOrAlwaysOn)
    assert not pipeline.tracer.start_span("root").is_recording()  # every one samples a root out
    pipeline.shutdown()
