"""The model-selection service (``rt.model_selection``) and presets.

* ``current()`` reads the settings file on every call (a selection another process saved is
  seen at once), else the config's ``[model_selection]`` default; ``save()`` writes a whole,
  checked selection there, and is refused without a settings file;
* presets are discovered from the configured roots on every ``list()`` / ``resolve()``:
  one written while the process runs is there, a deleted one is gone, the first root wins;
  a broken preset file is an error naming its key;
* an agent with ``use_selection`` starts on the default; ``agent.select`` switches to a
  selection or a preset (provider, model and reasoning effort), ``agent.selection`` reads it.
"""

from __future__ import annotations

import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from agentrig.agent import ModelSelection, ModelSelectionError
from agentrig.builtins import ScriptedProvider
from agentrig.errors import ConfigError
from agentrig.ids import ProviderId
from agentrig.kernel import Runtime
from agentrig.testing import Overrides, RuntimeFactory

pytestmark = pytest.mark.anyio


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _preset(root: Path, name: str, provider: str, model: str, extra: str = "") -> Path:
    return _write(root / f"{name}.toml", f'provider = "{provider}"\nmodel = "{model}"\n{extra}')


@asynccontextmanager
async def _runtime(
    factory: RuntimeFactory,
    overrides: Overrides,
    selection: dict[str, Any],
    **agent: Any,
) -> AsyncIterator[Runtime]:
    overrides.set("providers", "main", ScriptedProvider(["one", "two"]))
    overrides.set("providers", "other", ScriptedProvider(["from other"], models=["big", "huge"]))
    config = {
        "providers": {"main": {"kind": "scripted"}, "other": {"kind": "scripted"}},
        "agents": {"assistant": {"provider": "main", "model": "small", **agent}},
        "model_selection": selection,
    }
    async with factory(config) as rt:
        yield rt


async def test_presets_are_read_again_on_every_call(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides, tmp_path: Path
) -> None:
    first, second = tmp_path / "mine", tmp_path / "team"
    _preset(first, "fast", "main", "small", 'description = "quick"\n')
    _preset(second, "fast", "other", "big")  # shadowed: the first root wins
    _preset(second, "deep", "other", "huge", 'reasoning_effort = "high"\n')
    selection = {"presets": [str(first), str(second)]}
    async with _runtime(agentrig_runtime, agentrig_overrides, selection) as rt:
        presets = rt.model_selection.presets
        assert presets.names() == ("deep", "fast")
        fast = presets.resolve("fast")
        assert (fast.selection.provider, fast.selection.model, fast.description) == (
            "main", "small", "quick",
        )  # fmt: skip
        assert presets.resolve("deep").selection.reasoning_effort == "high"
        _preset(first, "new", "other", "big")  # authored while the process runs
        assert presets.names() == ("deep", "fast", "new")
        assert presets.resolve("new").selection.model == "big"
        (first / "fast.toml").unlink()  # deleted underneath a picker
        assert presets.resolve("fast").selection.provider == "other"
        (second / "deep.toml").unlink()
        assert "deep" not in presets.names()
        with pytest.raises(ModelSelectionError) as caught:
            presets.resolve("deep")
        assert caught.value.code == "preset.unknown"
        assert "fast, new" in str(caught.value)


async def test_a_broken_preset_names_its_key(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides, tmp_path: Path
) -> None:
    _preset(tmp_path, "bad", "main", "small", 'reasoning_effort = "extreme"\n')
    async with _runtime(agentrig_runtime, agentrig_overrides, {"presets": [str(tmp_path)]}) as rt:
        with pytest.raises(ConfigError) as caught:
            rt.model_selection.presets.list()
        assert "reasoning_effort" in str(caught.value)
        assert "bad.toml" in str(caught.value)
        _write(tmp_path / "bad.toml", 'provider = "main"\nmodel = "small"\ncolour = "red"\n')
        with pytest.raises(ConfigError, match="colour"):
            rt.model_selection.presets.resolve("bad")


