"""open_runtime(): composition, sealed catalogs, overrides and the disposal contract (§4.7)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
import typeguard

import agentrig
import agentrig.llm as llm
from agentrig.catalog import CatalogKey
from agentrig.errors import (
    ConfigError,
    RuntimeClosedError,
    SealedCatalogError,
)
from agentrig.ids import ProviderId, ToolId
from agentrig.kernel import (
    Composition,
    MemorySource,
    Runtime,
    RuntimeStarted,
    builtin_source,
    compose_step,
    open_runtime,
)
from agentrig.plugin import HOOK_STRATEGIES, PROVIDERS, SESSION_STORES, TOOLS


class FakeProvider:
    """An object implementing agentrig.llm.Provider (no network)."""

    kind = "fake"

    def __init__(self, config: Any = None) -> None:
        self.config = config
        self.closed = 0

    def capabilities(self, model: str) -> Any:
        return llm.Capabilities()

    async def complete(self, request: Any, *, signal: Any) -> Any:
        raise NotImplementedError

    async def stream(self, request: Any, *, signal: Any) -> AsyncIterator[Any]:
        if False:
            yield None

    async def aclose(self) -> None:
        self.closed += 1


def provider_memory(built: list[FakeProvider]) -> MemorySource:
    def factory(config: Any) -> FakeProvider:
        provider = FakeProvider(config)
        built.append(provider)
        return provider

    memory = MemorySource()
    memory.add("providers", "fake", factory)
    return memory


PROVIDER_CONFIG = {
    "providers": {
        "main": {"kind": "fake", "options": {"x": 1}, "credentials": {"api_key": "$ENV:KEY"}}
    }
}


def test_fake_provider_implements_the_protocol() -> None:
    assert isinstance(FakeProvider(), llm.Provider)


@pytest.mark.anyio
async def test_open_runtime_is_an_async_context_manager() -> None:
    async with open_runtime({}, sources=[builtin_source()], environ={}) as rt:
        assert isinstance(rt, Runtime)
        assert not rt.closed
        assert rt.close_report is None
    assert rt.closed
    assert rt.close_report == ()


@pytest.mark.anyio
async def test_provider_built_with_resolved_credentials_and_closed_on_exit() -> None:
    built: list[FakeProvider] = []
    async with open_runtime(
        PROVIDER_CONFIG,
        sources=[builtin_source()],
        memory=provider_memory(built),
        environ={},
        resolver={"KEY": "sk-test"}.get,
    ) as rt:
        (provider,) = built
        assert rt.catalog(PROVIDERS).require(ProviderId("main")) is provider
        assert provider.config.id == "main"
        assert provider.config.kind == "fake"
        assert provider.config.credentials == {"api_key": "sk-test"}
        assert dict(provider.config.options) == {"x": 1}
        assert provider.closed == 0
    assert provider.closed == 1


@pytest.mark.anyio
async def test_missing_resolver_is_an_error_naming_the_key_path() -> None:
    built: list[FakeProvider] = []
    with pytest.raises(ConfigError) as info:
        async with open_runtime(
            PROVIDER_CONFIG, sources=[builtin_source()], memory=provider_memory(built), environ={}
        ):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.path == ("providers", "main", "credentials", "api_key")
    assert issue.code == "config.secret_unresolved"
    assert built == []


@pytest.mark.anyio
async def test_missing_variable_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEY", "in-os-environ-but-not-in-the-resolver")
    with pytest.raises(ConfigError) as info:
        async with open_runtime(
            PROVIDER_CONFIG,
            sources=[builtin_source()],
            memory=provider_memory([]),
            environ={},
            resolver=dict[str, str]().get,
        ):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.code == "config.secret_missing"
    assert "providers.main.credentials.api_key" in str(info.value)


@pytest.mark.anyio
async def test_factory_returning_a_non_provider_fails_with_plugin_details() -> None:
    memory = MemorySource()
    memory.add("providers", "fake", lambda config: object(), distribution="bad-dist")
    with pytest.raises(ConfigError) as info:
        async with open_runtime(
            {"providers": {"main": {"kind": "fake"}}},
            sources=[builtin_source()],
            memory=memory,
            environ={},
        ):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert (issue.code, issue.path) == ("config.factory_product", ("providers", "main"))
    assert "the providers factory 'fake' (bad-dist" in issue.message
    assert "returned an object, not a Provider: missing " in issue.message


@pytest.mark.anyio
async def test_overrides_replace_catalog_entries_and_the_real_factory_is_never_called() -> None:
    calls: list[object] = []

    def real_factory(config: Any) -> FakeProvider:
        calls.append(config)
        raise AssertionError("the real factory must not run")

    memory = MemorySource()
    memory.add("providers", "fake", real_factory)
    fake = FakeProvider()
    async with open_runtime(
        {"providers": {"main": {"kind": "fake", "credentials": {"k": "$ENV:NEVER_NEEDED"}}}},
        sources=[builtin_source()],
        memory=memory,
        environ={},
        overrides=[("providers", "main", fake)],
    ) as rt:
        assert rt.catalog(PROVIDERS).require(ProviderId("main")) is fake
    assert calls == []
    assert fake.closed == 0  # the caller passed it in and still owns it


@pytest.mark.anyio
async def test_pytest_fixtures_override_by_kind_and_id(
    agentrig_entries: MemorySource, agentrig_overrides: Any, agentrig_runtime: Any
) -> None:
    calls: list[object] = []
    agentrig_entries.add("providers", "fake", lambda config: calls.append(config))
    fake = FakeProvider()
    agentrig_overrides.set("providers", "main", fake)
    async with agentrig_runtime({"providers": {"main": {"kind": "fake"}}}) as rt:
        assert rt.catalog(PROVIDERS).require("main") is fake
    assert calls == []


@pytest.mark.anyio
async def test_catalogs_are_sealed_after_composition() -> None:
    keys: tuple[CatalogKey[Any, Any], ...] = (PROVIDERS, TOOLS, SESSION_STORES, HOOK_STRATEGIES)
    async with open_runtime({}, sources=[builtin_source()], environ={}) as rt:
        for key in keys:
            with pytest.raises(SealedCatalogError):
                rt.registry(key).register(object(), id="late")
        with pytest.raises(ConfigError, match="no catalog 'nope'"):
            rt.catalog(CatalogKey("nope"))
        # a catalog is named by its typed key; the bare string is refused, naming what to pass
        untyped: Any = "tools"  # what untyped plugin code might pass (typeguard off: production)
        with (
            typeguard.suppress_type_checks(),
            pytest.raises(ConfigError, match=r"agentrig\.tools\.TOOLS\), not by 'tools'"),
        ):
            rt.catalog(untyped)


@pytest.mark.anyio
async def test_runtime_started_is_notified_with_the_runtime() -> None:
    seen: list[RuntimeStarted] = []

    class Listener:
        @agentrig.hookimpl
        def runtime_started(self, payload: RuntimeStarted) -> None:
            # composed and sealed before the notification
            assert payload.runtime.registry(TOOLS).sealed
            seen.append(payload)

    async with open_runtime(
        {}, sources=[builtin_source()], environ={}, plugins=[("l", Listener())]
    ) as rt:
        assert [s.runtime for s in seen] == [rt]


class Disposable:
    def __init__(self, log: list[str], name: str, *, fail: bool = False, sync: bool = False):
        self.log = log
        self.name = name
        self.fail = fail
        if sync:
            self.close = self._close  # type: ignore[method-assign]
        else:
            self.aclose = self._aclose

    def _close(self) -> None:
        self.log.append(self.name)
        if self.fail:
            raise OSError(f"{self.name} failed to close")

    async def _aclose(self) -> None:
        await anyio.lowlevel.checkpoint()
        self._close()

    @agentrig.hookimpl
    def runtime_started(self, payload: object) -> None:
        pass


@pytest.mark.anyio
async def test_closing_leaves_what_the_caller_passed_in_open() -> None:
    log: list[str] = []
    provider = Disposable(log, "provider")
    tool = Disposable(log, "tool")
    overrides = [("providers", "main", provider), ("tools", "t", tool)]
    async with open_runtime({}, sources=[builtin_source()], environ={}, overrides=overrides) as rt:
        assert rt.catalog(PROVIDERS).require(ProviderId("main")) is provider
    assert rt.close_report == ()
    assert log == []  # the caller still owns both


@pytest.mark.anyio
async def test_disposal_runs_every_step_collects_failures_and_is_idempotent() -> None:
    log: list[str] = []
    plugins: list[tuple[str, object]] = [
        ("p1", Disposable(log, "plugin1")),
        ("p2", Disposable(log, "plugin2", fail=True)),
        ("p3", Disposable(log, "plugin3", sync=True)),
    ]
    tool = Disposable(log, "tool", fail=True)

    class ToolStep:  # the runtime owns what its composition built
        @compose_step()
        def compose(self, payload: Composition) -> None:
            # a stand-in with only aclose(): its disposal is what this test shows
            stand_in: Any = tool
            payload.runtime.registry(TOOLS).register(stand_in, id=ToolId("t"), source="step")

    plugins.append(("step", ToolStep()))
    async with open_runtime({}, sources=[builtin_source()], environ={}, plugins=plugins) as rt:

        async def closer() -> None:
            log.append("closer")
            raise RuntimeError("closer failed")

        rt.on_close("agents", closer)
        rt.own("resource", Disposable(log, "owned"))
    # every step ran, in order: closers, plugins (reverse), catalog entries, owned resources
    assert log == ["closer", "plugin3", "plugin2", "plugin1", "tool", "owned"]
    report = rt.close_report
    assert report is not None
    assert [f.stage_id for f in report] == ["close:agents", "plugin:p2", "tools:t"]
    assert [f.code for f in report] == ["python.RuntimeError", "python.OSError", "python.OSError"]
    assert isinstance(report[1].cause, OSError)
    # closing again is harmless: nothing runs twice, the same report comes back
    assert await rt.aclose() is report
    assert log == ["closer", "plugin3", "plugin2", "plugin1", "tool", "owned"]


@pytest.mark.anyio
async def test_disposal_failures_are_never_raised_from_the_context_manager() -> None:
    plugin = Disposable([], "p", fail=True)
    async with open_runtime(
        {}, sources=[builtin_source()], environ={}, plugins=[("p", plugin)]
    ) as rt:
        pass
    assert rt.close_report is not None
    assert len(rt.close_report) == 1


@pytest.mark.anyio
async def test_closed_runtime_refuses_new_work_saying_it_was_closed() -> None:
    async with open_runtime({}, sources=[builtin_source()], environ={}) as rt:
        pass
    for action in (
        rt.ensure_open,
        lambda: rt.add_plugin("late", Disposable([], "late")),
        lambda: rt.http(),
    ):
        with pytest.raises(RuntimeClosedError, match="was closed") as info:
            action()
        assert "not initialised" not in str(info.value)
        assert info.value.code == "runtime.closed"
    assert "closed" in repr(rt)


@pytest.mark.anyio
async def test_errors_from_the_body_propagate_unchanged_and_the_runtime_closes() -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom):  # not wrapped in an ExceptionGroup
        async with open_runtime({}, sources=[builtin_source()], environ={}) as rt:
            raise Boom
    assert rt.closed


@pytest.mark.anyio
async def test_a_failed_composition_disposes_what_it_built() -> None:
    log: list[str] = []
    with pytest.raises(ConfigError):
        async with open_runtime(
            {"session_stores": {"s": {"kind": "missing"}}},
            sources=[builtin_source()],
            environ={},
            plugins=[("p", Disposable(log, "plugin"))],
        ):
            pytest.fail("must not compose")
    assert log == ["plugin"]


@pytest.mark.anyio
async def test_cancellation_of_the_body_closes_the_runtime() -> None:
    with anyio.move_on_after(0.05) as scope:
        async with open_runtime({}, sources=[builtin_source()], environ={}) as rt:
            await anyio.sleep(10)
    assert scope.cancelled_caught
    assert rt.closed


@pytest.mark.anyio
async def test_http_clients_are_owned_and_closed_at_disposal() -> None:
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, json={"ok": True})

    async with open_runtime(
        {}, sources=[builtin_source()], environ={}, http_transport=httpx.MockTransport(handler)
    ) as rt:
        client = rt.http()
        response = await client.get("https://example.com/x")
        assert response.json() == {"ok": True}
        assert not client.is_closed
    assert requests  # the test transport was used: no network
    assert client.is_closed


@pytest.mark.anyio
async def test_without_the_egress_step_there_is_no_http_client_that_skips_the_policy() -> None:
    """Every client of a runtime goes through the egress policy: with the step that builds
    them disabled, asking for one fails naming the step instead of handing out a plain one."""
    config = {"plugins": {"disabled": ["compose-egress"]}}
    async with open_runtime(config, sources=[builtin_source()], environ={}) as rt:
        with pytest.raises(ConfigError, match="compose-egress") as info:
            rt.http()
    assert info.value.issues[0].code == "runtime.not_composed"
