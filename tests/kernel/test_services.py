"""Typed runtime seams: ``rt.agents`` / ``rt.models`` / ``rt.http`` / ``rt.spawn`` and
``ServiceKey[T]`` for the services plugins add."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import httpx
import pytest

from agentrig.errors import DuplicateIdError, SealedCatalogError, UnknownIdError
from agentrig.ids import AgentId
from agentrig.kernel import (
    Composition,
    ServiceKey,
    Services,
    builtin_source,
    compose_step,
    open_runtime,
)
from agentrig.llm import ModelInfo

COUNTER: ServiceKey[list[int]] = ServiceKey("test.counter")


def test_a_service_is_provided_once_and_found_by_its_key() -> None:
    services = Services()
    assert services.get(COUNTER) is None
    assert not services.has(COUNTER)
    values = [1]
    services.provide(COUNTER, values, source="me")
    assert services.require(COUNTER) is values
    assert services.get(ServiceKey[list[int]]("test.counter")) is values  # the name is the key
    with pytest.raises(DuplicateIdError, match=r"'test.counter' is already provided \(by me\)"):
        services.provide(COUNTER, [2])
    services.provide(COUNTER, [3], replace=True)
    assert services.require(COUNTER) == [3]
    assert services.names() == ("test.counter",)


def test_a_missing_service_names_what_was_provided_and_the_closest() -> None:
    services = Services()
    services.provide(COUNTER, [])
    with pytest.raises(UnknownIdError) as info:
        services.require(ServiceKey[int]("test.countr"))
    assert info.value.suggestion == "test.counter"
    assert "did you mean 'test.counter'" in str(info.value)


def test_services_are_sealed_with_the_runtime() -> None:
    services = Services()
    services.seal()
    with pytest.raises(SealedCatalogError, match="provide services from a compose step"):
        services.provide(COUNTER, [])


@pytest.mark.anyio
async def test_typed_attributes_exist_without_any_provider() -> None:
    async with open_runtime({}, sources=[builtin_source()], environ={}) as rt:
        rt.models.register(ModelInfo(model="tiny", context_window=50))
        assert rt.models.context_window("tiny") == 50
        assert rt.agents.get(AgentId("nobody")) is None
        client = rt.http(base_url="https://example.com")
        assert isinstance(client, httpx.AsyncClient)
        done = anyio.Event()

        async def background() -> None:
            done.set()

        rt.spawn(background)
        await done.wait()
        with pytest.raises(SealedCatalogError):
            rt.services.provide(COUNTER, [])
    assert client.is_closed  # owned by the runtime


@pytest.mark.anyio
async def test_a_plugin_provides_a_service_from_its_compose_step() -> None:
    class Counter:
        @compose_step("finish")
        def compose(self, payload: Composition) -> None:
            payload.runtime.services.provide(COUNTER, [42], source="counter")

    plugins = [("counter", Counter())]
    async with open_runtime({}, sources=[builtin_source()], environ={}, plugins=plugins) as rt:
        assert rt.services.require(COUNTER) == [42]


SNIPPET = """
from agentrig.kernel import Runtime, ServiceKey

COUNTER: ServiceKey[list[int]] = ServiceKey("counter")

def use(rt: Runtime) -> None:
    counts = rt.services.require(COUNTER)  # fine: list[int]
    name: str = rt.services.require(COUNTER)  # refused: a list[int] is not a str
    rt.services.provide(COUNTER, "three")  # refused: a str is not a list[int]
    window: int = rt.models.context_window("m") + counts[0]  # fine
    rt.agents.require(3)  # refused: an agent id is a str
"""


@pytest.mark.slow
def test_mypy_checks_service_lookups_and_runtime_attributes(tmp_path: Path) -> None:
    module = tmp_path / "snippet.py"
    module.write_text(textwrap.dedent(SNIPPET), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(module)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["8", "9", "11"], done.stdout
    assert '"list[int]", variable has type "str"' in errors[0]
