"""The synchronous convenience: one call composes, runs and closes."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentrig

CONFIG = """
[providers.local]
kind = "scripted"
options.script = [{ text = "hello from a script", usage = { prompt = 3, completion = 4 } }]

[agents.assistant]
provider = "local"
model = "scripted-1"
"""


def test_run_sync_returns_the_fixed_result_shape(tmp_path: Path) -> None:
    path = tmp_path / "agentrig.toml"
    path.write_text(CONFIG)
    result = agentrig.run_sync(path, "hi")
    assert result.value == "hello from a script"
    assert result.invocation.outcome == "completed"
    assert result.invocation.usage is not None
    assert result.invocation.usage.total == 7


def test_run_sync_needs_an_agent_name_when_several_are_declared(tmp_path: Path) -> None:
    path = tmp_path / "agentrig.toml"
    path.write_text(CONFIG + '\n[agents.other]\nprovider = "local"\nmodel = "m"\n')
    with pytest.raises(agentrig.AgentrigError, match="2 agents"):
        agentrig.run_sync(path, "hi")


def test_run_sync_reads_no_environment_variable_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTRIG_TEST_TOKEN", "from-the-environment")
    path = tmp_path / "agentrig.toml"
    path.write_text(CONFIG.replace('kind = "scripted"', SECRET))
    with pytest.raises(agentrig.ConfigError) as info:
        agentrig.run_sync(path, "hi")
    assert info.value.issues[0].code == "config.secret_unresolved"
    asked = agentrig.run_sync(path, "hi", resolver=agentrig.env_resolver())
    assert asked.value == "hello from a script"


SECRET = 'kind = "scripted"\ncredentials = { token = "$ENV:AGENTRIG_TEST_TOKEN" }'
