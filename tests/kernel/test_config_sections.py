"""Plugin-owned config tables: ``agentrig.config_sections`` entry points."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentrig.errors import ConfigError
from agentrig.kernel import (
    Composition,
    EntryPointSource,
    builtin_source,
    compose_step,
    load_config,
    open_runtime,
)

GREETING = """
from pydantic import BaseModel, ConfigDict

from agentrig.kernel import Composition, ServiceKey, compose_step


class Greeting(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    loud: bool = False


GREETING: ServiceKey[str] = ServiceKey("greeting.text")


class Plugin:
    @compose_step("finish")
    def compose(self, payload: Composition) -> None:
        section = payload.runtime.config_section("greeting", Greeting)
        if section is not None:
            text = section.text.upper() if section.loud else section.text
            payload.runtime.services.provide(GREETING, text)


plugin = Plugin()
"""


@pytest.fixture
def greeting(fake_dist: Callable[..., Path]) -> list[Any]:
    fake_dist(
        "agentrig-greeting",
        entry_points={
            "agentrig.config_sections": {"greeting": "greeting_mod:Greeting"},
            "agentrig.plugins": {"greeting": "greeting_mod:plugin"},
        },
        modules={"greeting_mod": GREETING},
    )
    return [builtin_source(), EntryPointSource(distributions=["agentrig-greeting"])]


@pytest.mark.anyio
async def test_a_plugin_reads_its_own_table(greeting: list[Any]) -> None:
    config = {"greeting": {"text": "hello", "loud": True}}
    async with open_runtime(config, sources=greeting, environ={}) as rt:
        greeting_mod: Any = importlib.import_module("greeting_mod")  # written by the fixture

        assert rt.services.require(greeting_mod.GREETING) == "HELLO"
        section = rt.config_section("greeting", greeting_mod.Greeting)
        assert section is not None
        assert section.loud
        assert rt.loaded.sections.keys() == {"greeting"}


@pytest.mark.anyio
async def test_an_invalid_table_is_an_error_at_its_key_path(greeting: list[Any]) -> None:
    config = {"greeting": {"txt": "hello"}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, sources=greeting, environ={}):
            pytest.fail("must not compose")
    paths = {issue.path: issue.message for issue in info.value.issues}
    assert paths[("greeting", "text")] == "required key is missing"
    assert "did you mean 'text'" in paths[("greeting", "txt")]


@pytest.mark.anyio
async def test_a_table_nobody_owns_is_an_unknown_key_with_a_hint(greeting: list[Any]) -> None:
    with pytest.raises(ConfigError) as info:
        async with open_runtime({"greetng": {"text": "x"}}, sources=greeting, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.path == ("greetng",)
    assert "did you mean 'greeting'" in issue.message


@pytest.mark.anyio
async def test_a_table_whose_owner_is_disabled_is_refused(greeting: list[Any]) -> None:
    config = {"greeting": {"text": "x"}, "plugins": {"disabled": ["config_sections:greeting"]}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, sources=greeting, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.path == ("greeting",)
    assert issue.code == "config.plugin_disabled"


def test_load_config_keeps_owned_tables_apart() -> None:
    loaded = load_config({"plugins": {}, "mine": {"a": 1}}, sections=["mine"])
    assert dict(loaded.sections) == {"mine": {"a": 1}}
    # the core's own tables are sections of their layers, known whatever ``sections`` says
    assert dict(load_config({"agents": {}}, sections=[]).sections) == {"agents": {}}
    with pytest.raises(ConfigError, match="unknown key 'mine'"):
        load_config({"mine": {}}, sections=[])


@pytest.mark.anyio
async def test_an_absent_table_reads_as_none() -> None:
    from pydantic import BaseModel

    class Model(BaseModel):
        x: int = 1

    seen: list[object] = []

    class Reader:
        @compose_step()
        def compose(self, payload: Composition) -> None:
            seen.append(payload.runtime.config_section("absent", Model))

    plugins = [("reader", Reader())]
    async with open_runtime({}, sources=[builtin_source()], environ={}, plugins=plugins):
        pass
    assert seen == [None]
