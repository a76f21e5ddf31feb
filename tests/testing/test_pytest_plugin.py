"""The pytest plugin (entry point pytest11) as a third-party test suite uses it."""

from __future__ import annotations

import sys

import pytest
import typeguard

import agentrig.ids

pytest_plugins = ["pytester"]

# Third-party suites do not inherit our addopts (typeguard) nor our conftest.
OUTSIDE = ["-p", "no:cacheprovider"]

BACKENDS = """
import pytest

@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param
"""


def test_typeguard_instruments_the_package_under_test() -> None:
    with pytest.raises(typeguard.TypeCheckError):
        agentrig.ids.session_id(123)  # type: ignore[arg-type]


def test_instrumentation_covers_the_package_modules_loaded_by_the_plugin() -> None:
    # The pytest plugin is loaded before typeguard's hook; it must not leave agentrig
    # uninstrumented (typeguard would warn "cannot check these packages ...").
    import agentrig

    assert "agentrig" in sys.modules
    with pytest.raises(typeguard.TypeCheckError):
        agentrig.__getattr__(42)  # type: ignore[arg-type]


def test_the_plugin_is_registered_through_its_entry_point(pytestconfig: pytest.Config) -> None:
    plugin = pytestconfig.pluginmanager.get_plugin("agentrig")
    assert plugin is not None
    assert plugin.__name__ == "agentrig.testing.pytest_plugin"
    from agentrig.testing import pytest_plugin

    assert pytest_plugin is plugin


@pytest.mark.subprocess
def test_third_party_suite_uses_entries_overrides_and_runtime(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(BACKENDS)
    pytester.makepyfile(
        test_outside="""
        import pytest
        import agentrig
        from agentrig.cli import plugin_report
        from agentrig.plugin import SESSION_STORES

        class Greeter:
            def __init__(self):
                self.started = 0

            @agentrig.hookimpl
            def runtime_started(self, payload):
                self.started += 1

        class FakeStore:  # has the SessionStore members: a factory's product is checked
            async def open_writer(self, session_id): ...
            async def load(self, session_id): ...
            async def exists(self, session_id): ...
            async def list_sessions(self): ...
            async def aclose(self): ...

        @pytest.mark.anyio
        async def test_entries_and_runtime(agentrig_entries, agentrig_runtime):
            greeter = Greeter()
            agentrig_entries.add("plugins", "greeter", greeter)
            agentrig_entries.add("session_stores", "mem", lambda config: FakeStore())
            config = {"session_stores": {"main": {"kind": "mem"}}}
            async with agentrig_runtime(config, installed=False) as rt:
                assert greeter.started == 1
                assert isinstance(rt.catalog(SESSION_STORES).require("main"), FakeStore)
                report = plugin_report(rt.index)
                rows = {r.id: r.status for r in report if r.distribution != "agentrig"}
                assert rows == {"greeter": "loaded", "mem": "loaded"}
            assert rt.closed

        @pytest.mark.anyio
        async def test_overrides(agentrig_entries, agentrig_overrides, agentrig_runtime):
            def real(config):
                raise AssertionError("the real factory must never be called")

            agentrig_entries.add("session_stores", "disk", real)
            fake = FakeStore()
            agentrig_overrides.set("session_stores", "main", fake)
            async with agentrig_runtime(
                {"session_stores": {"main": {"kind": "disk"}}}, installed=False
            ) as rt:
                assert rt.catalog(SESSION_STORES).require("main") is fake

        def test_entries_are_fresh_per_test(agentrig_entries):
            assert list(agentrig_entries.entries()) == []
        """
    )
    result = pytester.runpytest_subprocess(*OUTSIDE)
    result.assert_outcomes(passed=5)  # two async tests on two backends, one sync test


@pytest.mark.subprocess
def test_an_unclosed_runtime_fails_the_test(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(BACKENDS)
    pytester.makepyfile(
        test_leak="""
        import pytest

        @pytest.mark.anyio
        async def test_leaks(agentrig_runtime):
            manager = agentrig_runtime({}, installed=False)
            rt = await manager.__aenter__()
            assert not rt.closed
            # ... and never exits the context manager

        @pytest.mark.anyio
        async def test_closes(agentrig_runtime):
            async with agentrig_runtime({}, installed=False):
                pass
        """
    )
    result = pytester.runpytest_subprocess(*OUTSIDE)
    # the leaking test's body passes, its teardown errors on both backends
    result.assert_outcomes(passed=4, errors=2)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_leaks*", "*were not closed*"])
    assert "test_closes" not in "\n".join(
        line for line in result.outlines if line.startswith("ERROR")
    )


def test_fixtures_are_documented_for_third_parties(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--fixtures", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(
        [
            "*agentrig_entries*",
            "*In-memory plugin entries*",
            "*agentrig_overrides*",
            "*agentrig_runtime*",
        ]
    )
