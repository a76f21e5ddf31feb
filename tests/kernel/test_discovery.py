"""Plugin discovery (DESIGN §4.5): list without importing, import on first use, report."""

from __future__ import annotations

import sys
from typing import Any

import pytest

import agentrig
from agentrig.cli import plugin_report
from agentrig.errors import ConfigError, PluginDisabledError, PluginLoadError, UnknownIdError
from agentrig.ids import EntryId, ToolId
from agentrig.kernel import (
    DISABLE_AUTOLOAD_ENV,
    DISABLE_PLUGINS_ENV,
    EntryPointSource,
    MemorySource,
    PluginIndex,
    builtin_source,
    env_plugin_settings,
    open_runtime,
)
from agentrig.kernel._contracts import KINDS, group_of
from agentrig.plugin import SESSION_STORES, TOOLS

EXPLODING = """
raise RuntimeError("this module must never be imported by listing")
"""

LISTENER = """
import agentrig

IMPORTS = []
IMPORTS.append(1)
started = []

class Listener:
    @agentrig.hookimpl
    def runtime_started(self, payload):
        started.append(payload.runtime)

plugin = Listener()
"""

STORE = """
class Store:
    def __init__(self, config):
        self.config = config

    async def open_writer(self, session_id): ...
    async def load(self, session_id): ...
    async def exists(self, session_id): ...
    async def list_sessions(self): ...
    async def aclose(self): ...

def factory(config):
    return Store(config)

NOT_CALLABLE = 42
"""


class TinyStore:
    """Has the members a session store's factory product is checked for (nothing is stored)."""

    async def open_writer(self, session_id: str) -> Any:
        raise AssertionError("never called")

    async def load(self, session_id: str) -> Any:
        raise AssertionError("never called")

    async def exists(self, session_id: str) -> bool:
        return False

    async def list_sessions(self) -> tuple[str, ...]:
        return ()

    async def aclose(self) -> None:
        return None


def test_one_entry_point_group_per_kind_each_with_its_check() -> None:
    assert group_of("session_stores") == "agentrig.session_stores"
    assert all(callable(check) for check in KINDS.values())
    assert set(KINDS) >= {
        "plugins",
        "providers",
        "tools",
        "hook_strategies",
        "sealers",
        "credential_stores",
        "session_stores",
        "variants",
    }


def test_entry_point_source_lists_without_importing(fake_dist: Any) -> None:
    fake_dist(
        "boom-dist",
        "2.5",
        entry_points={"agentrig.plugins": {"boom": "boom_mod:plugin"}},
        modules={"boom_mod": EXPLODING},
    )
    entries = [e for e in EntryPointSource().entries() if e.distribution == "boom-dist"]
    assert [(e.kind, e.name, e.value, e.version) for e in entries] == [
        ("plugins", "boom", "boom_mod:plugin", "2.5")
    ]
    assert entries[0].group == "agentrig.plugins"
    assert "boom_mod" not in sys.modules
    index = PluginIndex([EntryPointSource()])
    (row,) = [r for r in plugin_report(index) if r.distribution == "boom-dist"]
    assert row.status == "available"
    assert row.error is None
    assert "boom_mod" not in sys.modules


def test_broken_import_is_reported_with_distribution_and_entry_point(
    fake_dist: Any, dist_source: Any
) -> None:
    fake_dist(
        "boom-dist",
        "2.5",
        entry_points={"agentrig.plugins": {"boom": "boom_mod:plugin"}},
        modules={"boom_mod": EXPLODING},
    )
    index = PluginIndex([dist_source("boom-dist")])
    with pytest.raises(PluginLoadError) as info:
        index.load("plugins", "boom")
    error = info.value
    assert error.distribution == "boom-dist"
    assert error.entry_point == "agentrig.plugins:boom"
    assert "import failed" in error.rule
    assert "must never be imported" in error.rule
    message = str(error)
    assert "boom-dist 2.5" in message
    assert "agentrig.plugins:boom" in message
    (row,) = plugin_report(index)
    assert row.status == "failed"
    assert row.error == error.rule
    # the failure is remembered, not retried
    with pytest.raises(PluginLoadError) as again:
        index.load("plugins", "boom")
    assert again.value is error


