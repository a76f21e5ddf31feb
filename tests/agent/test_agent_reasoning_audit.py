"""Reasoning effort with an audit, on the loop's side.

* ``[agents.<id>] reasoning_effort`` reaches every request (it was dropped before);
* each provider call leaves a :class:`~agentrig.agent.ReasoningAudit` on the run's record,
  built from what the provider reported (:func:`agentrig.llm.report_effort`) -- a provider
  that reports nothing is recorded as sending nothing, never as having applied a control;
* a level the model lacks is resolved (clamped, fell back) and recorded, not refused;
* a ``request_config`` listener's unknown level, and a config's, are refused by name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from agentloop_support import EnvFactory, WatchedProvider

import agentrig
from agentrig.builtins._scripted import Reply
from agentrig.errors import ConfigError, HookError
from agentrig.lifecycle import RequestConfig
from agentrig.llm import (
    Capabilities,
    EffortResolution,
    ModelRequest,
    ReasoningEffort,
    capture_efforts,
    report_effort,
    resolve_effort_level,
)

pytestmark = pytest.mark.anyio

LEVELS = Capabilities(streaming=True, reasoning_effort=("low", "medium", "high"))


def _provider(script: list[Reply | str], **declared: Any) -> WatchedProvider:
    return WatchedProvider(script, capabilities=attrs.evolve(LEVELS, **declared))


async def test_the_configured_effort_is_sent_and_audited(env: EnvFactory) -> None:
    provider = _provider(["one", "two"])
    async with env(provider=provider, reasoning_effort="max") as e:
        first = await e.agent.run("hi")
        await e.agent.run("again")
    assert [r.reasoning_effort for r in provider.requests] == ["max", "max"]
    (audit,) = first.invocation.reasoning
    assert (audit.requested, audit.disposition, audit.effective) == ("max", "clamped", "high")
    assert dict(audit.native) == {"reasoning_effort": "high"}
    assert audit.dispatched
    assert audit.native_sent
    assert (audit.provider, audit.model, audit.round, audit.attempt) == ("local", "m1", 1, 1)
    assert "not a level" in (audit.reason or "")


async def test_every_round_has_its_audit_in_order(env: EnvFactory) -> None:
    from agentloop_support import clock

    from agentrig.builtins._scripted import ScriptedCall

    provider = _provider([Reply(tool_calls=(ScriptedCall("clock"),)), "noon"])
    async with env(provider=provider, tools=[clock], reasoning_effort="low") as e:
        result = await e.agent.run("time?")
    audits = result.invocation.reasoning
    assert [(a.round, a.disposition) for a in audits] == [(1, "applied"), (2, "applied")]


class Silent(WatchedProvider):
    """A provider that knows nothing of effort reports: it says nothing about what it sent."""

    def _take(self, request: ModelRequest) -> Reply:
        with capture_efforts():  # swallow what the scripted base would report
            return super()._take(request)


async def test_a_provider_that_reports_nothing_is_recorded_as_sending_nothing(
    env: EnvFactory,
) -> None:
    provider = Silent(["ok"], capabilities=LEVELS)
    async with env(provider=provider, reasoning_effort="high") as e:
        result = await e.agent.run("hi")
    (audit,) = result.invocation.reasoning
    assert audit.disposition == "not_applied"
    assert audit.dispatched is False
    assert audit.native_sent is False
    assert audit.requested == "high"


async def test_a_level_outside_the_model_table_is_resolved_not_refused(env: EnvFactory) -> None:
    class Max:
        @agentrig.hookimpl
        def request_config(self, payload: RequestConfig) -> RequestConfig:
            return attrs.evolve(payload, reasoning_effort="minimal")

    provider = _provider(["ok"])
    async with env(provider=provider, plugins={"max": Max()}) as e:
        result = await e.agent.run("hi")
    assert result.value == "ok"
    (audit,) = result.invocation.reasoning
    assert audit.disposition == "fell_back"
    assert audit.native == {}


async def test_a_listener_s_unknown_level_is_refused_by_name(env: EnvFactory) -> None:
    class Bad:
        @agentrig.hookimpl
        def request_config(self, payload: RequestConfig) -> RequestConfig:
            # not a ReasoningEffort on purpose: a listener's bad level must be refused by name
            return attrs.evolve(payload, reasoning_effort="extreme")  # type: ignore[arg-type]

    provider = _provider(["ok"])
    async with env(provider=provider, plugins={"bad": Bad()}) as e:
        with pytest.raises(HookError, match="reasoning_effort='extreme'"):
            await e.agent.run("hi")
    assert provider.requests == []


async def test_an_unknown_configured_level_names_its_key(env: EnvFactory) -> None:
    with pytest.raises(ConfigError) as caught:
        async with env(["ok"], reasoning_effort="extreme"):
            pytest.fail("the runtime opened with reasoning_effort='extreme'")
    assert "agents.assistant.reasoning_effort" in str(caught.value)


def test_the_public_resolution_rules() -> None:
    table: tuple[ReasoningEffort, ...] = ("low", "high")
    assert resolve_effort_level("high", table).disposition == "applied"
    clamped = resolve_effort_level("medium", table)
    assert (clamped.disposition, clamped.effective) == ("clamped", "low")
    assert resolve_effort_level("minimal", table).disposition == "fell_back"
    assert resolve_effort_level("auto", table).disposition == "fell_back"
    assert resolve_effort_level(None, table).disposition == "fell_back"
    assert resolve_effort_level("high", ()).disposition == "not_applied"
    assert resolve_effort_level("high", None).disposition == "not_applied"
    sent = clamped.sent({"x": {"y": [1]}})
    with pytest.raises(TypeError):
        sent.native["x"]["z"] = 1
    assert sent.dropped("no room").native == {}


def test_reports_outside_a_capture_cost_nothing_and_captures_nest() -> None:
    report_effort(EffortResolution("low", "applied", "low"))  # nobody listening: no error
    with capture_efforts() as outer:
        report_effort(EffortResolution("low", "applied", "low"))
        with capture_efforts() as inner:
            report_effort(EffortResolution("high", "applied", "high"))
    assert [r.requested for r in outer] == ["low"]
    assert [r.requested for r in inner] == ["high"]


def test_run_json_prints_the_audit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentrig.cli import main

    config = tmp_path / "agentrig.toml"
    config.write_text(
        '[providers.local]\nkind = "scripted"\n'
        'options = { script = [{ text = "done" }], reasoning_effort = ["low", "high"] }\n'
        '[agents.assistant]\nprovider = "local"\nmodel = "m"\nreasoning_effort = "medium"\n'
    )
    assert main(["run", "-c", str(config), "--json", "think"]) == 0
    data = json.loads(capsys.readouterr().out)
    (audit,) = data["invocation"]["reasoning"]
    assert audit["requested"] == "medium"
    assert audit["disposition"] == "clamped"
    assert audit["native"] == {"reasoning_effort": "low"}
    assert audit["native_sent"] is True
    assert audit["dispatched"] is True
