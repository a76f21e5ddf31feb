"""What the loop records around each model call, kept cheap: the cooldown key of the
deployment, the effort reports a provider makes, and the audit built from them."""

from __future__ import annotations

from typing import Any

import attrs

from agentrig.agent._results import ReasoningAudit
from agentrig.llm import EffortResolution, ModelDeployment, capture_efforts, report_effort


class _Served:
    kind = "openai"
    base_url = "https://api.example.test/v1/"


class _Plain:
    kind = "scripted"


class _OddUrl:
    kind = "odd"
    base_url: Any = None  # declared but not a URL: no endpoint to key by


def test_a_deployment_is_keyed_by_the_endpoint_a_provider_says_it_sends_to() -> None:
    served = ModelDeployment.of(_Served(), "main", "m")
    assert (served.kind, served.endpoint, served.model) == (
        "openai",
        "https://api.example.test/v1",
        "m",
    )
    assert ModelDeployment.of(_Served(), "alias", "m") == served  # aliases share a cooldown
    plain = ModelDeployment.of(_Plain(), "local", "m")
    assert (plain.kind, plain.endpoint) == ("scripted", "provider:local")
    odd = ModelDeployment.of(_OddUrl(), "odd1", "m")
    assert odd.endpoint == "provider:odd1"


def test_captures_nest_and_each_keeps_its_own_reports() -> None:
    outer_report = EffortResolution("low", "applied", "low")
    inner_report = EffortResolution("high", "clamped", "medium")
    with capture_efforts() as outer:
        report_effort(outer_report)
        with capture_efforts() as inner:
            report_effort(inner_report)
        report_effort(outer_report)
    report_effort(inner_report)  # nobody captures: dropped
    assert inner == [inner_report]
    assert outer == [outer_report, outer_report]


def test_an_unreported_request_is_audited_as_nothing_sent() -> None:
    audit = ReasoningAudit.of("local", "m", (2, 1), "high", [])
    assert (audit.round, audit.attempt, audit.requested) == (2, 1, "high")
    assert audit.disposition == "not_applied"
    assert audit.effective is None
    assert dict(audit.native) == {}
    assert audit.reason == "the provider reported no effort resolution"
    assert not audit.dispatched
    assert not audit.native_sent
    assert audit.native == EffortResolution("high", "not_applied").native


def test_the_last_report_is_the_request_that_answered() -> None:
    first = EffortResolution("high", "applied", "high").sent({"effort": "high"})
    last = EffortResolution("high", "clamped", "medium").sent({"effort": "medium"})
    audit = ReasoningAudit.of("chain", "m", (1, 1), "high", [first, last])
    assert (audit.disposition, audit.effective, dict(audit.native)) == (
        "clamped",
        "medium",
        {"effort": "medium"},
    )
    assert audit.dispatched
    assert audit.native_sent


def test_an_audit_as_data_carries_every_field_in_order_and_native_as_plain_data() -> None:
    nested = EffortResolution("high", "applied", "high").sent({"thinking": {"budget": [1, 2]}})
    for audit in (
        ReasoningAudit.of("local", "m", (2, 1), "high", []),
        ReasoningAudit.of("chain", "m", (1, 3), "high", [nested]),
    ):
        data = audit.to_dict()
        assert list(data) == [*attrs.fields_dict(ReasoningAudit), "native_sent"]
        for name in attrs.fields_dict(ReasoningAudit):
            if name != "native":
                assert data[name] == getattr(audit, name)
        assert data["native_sent"] is audit.native_sent
    assert data["native"] == {"thinking": {"budget": [1, 2]}}
    assert type(data["native"]) is dict
    assert type(data["native"]["thinking"]) is dict
    assert type(data["native"]["thinking"]["budget"]) is list
    assert ReasoningAudit.of("local", "m", (2, 1), "high", []).to_dict()["native"] == {}
