"""``agentrig models``: the default selection and the presets, read again on every call;
``agentrig models set`` saves a checked selection to the settings file; ``/model`` in chat
switches to a preset by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrig.cli import main

CONFIG = """\
[providers.local]
kind = "scripted"
options = { script = [{ text = "hi" }], models = ["small", "large"] }

[agents.assistant]
provider = "local"
model = "small"
use_selection = true

[model_selection]
provider = "local"
model = "small"
settings = "user/model.toml"
presets = ["presets"]
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    (tmp_path / "presets").mkdir()
    (tmp_path / "presets" / "deep.toml").write_text(
        'provider = "local"\nmodel = "large"\nreasoning_effort = "high"\n'
        'description = "slow and careful"\n'
    )
    path = tmp_path / "agentrig.toml"
    path.write_text(CONFIG)
    return path


def test_models_shows_the_selection_and_the_presets(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models", "-c", str(config)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "model small (provider local), from the config"
    assert out[1:] == [
        "presets:",
        "  deep  model large (provider local, reasoning effort high)  slow and careful",
    ]
    # a preset written since is listed by the next call
    (config.parent / "presets" / "fast.toml").write_text('provider = "local"\nmodel = "small"\n')
    assert main(["models", "-c", str(config), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in data["presets"]] == ["deep", "fast"]
    assert data["source"] == "config"
    assert data["selection"] == {"provider": "local", "model": "small", "reasoning_effort": None}


def test_models_set_saves_a_preset_or_a_selection(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = config.parent / "user" / "model.toml"
    assert main(["models", "-c", str(config), "set", "deep"]) == 0
    assert f"to {settings}" in capsys.readouterr().out
    assert 'model = "large"' in settings.read_text()
    assert main(["models", "-c", str(config)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "model large (provider local, reasoning effort high), from the settings"
    code = main(["models", "-c", str(config), "set", "--provider", "local", "--model", "small"])
    assert code == 0
    assert 'model = "small"' in settings.read_text()
    # refused, one line with its code, nothing written
    assert main(["models", "-c", str(config), "set", "--provider", "local", "--model", "x"]) == 1
    err = capsys.readouterr().err
    assert "error [selection.invalid]" in err
    assert "does not serve the model 'x'" in err
    assert main(["models", "-c", str(config), "set", "ghost"]) == 1
    assert "error [preset.unknown]" in capsys.readouterr().err
    assert main(["models", "-c", str(config), "set", "deep", "--model", "x"]) == 2
    assert "error [cli.models_set]" in capsys.readouterr().err
    assert 'model = "small"' in settings.read_text()


def test_models_set_without_a_settings_file_is_refused(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config.write_text(CONFIG.replace('settings = "user/model.toml"\n', ""))
    assert main(["models", "-c", str(config), "set", "deep"]) == 1
    assert "error [selection.no_settings]" in capsys.readouterr().err


@pytest.mark.anyio
async def test_chat_model_command_switches_to_a_preset(config: Path) -> None:
    import agentrig
    from agentrig.cli._slash import tell

    async with agentrig.open_runtime(config) as rt:
        agent = rt.agent("assistant")
        shown = tell("/model", "", agent)
        assert shown == "model small (provider local)\npresets: deep"
        switched = tell("/model", "deep", agent)
        assert switched is not None
        assert switched.startswith(
            "model large (provider local, reasoning effort high) from preset deep"
        )
        assert (agent.model, agent.selection.reasoning_effort) == ("large", "high")
        assert tell("/model", "small", agent) == "model small (provider local, reasoning " \
            "effort high)\npresets: deep"  # fmt: skip
        refused = tell("/model", "huge", agent)
        assert refused is not None
        assert "error [model.unknown]" in refused