async def test_the_settings_layer_is_read_live_and_saved_whole(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides, tmp_path: Path
) -> None:
    settings = tmp_path / "user" / "model.toml"
    selection = {"provider": "main", "model": "small", "settings": str(settings)}
    async with _runtime(agentrig_runtime, agentrig_overrides, selection) as rt:
        service = rt.model_selection
        assert service.current() == ModelSelection(ProviderId("main"), "small")
        assert service.lookup() == (ModelSelection(ProviderId("main"), "small"), "config")
        # another process saves a selection: the next read sees it
        _write(settings, '[model]\nprovider = "other"\nmodel = "big"\n')
        assert service.current() == ModelSelection(ProviderId("other"), "big")
        saved = service.save(ModelSelection(ProviderId("other"), "huge", "low"))
        assert service.lookup() == (saved, "settings")
        assert stat.S_IMODE(settings.stat().st_mode) == 0o600
        assert 'reasoning_effort = "low"' in settings.read_text()
        # checked before it is written: nothing changes on a refusal
        with pytest.raises(ModelSelectionError, match="no provider 'nope'"):
            service.save(ModelSelection(ProviderId("nope"), "x"))
        with pytest.raises(ModelSelectionError, match="does not serve the model 'tiny'"):
            service.save(ModelSelection(ProviderId("other"), "tiny"))
        assert service.current() == saved
        _write(settings, '[model]\nprovider = "main"\n')
        with pytest.raises(ConfigError) as caught:
            service.current()
        assert "model.model" in str(caught.value)


async def test_save_without_a_settings_file_is_refused_by_name(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    async with _runtime(agentrig_runtime, agentrig_overrides, {}) as rt:
        with pytest.raises(ModelSelectionError) as none:
            rt.model_selection.current()
        assert none.value.code == "selection.none"
        with pytest.raises(ModelSelectionError) as caught:
            rt.model_selection.save(ModelSelection(ProviderId("main"), "small"))
        assert caught.value.code == "selection.no_settings"
        assert "[model_selection] settings" in str(caught.value)


@pytest.mark.parametrize(
    ("selection", "key"),
    [
        ({"provider": "main"}, "model_selection"),
        ({"provider": "ghost", "model": "m"}, "model_selection.provider"),
        ({"presets": "not-a-list"}, "model_selection.presets"),
        ({"colour": "red"}, "model_selection.colour"),
    ],
)
async def test_config_keys_are_checked_by_name(
    agentrig_runtime: RuntimeFactory,
    agentrig_overrides: Overrides,
    selection: dict[str, Any],
    key: str,
) -> None:
    with pytest.raises(ConfigError) as caught:
        async with _runtime(agentrig_runtime, agentrig_overrides, selection):
            pytest.fail(f"the runtime opened with a bad {key}")
    assert key in str(caught.value)


async def test_an_agent_follows_the_selection_and_switches_to_presets(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides, tmp_path: Path
) -> None:
    settings = _write(tmp_path / "model.toml", '[model]\nprovider = "other"\nmodel = "big"\n')
    _preset(tmp_path / "presets", "deep", "other", "huge", 'reasoning_effort = "high"\n')
    selection = {"settings": str(settings), "presets": [str(tmp_path / "presets")]}
    async with _runtime(agentrig_runtime, agentrig_overrides, selection, use_selection=True) as rt:
        agent = rt.agent("assistant")
        assert agent.selection == ModelSelection(ProviderId("other"), "big")
        assert (await agent.run("hi")).value == "from other"
        chosen = agent.select("deep")
        assert chosen == ModelSelection(ProviderId("other"), "huge", "high")
        assert (agent.model, agent.provider_id) == ("huge", "other")
        agent.set_model("small", provider="main", reasoning_effort="low")
        assert agent.selection.reasoning_effort == "low"
        with pytest.raises(ModelSelectionError, match="no preset 'ghost'"):
            agent.select("ghost")


async def test_an_agent_without_use_selection_keeps_its_own_model(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    selection = {"provider": "other", "model": "big"}
    async with _runtime(agentrig_runtime, agentrig_overrides, selection) as rt:
        assert rt.agent("assistant").selection == ModelSelection(ProviderId("main"), "small")
