"""Typed runtime seams: ``rt.agents`` / ``rt.models`` / ``rt.http`` / ``rt.spawn`` and
``ServiceKey[T]`` for the services plugins add."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from agentrig.errors import DuplicateIdError, PluginError, SealedCatalogError, UnknownIdError
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
from agentrig.tracing import TRACE_CONTEXT

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


class _Scope:
    def close(self) -> None:
        return None


class _TraceParts:
    """What both trace contexts below have alike."""

    def headers(self) -> dict[str, str]:
        return {}

    def ids(self) -> tuple[str, str] | None:
        return None

    def continue_from(self, headers: Mapping[str, str]) -> _Scope:
        return _Scope()


class _OlderTrace(_TraceParts):
    """A trace context written for an older release: ``open`` without ``subject``."""

    def open(self, kind: str, agent_id: str) -> _Scope:
        return _Scope()


class _CurrentTrace(_TraceParts):
    def open(self, kind: str, agent_id: str, subject: str, provider: str | None = None) -> _Scope:
        return _Scope()


def test_a_service_that_breaks_its_keys_protocol_is_refused_when_provided() -> None:
    services = Services()
    older: Any = _OlderTrace()  # what a plugin built against the older protocol hands over
    not_a_tracer: Any = _Scope()
    with pytest.raises(PluginError) as caught:
        services.provide(TRACE_CONTEXT, older, source="old-tracer")
    message = str(caught.value)
    assert caught.value.code == "plugin.error"
    assert "'agentrig.trace_context' provided by old-tracer is not a TraceContext" in message
    assert "open" in message
    assert "subject" in message
    assert not services.has(TRACE_CONTEXT)  # nothing half-provided
    with pytest.raises(PluginError, match="missing continue_from"):
        services.provide(TRACE_CONTEXT, not_a_tracer, source="not-a-tracer")
    current = _CurrentTrace()
    services.provide(TRACE_CONTEXT, current, source="tracer")
    assert services.require(TRACE_CONTEXT) is current
    # a key without a protocol takes any value of its type, as before
    services.provide(COUNTER, [1])