def test_entry_is_imported_on_first_use_and_cached(fake_dist: Any, dist_source: Any) -> None:
    fake_dist(
        entry_points={"agentrig.plugins": {"listener": "lazy_listener_mod:plugin"}},
        modules={"lazy_listener_mod": LISTENER},
    )
    index = PluginIndex([dist_source("fake-dist")])
    assert index.names("plugins") == ("listener",)
    assert "lazy_listener_mod" not in sys.modules
    first = index.load("plugins", "listener")
    assert "lazy_listener_mod" in sys.modules
    assert index.load("plugins", "listener") is first
    assert sys.modules["lazy_listener_mod"].IMPORTS == [1]
    assert index.is_loaded("plugins", "listener")


@pytest.mark.parametrize(
    ("group", "value", "rule"),
    [
        ("agentrig.session_stores", "store_mod:NOT_CALLABLE", "expected a callable factory"),
        ("agentrig.plugins", "store_mod:factory", "no @agentrig.hookimpl"),
        ("agentrig.variants", "store_mod:Store", "not a member of a variant family"),
        ("agentrig.hook_strategies", "store_mod:Store", None),  # Store(config) is fine
    ],
)
def test_contract_violation_names_distribution_entry_point_and_rule(
    fake_dist: Any, dist_source: Any, group: str, value: str, rule: str | None
) -> None:
    fake_dist(
        "contract-dist",
        entry_points={group: {"thing": value}},
        modules={"store_mod": STORE},
    )
    kind = group.removeprefix("agentrig.")
    index = PluginIndex([dist_source("contract-dist")])
    if rule is None:
        assert index.load(kind, "thing") is sys.modules["store_mod"].Store
        return
    with pytest.raises(PluginLoadError) as info:
        index.load(kind, "thing")
    error = info.value
    assert error.distribution == "contract-dist"
    assert error.entry_point == f"{group}:thing"
    assert rule in error.rule
    for part in ("contract-dist", f"{group}:thing", rule):
        assert part in str(error)
    assert index.failure(kind, "thing") is error


def test_factory_with_wrong_arity_is_refused() -> None:
    memory = MemorySource()
    memory.add("session_stores", "two_args", lambda a, b: None)
    index = PluginIndex([memory])
    with pytest.raises(PluginLoadError, match="exactly one positional config argument"):
        index.load("session_stores", "two_args")


def test_unknown_entry_lists_installed_and_suggests() -> None:
    memory = MemorySource()
    memory.add("session_stores", "jsonl", lambda config: None)
    index = PluginIndex([memory])
    with pytest.raises(UnknownIdError) as info:
        index.load("session_stores", "jsnl")
    assert info.value.suggestion == "jsonl"
    assert "agentrig.session_stores" in str(info.value)


