"""Composition is a plugin point: ordered ``compose`` steps, the core's steps as plugins."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import plugin_report
from agentrig.errors import ConfigError
from agentrig.ids import AgentId, ProviderId
from agentrig.kernel import (
    PHASES,
    Composition,
    EntryPointSource,
    MemorySource,
    Runtime,
    builtin_source,
    compose_step,
    open_runtime,
)
from agentrig.plugin import PROVIDERS

# A third-party distribution: one compose step contributes a toolset, another wraps every
# provider so that each run's model calls go through it, and provides a typed service.
LOUD_PLUGIN = '''
from agentrig.kernel import Composition, ServiceKey, compose_step
from agentrig.tools import tool
from agentrig.plugin import PROVIDERS, TOOLS, TOOLSETS

CALLS: ServiceKey[list] = ServiceKey("loud.calls")


@tool
def shout(text: str) -> str:
    """Say it loudly."""
    return text.upper()


@tool
def whisper(text: str) -> str:
    """Say it quietly."""
    return text.lower()


@compose_step("tools")
def add_toolset(payload: Composition) -> None:
    rt = payload.runtime
    for t in (shout, whisper):
        rt.registry(TOOLS).register(t, id=t.id, source="loud")
    rt.registry(TOOLSETS).register((shout.id, whisper.id), id="loud", source="loud")


class Counting:
    kind = "counting"

    def __init__(self, inner, calls):
        self.inner, self.calls = inner, calls

    def capabilities(self, model):
        return self.inner.capabilities(model)

    async def complete(self, request, *, signal):
        self.calls.append(request.model)
        return await self.inner.complete(request, signal=signal)

    def stream(self, request, *, signal):
        self.calls.append(request.model)
        return self.inner.stream(request, signal=signal)

    async def aclose(self):
        await self.inner.aclose()


@compose_step("finish")
def wrap_runs(payload: Composition) -> None:
    rt = payload.runtime
    calls = []
    rt.services.provide(CALLS, calls, source="loud")
    providers = rt.registry(PROVIDERS)
    for pid, provider in list(providers.entries()):
        providers.register(Counting(provider, calls), id=pid, replace=True, source="loud")
'''

CONFIG: dict[str, Any] = {
    "providers": {
        "main": {
            "kind": "scripted",
            "options": {
                "script": [
                    {"tool_calls": [{"name": "shout", "arguments": {"text": "hi"}}]},
                    {"text": "done"},
                ]
            },
        }
    },
    "agents": {"a": {"provider": "main", "model": "m", "tools": ["loud"]}},
}


@pytest.fixture
def loud(fake_dist: Callable[..., Path]) -> list[Any]:
    fake_dist(
        "agentrig-loud",
        entry_points={"agentrig.plugins": {"loud": "loud_plugin"}},
        modules={"loud_plugin": LOUD_PLUGIN},
    )
    return [builtin_source(), EntryPointSource(distributions=["agentrig-loud"])]


@pytest.mark.anyio
async def test_a_plugin_step_adds_a_toolset_and_wraps_runs(loud: list[Any]) -> None:
    async with open_runtime(CONFIG, sources=loud, environ={}) as rt:
        agent = rt.agent(AgentId("a"))
        assert [t.id for t in agent.all_tools()] == ["shout", "whisper"]
        result = await agent.run("go")
        assert result.value == "done"
        loud_plugin: Any = importlib.import_module("loud_plugin")  # the distribution's module

        calls = rt.services.require(loud_plugin.CALLS)
        assert calls == ["m", "m"]  # both model calls of the run went through the wrapper
        assert rt.registry(PROVIDERS).source_of(ProviderId("main")) == "loud"
        rows = {r.id: r for r in plugin_report(rt.index) if r.kind == "plugins"}
        assert rows["loud"].status == "loaded"
        assert rows["loud"].distribution == "agentrig-loud"


@pytest.mark.anyio
async def test_disabling_the_plugin_removes_its_step(loud: list[Any]) -> None:
    config = {**CONFIG, "plugins": {"disabled": ["loud"]}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, sources=loud, environ={}):
            pytest.fail("must not compose")
    issue = info.value.issues[0]
    assert issue.path == ("agents", "a", "tools", 0)
    assert "'loud'" in issue.message


@pytest.mark.anyio
async def test_the_core_steps_are_plugins_listed_in_the_report() -> None:
    async with open_runtime({}, sources=[builtin_source()], environ={}) as rt:
        rows = {r.id: r for r in plugin_report(rt.index) if r.kind == "plugins"}
    steps = {
        "compose-check",
        "compose-egress",
        "compose-credentials",
        "compose-sealers",
        "compose-providers",
        "compose-stores",
        "compose-tools",
        "compose-agents",
    }
    assert steps <= set(rows)
    assert {rows[s].status for s in steps} == {"loaded"}
    assert {rows[s].distribution for s in steps} == {"agentrig"}


@pytest.mark.anyio
async def test_disabling_a_core_step_by_config_works_like_any_plugin() -> None:
    config = {"plugins": {"disabled": ["compose-agents"]}}
    async with open_runtime(config, sources=[builtin_source()], environ={}) as rt:
        rows = {r.id: r.status for r in plugin_report(rt.index)}
        assert rows["compose-agents"] == "disabled"
        with pytest.raises(ConfigError, match="'compose-agents' composition step did not run"):
            _ = rt.agents
        assert rt.models is not None  # the other steps ran


@pytest.mark.anyio
async def test_a_disabled_core_step_can_be_replaced_by_a_plugin_step() -> None:
    from agentrig.kernel import MODELS
    from agentrig.llm import ModelInfo, ModelRegistry

    class MyModels:
        @compose_step("providers")
        def compose(self, payload: Composition) -> None:
            models = ModelRegistry()
            models.register(ModelInfo(model="mine", context_window=7))
            payload.runtime.services.provide(MODELS, models)

    memory = MemorySource()
    memory.add("plugins", "my-models", MyModels())
    config = {"plugins": {"disabled": ["compose-providers"]}}
    async with open_runtime(config, sources=[builtin_source()], memory=memory, environ={}) as rt:
        assert rt.models.context_window("mine") == 7


@pytest.mark.anyio
async def test_core_steps_load_even_with_autoload_off() -> None:
    memory = MemorySource()

    class Other:
        @compose_step()
        def compose(self, payload: Composition) -> None:
            raise AssertionError("a third-party listener must not autoload")

    memory.add("plugins", "other", Other())
    config = {"plugins": {"autoload": False}}
    async with open_runtime(config, sources=[builtin_source()], memory=memory, environ={}) as rt:
        assert rt.agents.get(AgentId("nobody")) is None
        rows = {r.id: r.status for r in plugin_report(rt.index)}
        assert rows["other"] == "available"
        assert rows["compose-agents"] == "loaded"


@pytest.mark.anyio
async def test_steps_run_by_phase_then_in_pluggy_order() -> None:
    seen: list[str] = []

    def step(phase: Any, label: str, **order: bool) -> object:
        class Step:
            @compose_step(phase, **order)
            def compose(self, payload: Composition) -> None:
                rt = payload.runtime
                built = rt.services.get(_agents_key()) is not None
                seen.append(f"{label}:{'agents' if built else 'none'}")

        return Step()

    plugins = [
        ("late", step("finish", "finish")),
        ("b", step("check", "check-b")),
        ("a", step("check", "check-a")),
        ("first", step("check", "check-first", tryfirst=True)),
        ("plain", step("tools", "tools")),
    ]
    async with open_runtime({}, sources=[builtin_source()], environ={}, plugins=plugins):
        pass
    # within a phase: tryfirst, then the last registered first (pluggy's order)
    assert seen == [
        "check-first:none",
        "check-a:none",
        "check-b:none",
        "tools:none",
        "finish:agents",
    ]


def _agents_key() -> Any:
    from agentrig.kernel import AGENTS

    return AGENTS


def test_an_unknown_phase_is_refused_when_the_step_is_declared() -> None:
    from typeguard import suppress_type_checks

    with suppress_type_checks(), pytest.raises(ValueError, match="unknown composition phase"):
        compose_step("tool")  # type: ignore[arg-type]
    assert PHASES[0] == "check"
    assert PHASES[-1] == "finish"


@pytest.mark.anyio
async def test_a_failing_step_fails_the_composition_with_its_own_error() -> None:
    class Boom(Exception):
        pass

    closed: list[Runtime] = []

    class Failing:
        @compose_step("stores")
        async def compose(self, payload: Composition) -> None:
            closed.append(payload.runtime)
            raise Boom("step failed")

    with pytest.raises(Boom, match="step failed"):
        async with open_runtime(
            {}, sources=[builtin_source()], environ={}, plugins=[("f", Failing())]
        ):
            pytest.fail("must not compose")
    assert closed[0].closed


def test_the_kernel_names_nothing_from_the_builtins() -> None:
    kernel = Path(__file__).parents[2] / "src" / "agentrig" / "kernel"
    for module in kernel.glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith("agentrig.builtins"), module.name
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert "agentrig.builtins" not in node.value, module.name