@pytest.mark.anyio
async def test_broken_plugin_breaks_only_compositions_that_need_it(
    fake_dist: Any, dist_source: Any
) -> None:
    fake_dist(
        "mixed-dist",
        entry_points={
            "agentrig.session_stores": {"good": "store_mod:factory", "bad": "boom_mod:factory"},
            "agentrig.plugins": {"broken_listener": "boom_mod:plugin"},
        },
        modules={"store_mod": STORE, "boom_mod": EXPLODING},
    )
    sources = [builtin_source(["plugins"]), dist_source("mixed-dist")]
    # a composition that does not need 'bad' works; the broken listener is reported
    good = {"session_stores": {"main": {"kind": "good"}}}
    async with open_runtime(good, sources=sources, environ={}) as rt:
        store: Any = rt.catalog(SESSION_STORES).require(EntryId("main"))  # the test's own store
        assert store.config["id"] == "main"
        rows = {(r.kind, r.id): r for r in plugin_report(rt.index)}
        assert rows[("session_stores", "good")].status == "loaded"
        assert rows[("session_stores", "bad")].status == "available"  # never imported
        assert rows[("plugins", "broken_listener")].status == "failed"
        assert "must never be imported" in (rows[("plugins", "broken_listener")].error or "")
    # the composition that needs it fails, naming the key path, distribution and entry point
    bad = {"session_stores": {"main": {"kind": "bad"}}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(bad, sources=sources, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.path == ("session_stores", "main", "kind")
    assert issue.code == "config.plugin_broken"
    assert "mixed-dist" in issue.message
    assert "agentrig.session_stores:bad" in issue.message


@pytest.mark.anyio
async def test_a_required_broken_listener_fails_the_composition() -> None:
    memory = MemorySource()

    def explode() -> object:
        raise ImportError("no module named vendor_sdk")

    memory.add_lazy("plugins", "needed", explode, distribution="needed-dist")
    with pytest.raises(PluginLoadError, match="needed-dist"):
        async with open_runtime(
            {"plugins": {"enabled": ["needed"]}},
            sources=[builtin_source()],
            memory=memory,
            environ={},
        ):
            pytest.fail("must not compose")


class Listener:
    def __init__(self) -> None:
        self.started = 0

    @agentrig.hookimpl
    def runtime_started(self, payload: object) -> None:
        self.started += 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("config", "environ"),
    [
        ({"plugins": {"disabled": ["listener"]}}, {}),
        ({"plugins": {"disabled": ["plugins:listener"]}}, {}),
        ({}, {DISABLE_PLUGINS_ENV: "other, listener"}),
        ({}, {DISABLE_PLUGINS_ENV: "plugins:listener"}),
    ],
    ids=["config-name", "config-kind-name", "env-name", "env-kind-name"],
)
async def test_disable_by_name(config: dict[str, Any], environ: dict[str, str]) -> None:
    listener = Listener()
    memory = MemorySource()
    memory.add_lazy("plugins", "listener", lambda: listener)
    memory.add("plugins", "other_kept", Listener())
    async with open_runtime(
        config, sources=[builtin_source()], memory=memory, environ=environ
    ) as rt:
        assert listener.started == 0
        rows = {r.id: r.status for r in plugin_report(rt.index) if r.distribution != "agentrig"}
        assert rows["listener"] == "disabled"
        if "other" not in environ.get(DISABLE_PLUGINS_ENV, ""):
            assert rows["other_kept"] == "loaded"


@pytest.mark.anyio
async def test_kind_qualified_disable_leaves_other_kinds_alone() -> None:
    memory = MemorySource()
    memory.add("plugins", "same", Listener())
    memory.add("session_stores", "same", lambda config: TinyStore())
    config = {
        "plugins": {"disabled": ["plugins:same"]},
        "session_stores": {"s": {"kind": "same"}},
    }
    async with open_runtime(config, sources=[builtin_source()], memory=memory, environ={}) as rt:
        rows = {(r.kind, r.id): r.status for r in plugin_report(rt.index) if r.id == "same"}
        assert rows == {("plugins", "same"): "disabled", ("session_stores", "same"): "loaded"}


@pytest.mark.anyio
async def test_a_composition_needing_a_disabled_plugin_fails() -> None:
    memory = MemorySource()
    memory.add("session_stores", "jsonl", lambda config: object())
    config = {"session_stores": {"s": {"kind": "jsonl"}}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(
            config,
            sources=[builtin_source()],
            memory=memory,
            environ={DISABLE_PLUGINS_ENV: "jsonl"},
        ):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.code == "config.plugin_disabled"
    assert issue.path == ("session_stores", "s", "kind")
    index = PluginIndex([memory], disabled={"jsonl"})
    with pytest.raises(PluginDisabledError, match=DISABLE_PLUGINS_ENV):
        index.load("session_stores", "jsonl")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("config", "environ"),
    [
        ({"plugins": {"autoload": False, "enabled": ["wanted"]}}, {}),
        ({"plugins": {"enabled": ["plugins:wanted"]}}, {DISABLE_AUTOLOAD_ENV: "1"}),
    ],
    ids=["config", "env"],
)
async def test_autoload_off_loads_only_enabled(
    config: dict[str, Any], environ: dict[str, str]
) -> None:
    wanted, unwanted = Listener(), Listener()
    memory = MemorySource()
    memory.add("plugins", "wanted", wanted)
    memory.add_lazy("plugins", "unwanted", lambda: unwanted)
    async with open_runtime(
        config, sources=[builtin_source()], memory=memory, environ=environ
    ) as rt:
        assert wanted.started == 1
        assert unwanted.started == 0
        rows = {r.id: r.status for r in plugin_report(rt.index) if r.distribution != "agentrig"}
        assert rows == {"wanted": "loaded", "unwanted": "available"}


@pytest.mark.anyio
async def test_autoload_on_loads_every_listener() -> None:
    a, b = Listener(), Listener()
    memory = MemorySource()
    memory.add("plugins", "a", a)
    memory.add("plugins", "b", b)
    async with open_runtime({}, sources=[builtin_source()], memory=memory, environ={}):
        assert (a.started, b.started) == (1, 1)


@pytest.mark.anyio
async def test_enabling_an_uninstalled_listener_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        async with open_runtime(
            {"plugins": {"enabled": ["ghost"]}}, sources=[builtin_source()], environ={}
        ):
            pytest.fail("must not compose")
    assert info.value.issues[0].path == ("plugins", "enabled")
    assert "ghost" in info.value.issues[0].message


def test_env_plugin_settings() -> None:
    assert env_plugin_settings({}) == (frozenset(), True)
    disabled, autoload = env_plugin_settings(
        {DISABLE_PLUGINS_ENV: " a, tools:b ,,", DISABLE_AUTOLOAD_ENV: "true"}
    )
    assert disabled == {"a", "tools:b"}
    assert autoload is False
    assert env_plugin_settings({DISABLE_AUTOLOAD_ENV: "0"})[1] is True


@pytest.mark.anyio
async def test_library_does_not_read_os_environ_when_environ_is_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(DISABLE_PLUGINS_ENV, "listener")
    listener = Listener()
    memory = MemorySource()
    memory.add("plugins", "listener", listener)
    async with open_runtime({}, sources=[builtin_source()], memory=memory, environ={}):
        assert listener.started == 1


def test_memory_entries_replace_installed_ones_visibly(fake_dist: Any, dist_source: Any) -> None:
    fake_dist(
        "real-dist",
        "3.0",
        entry_points={"agentrig.session_stores": {"jsonl": "store_mod:factory"}},
        modules={"store_mod": STORE},
    )
    fake = object()
    memory = MemorySource()
    memory.add("session_stores", "jsonl", lambda config: fake, distribution="test-fakes")
    index = PluginIndex([dist_source("real-dist"), memory])
    (row,) = plugin_report(index)
    assert row.distribution == "test-fakes"
    assert row.replaces is not None
    assert "real-dist 3.0" in row.replaces
    assert "agentrig.session_stores:jsonl" in row.replaces
    factory: Any = index.load("session_stores", "jsonl")
    assert factory({}) is fake
    assert "store_mod" not in sys.modules  # the installed one was never imported


def test_memory_source_add_replace_remove() -> None:
    memory = MemorySource()
    memory.add("tools", "t", object())
    replacement = object()
    memory.add("tools", "t", replacement)
    assert [e.name for e in memory.entries()] == ["t"]
    assert next(iter(memory.entries())).load() is replacement
    memory.remove("tools", "t")
    assert list(memory.entries()) == []
    with pytest.raises(UnknownIdError, match="unknown plugin kind"):
        memory.add("toolz", "t", object())


def test_memory_lazy_entries_are_not_loaded_by_listing() -> None:
    memory = MemorySource()

    def never() -> object:
        raise AssertionError("loaded while listing")

    for i in range(50):
        memory.add_lazy("tools", f"t{i}", never)
    index = PluginIndex([memory])
    assert len(plugin_report(index)) == 50
    assert {r.status for r in plugin_report(index)} == {"available"}


def test_a_checked_report_loads_enabled_entries_and_shows_real_status() -> None:
    memory = MemorySource()
    memory.add("plugins", "ok", Listener())
    memory.add("plugins", "off", Listener())
    memory.add("variants", "bad", 42)
    index = PluginIndex([memory], disabled={"off"})
    rows = {r.id: (r.status, r.error) for r in plugin_report(index, check=True)}
    assert rows["ok"] == ("loaded", None)
    assert rows["off"] == ("disabled", None)
    assert rows["bad"][0] == "failed"
    assert "variant" in (rows["bad"][1] or "").lower()
    assert all(
        set(r.to_dict()) >= {"kind", "id", "distribution", "version", "status", "error"}
        for r in plugin_report(index)
    )


def test_register_variants_adds_entry_point_members_to_their_family() -> None:
    from typing import ClassVar, Literal

    from agentrig.kernel import register_variants
    from agentrig.variants import Variant, VariantRegistry

    class Chunk(Variant):
        family: ClassVar[str] = "test_chunk"

    class Core(Chunk):
        type: Literal["core"] = "core"

    class Greeting(Chunk):
        type: Literal["greeting"] = "greeting"
        text: str

    class Elsewhere(Variant):
        family: ClassVar[str] = "another_family"
        type: Literal["elsewhere"] = "elsewhere"

    memory = MemorySource()
    memory.add("variants", "greeting", Greeting, distribution="greeter-dist")
    memory.add("variants", "mixed", [Elsewhere], distribution="other-dist")
    memory.add("variants", "broken", "not a class")
    memory.add("variants", "off", Core)
    index = PluginIndex([memory], disabled={"off"})
    family: VariantRegistry[Chunk] = VariantRegistry(
        Chunk, loader=lambda registry: register_variants(registry, index)
    )
    family.register(Core, source="core")
    parsed = family.parse({"type": "greeting", "text": "hi"})
    assert isinstance(parsed, Greeting)  # the entry point's member joined the family
    assert family.tags() == ("core", "greeting")  # not Elsewhere, not the disabled entry
    rows = {r.id: r.status for r in plugin_report(index)}
    assert rows == {"greeting": "loaded", "mixed": "loaded", "broken": "failed", "off": "disabled"}


# ---- conflicts: two distributions, one (group, name) ------------------------------------------

STORE_A = """
class Store(str):  # a session store that compares as its name
    async def open_writer(self, session_id): ...
    async def load(self, session_id): ...
    async def exists(self, session_id): ...
    async def list_sessions(self): ...
    async def aclose(self): ...

def factory(config):
    return Store("store of dist a")
"""

STORE_B = """
class Store(str):  # a session store that compares as its name
    async def open_writer(self, session_id): ...
    async def load(self, session_id): ...
    async def exists(self, session_id): ...
    async def list_sessions(self): ...
    async def aclose(self): ...

def factory(config):
    return Store("store of dist b")
"""


@pytest.fixture
def two_stores(fake_dist: Any, dist_source: Any) -> Any:
    """Two installed distributions that both register ``agentrig.session_stores: shared``."""
    fake_dist(
        "store-a",
        "1.0",
        entry_points={"agentrig.session_stores": {"shared": "store_a_mod:factory"}},
        modules={"store_a_mod": STORE_A},
    )
    fake_dist(
        "Store_B",
        "2.0",
        entry_points={"agentrig.session_stores": {"shared": "store_b_mod:factory"}},
        modules={"store_b_mod": STORE_B},
    )
    return dist_source("store-a", "Store_B")


def test_a_name_two_distributions_register_is_a_conflict_not_a_replacement(
    two_stores: Any,
) -> None:
    from agentrig.errors import PluginConflictError

    index = PluginIndex([two_stores])
    rows = plugin_report(index)
    assert sorted((r.distribution, r.status) for r in rows) == [
        ("Store_B", "conflict"),
        ("store-a", "conflict"),
    ]
    for row in rows:
        assert "store-a 1.0" in (row.error or "")
        assert "Store_B 2.0" in (row.error or "")
        assert len(row.conflicts) == 1
    with pytest.raises(PluginConflictError) as info:
        index.load("session_stores", "shared")
    assert info.value.code == "plugin.conflict"
    assert sorted(info.value.distributions) == ["Store_B", "store-a"]
    assert '[plugins.prefer] "session_stores:shared"' in str(info.value)
    # neither was imported, and a checked report does not pick one either
    assert "store_a_mod" not in sys.modules
    assert "store_b_mod" not in sys.modules
    assert {r.status for r in plugin_report(index, check=True)} == {"conflict"}
    assert index.merged().conflicts.keys() == {("session_stores", "shared")}


def test_prefer_settles_a_conflict_and_keeps_the_other_visible(two_stores: Any) -> None:
    index = PluginIndex([two_stores], prefer={"session_stores:shared": "store-b"})
    factory: Any = index.load("session_stores", "shared")
    assert factory({}) == "store of dist b"  # 'store-b' matches 'Store_B' as pip compares
    assert "store_a_mod" not in sys.modules
    rows = {r.distribution: r for r in plugin_report(index)}
    assert rows["Store_B"].status == "loaded"
    assert rows["Store_B"].replaces is not None
    assert "store-a 1.0" in rows["Store_B"].replaces
    assert rows["store-a"].status == "overridden"
    assert len(rows["store-a"].conflicts) == 1
    assert rows["store-a"].conflicts[0].startswith("Store_B 2.0: ")
    assert index.setting_issues() == []


@pytest.mark.parametrize(
    ("prefer", "message"),
    [
        ({"session_stores:shared": "store-c"}, "did you mean 'store-a'?"),
        ({"session_stores:sharde": "store-a"}, "did you mean session_stores:shared?"),
        ({"session_store:shared": "store-a"}, "did you mean session_stores:shared?"),
        ({"shared": "store-a"}, "expected '<kind>:<name>'"),
    ],
)
def test_a_prefer_entry_that_chooses_nothing_is_refused(
    two_stores: Any, prefer: dict[str, str], message: str
) -> None:
    (issue,) = PluginIndex([two_stores], prefer=prefer).setting_issues()
    assert issue.path == ("plugins", "prefer", next(iter(prefer)))
    assert message in issue.message


@pytest.mark.anyio
async def test_composing_with_a_conflicting_id_names_both_distributions(two_stores: Any) -> None:
    config: dict[str, Any] = {"session_stores": {"main": {"kind": "shared"}}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(
            config, sources=[builtin_source(["plugins"]), two_stores], environ={}
        ):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.path == ("session_stores", "main", "kind")
    assert "store-a 1.0" in issue.message
    assert "Store_B 2.0" in issue.message
    config["plugins"] = {"prefer": {"session_stores:shared": "store-a"}}
    async with open_runtime(
        config, sources=[builtin_source(["plugins"]), two_stores], environ={}
    ) as rt:
        assert rt.catalog(SESSION_STORES).require(EntryId("main")) == "store of dist a"
    config["plugins"] = {"prefer": {"session_stores:shared": "store-z"}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(
            config, sources=[builtin_source(["plugins"]), two_stores], environ={}
        ):
            pytest.fail("must not compose")
    assert info.value.issues[0].path == ("plugins", "prefer", "session_stores:shared")


def test_replacing_a_built_in_is_a_conflict_until_the_config_chooses(fake_dist: Any) -> None:
    fake_dist(
        "jsonl-rival",
        "0.1",
        entry_points={"agentrig.session_stores": {"jsonl": "store_a_mod:factory"}},
        modules={"store_a_mod": STORE_A},
    )
    index = PluginIndex([EntryPointSource()])
    rows = [r for r in plugin_report(index) if r.id == "jsonl" and r.kind == "session_stores"]
    assert sorted((r.distribution, r.status) for r in rows) == [
        ("agentrig", "conflict"),
        ("jsonl-rival", "conflict"),
    ]
    chosen = PluginIndex([EntryPointSource()], prefer={"session_stores:jsonl": "agentrig"})
    factory: Any = chosen.load("session_stores", "jsonl")
    assert factory.__module__.startswith("agentrig.")
    assert "store_a_mod" not in sys.modules


@pytest.mark.anyio
async def test_a_name_clash_with_a_core_composition_step_is_fatal(fake_dist: Any) -> None:
    from agentrig.errors import PluginConflictError

    fake_dist(
        "step-rival",
        "0.1",
        entry_points={"agentrig.plugins": {"compose-tools": "rival_step_mod:plugin"}},
        modules={"rival_step_mod": LISTENER},
    )
    config: dict[str, Any] = {"tools": {"tool_search": {}}}
    # silently composing without the core's tools step would drop what the config asks for
    with pytest.raises(PluginConflictError) as info:
        async with open_runtime(config, environ={}):
            pytest.fail("must not compose")
    assert sorted(info.value.distributions) == ["agentrig", "step-rival"]
    config["plugins"] = {"prefer": {"plugins:compose-tools": "agentrig"}}
    async with open_runtime(config, environ={}) as rt:
        assert rt.catalog(TOOLS).has(ToolId("tool_search"))
    assert "rival_step_mod" not in sys.modules
