"""Hook dispatch: the four modes over pluggy's ordered hookimpls (DESIGN §4.4)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

import agentrig
from agentrig.errors import HookError
from agentrig.kernel import (
    HookDispatcher,
    Mode,
    builtin_source,
    mode_of,
    new_plugin_manager,
    open_runtime,
)
from agentrig.kernel._dispatch import spec_modules
from agentrig.lifecycle import Observation


async def wait_until(condition: Callable[[], bool]) -> None:
    """Let out-of-band tasks run until ``condition()`` holds (they signal nothing we own)."""
    with anyio.fail_after(5):
        while not condition():  # noqa: ASYNC110 - polling state set by another task
            await anyio.sleep(0.001)


def obs(kind: str = "k") -> Observation:
    return Observation(kind=kind, agent_id=None)


class Recorder:
    """Listeners that append their name to a shared log."""

    def __init__(self, log: list[str], name: str) -> None:
        self.log = log
        self.name = name


def make_observer(log: list[str], name: str, **opts: Any) -> object:
    class Observer:
        @agentrig.hookimpl(**opts)
        def observe(self, payload: Observation) -> None:
            log.append(name)

    return Observer()


# ---- registration ---------------------------------------------------------------------------


def test_every_hook_has_exactly_one_mode() -> None:
    assert mode_of("observe") is Mode.NOTIFY
    assert mode_of("agent_created") is Mode.NOTIFY
    assert mode_of("runtime_started") is Mode.NOTIFY
    assert mode_of("register_commands") is Mode.NOTIFY
    assert mode_of("pre_step") is Mode.WATERFALL
    assert mode_of("request_config") is Mode.WATERFALL
    assert mode_of("request_error") is Mode.WATERFALL
    assert mode_of("tool_execution") is Mode.WATERFALL
    assert mode_of("turn_stopping") is Mode.AWAITED
    assert mode_of("permission_approver") is Mode.FIRST_RESULT
    assert mode_of("compose") is Mode.ORDERED
    assert mode_of("no_such_hook") is None
    assert mode_of("Mode") is None  # a name of the module that is not a hook


def test_the_mode_is_data_on_the_spec_function_pluggy_sees() -> None:
    declared_in: dict[str, set[str]] = {}
    for caller in new_plugin_manager().hook.__dict__.values():
        spec = caller.spec
        assert spec is not None
        assert spec.function.agentrig_mode is mode_of(caller.name)
        assert spec.opts["firstresult"] == (mode_of(caller.name) is Mode.FIRST_RESULT)
        # the two listener shapes registration accepts are exactly what pluggy validates
        waterfall = mode_of(caller.name) is Mode.WATERFALL
        assert spec.argnames == (("payload", "next") if waterfall else ("payload",))
        declared_in.setdefault(spec.function.__module__, set()).add(caller.name)
    # the kernel declares the hooks of building and running the runtime; every other hook is
    # declared above it, by the layer that fires it
    assert declared_in == {
        "agentrig.kernel._hookspecs": {"compose", "runtime_started"},
        "agentrig.skills._hookspecs": {"registration_guard"},
        "agentrig.cli._hookspecs": {"register_commands"},
        "agentrig.lifecycle._hookspecs": {
            "agent_created",
            "agent_disposed",
            "agent_status",
            "session_start",
            "observe",
            "pre_step",
            "request_config",
            "compaction",
            "request_error",
            "tool_execution",
            "turn_stopping",
            "permission_approver",
            "elicitation",
        },
    }


def test_every_layers_hookspec_module_reaches_the_plugin_managers() -> None:
    # a layer above the kernel that declares hooks hands its _hookspecs module down through a
    # core seam named *_hookspecs; one without the seam would hold hooks no plugin could
    # implement (each refused as unknown at registration)
    src = Path(agentrig.__file__).parent
    declared = {
        ".".join(("agentrig", *path.relative_to(src).with_suffix("").parts))
        for path in src.rglob("_hookspecs.py")
    }
    assert {module.__name__ for module in spec_modules()} == declared
    assert "agentrig.kernel._hookspecs" in declared


def test_hook_wrappers_are_refused() -> None:
    class NewStyle:
        @agentrig.hookimpl(wrapper=True)
        def observe(self, payload: Observation) -> Any:
            return (yield)

    class OldStyle:
        @agentrig.hookimpl(hookwrapper=True)
        def observe(self, payload: Observation) -> Any:
            yield

    hooks = HookDispatcher()
    for plugin in (NewStyle(), OldStyle()):
        with pytest.raises(HookError, match="wrapper"):
            hooks.register(plugin, "w")
        assert not hooks.pm.is_registered(plugin)
    assert hooks.plan("observe") == ()


def test_unknown_hook_implementation_is_refused() -> None:
    class Typo:
        @agentrig.hookimpl
        def obsreve(self, payload: object) -> None: ...

    hooks = HookDispatcher()
    plugin = Typo()
    # the hint comes from every declared hook, the lifecycle's as well as the kernel's
    with pytest.raises(
        HookError, match="'obsreve' is not an agentrig hook; did you mean 'observe'"
    ):
        hooks.register(plugin, "typo")
    assert not hooks.pm.is_registered(plugin)


def test_unknown_hook_name_refused_at_dispatch() -> None:
    hooks = HookDispatcher()
    with pytest.raises(HookError, match="unknown agentrig hook 'nope'"):
        hooks.notify("nope", obs())


def test_next_on_a_non_waterfall_hook_is_refused() -> None:
    class Wrong:
        @agentrig.hookimpl
        def observe(self, payload: Observation, next: Any) -> None: ...

    hooks = HookDispatcher()
    plugin = Wrong()
    with pytest.raises(HookError, match="next"):
        hooks.register(plugin, "wrong")
    assert not hooks.pm.is_registered(plugin)
    # and the failed registration left nothing behind: the same name registers cleanly
    hooks.register(make_observer([], "ok"), "wrong")


def test_bad_argument_names_refused() -> None:
    class Extra:
        @agentrig.hookimpl
        def pre_step(self, next: Any, payload: Any, extra: Any) -> None: ...

    with pytest.raises(HookError):
        HookDispatcher().register(Extra(), "extra")


def test_dunder_named_listener_is_refused_not_skipped() -> None:
    # registration skips dunder attributes for speed; the refusal check still reads them
    class Dunder:
        @agentrig.hookimpl
        def __observe__(self, payload: Observation) -> None: ...

    with pytest.raises(HookError, match="__observe__"):
        HookDispatcher().register(Dunder(), "dunder")


def test_refusals_are_remembered_per_plugin_object_across_dispatchers() -> None:
    class Wrong:
        @agentrig.hookimpl
        def observ(self, payload: Observation) -> None: ...

    plugin = Wrong()
    for _ in range(2):  # the second verdict comes from the cache: the same refusal
        with pytest.raises(HookError, match="did you mean 'observe'"):
            HookDispatcher().register(plugin, "wrong")
    log: list[str] = []
    good = make_observer(log, "good")
    first, second = HookDispatcher(), HookDispatcher()
    first.register(good, "good")
    second.register(good, "good")
    first.notify("observe", obs())
    second.notify("observe", obs())
    assert log == ["good", "good"]


def test_plugins_without_weak_references_are_checked_and_run_every_time() -> None:
    # the per-object caches need a weak reference; a slotted listener has none
    log: list[str] = []

    class Slotted:
        __slots__ = ()

        @agentrig.hookimpl
        def observe(self, payload: Observation) -> None:
            log.append("slotted")

    class SlottedWrong:
        __slots__ = ()

        @agentrig.hookimpl
        def observ(self, payload: Observation) -> None: ...

    for _ in range(2):
        hooks = HookDispatcher()
        hooks.register(Slotted(), "slotted")
        hooks.notify("observe", obs())
        with pytest.raises(HookError, match="did you mean 'observe'"):
            hooks.register(SlottedWrong(), "wrong")
    assert log == ["slotted", "slotted"]


def test_registering_twice_is_refused() -> None:
    hooks = HookDispatcher()
    plugin = make_observer([], "a")
    hooks.register(plugin, "a")
    with pytest.raises((HookError, ValueError)):
        hooks.register(plugin, "a")


# ---- ordering ---------------------------------------------------------------------------------


def test_order_is_tryfirst_then_last_registered_first_then_trylast() -> None:
    log: list[str] = []
    hooks = HookDispatcher()
    hooks.register(make_observer(log, "trylast", trylast=True), "d")
    hooks.register(make_observer(log, "early"), "a")
    hooks.register(make_observer(log, "tryfirst", tryfirst=True), "c")
    hooks.register(make_observer(log, "late"), "b")
    hooks.notify("observe", obs())
    assert log == ["tryfirst", "late", "early", "trylast"]
    assert [impl.plugin for impl in hooks.plan("observe")] == ["c", "b", "a", "d"]


def test_plan_follows_unregistration() -> None:
    log: list[str] = []
    hooks = HookDispatcher()
    first = make_observer(log, "first")
    hooks.register(first, "first")
    hooks.register(make_observer(log, "second"), "second")
    hooks.notify("observe", obs())
    hooks.unregister(first)
    hooks.notify("observe", obs())
    assert log == ["second", "first", "second"]


# ---- notify -------------------------------------------------------------------------------------


def test_notify_runs_every_listener_and_records_a_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[str] = []

    class Broken:
        @agentrig.hookimpl
        def observe(self, payload: Observation) -> None:
            raise ValueError("listener bug")

    hooks = HookDispatcher()
    hooks.register(make_observer(log, "after"), "after")
    hooks.register(Broken(), "broken")
    hooks.register(make_observer(log, "before"), "before")
    with caplog.at_level(logging.WARNING, logger="agentrig.hooks"):
        # the outcome is unchanged: no exception, and no value (notify is typed "-> None", which
        # typeguard checks at run time)
        hooks.notify("observe", obs())
    assert log == ["before", "after"]  # the listeners after the broken one still ran
    (failure,) = hooks.failures()
    assert failure.hook == "observe"
    assert failure.plugin == "broken"
    assert failure.info.code == "python.ValueError"
    assert isinstance(failure.info.cause, ValueError)
    assert hooks.failure_count == 1
    assert any("broken" in r.getMessage() and r.name == "agentrig.hooks" for r in caplog.records)


def test_failures_are_bounded_but_counted() -> None:
    class Broken:
        @agentrig.hookimpl
        def observe(self, payload: Observation) -> None:
            raise RuntimeError("x")

    hooks = HookDispatcher(max_failures=3)
    hooks.register(Broken(), "b")
    for _ in range(5):
        hooks.notify("observe", obs())
    assert len(hooks.failures()) == 3
    assert hooks.failure_count == 5


def _no_payload(self: object) -> None: ...
def _other_name(self: object, event: object) -> None: ...
def _next_first(self: object, next: object, payload: object) -> None: ...
def _keyword_only(self: object, payload: object, *, extra: object) -> None: ...
def _star_args(self: object, *args: object) -> None: ...
def _notify_with_next(self: object, payload: object, next: object) -> None: ...


@pytest.mark.parametrize(
    ("hook", "function", "reason"),
    [
        ("observe", _no_payload, "observe listeners take (payload), not ()"),
        ("observe", _other_name, "observe listeners take (payload), not (event)"),
        ("pre_step", _next_first, "(payload) or (payload, next), not (next, payload)"),
        ("pre_step", _keyword_only, "keyword-only argument 'extra'"),
        ("pre_step", _star_args, "*args"),
        ("observe", _notify_with_next, "observe is not a waterfall hook"),
        ("runtime_startd", _no_payload, "did you mean 'runtime_started'?"),
        # the hooks declared above the kernel give the same hint: every manager holds them
        ("registraton_guard", _no_payload, "did you mean 'registration_guard'?"),
        ("register_comands", _no_payload, "did you mean 'register_commands'?"),
    ],
)
def test_listeners_of_any_other_shape_are_refused_with_the_reason(
    hook: str, function: Callable[..., None], reason: str
) -> None:
    plugin = type("Listener", (), {hook: agentrig.hookimpl(function)})()
    hooks = HookDispatcher()
    with pytest.raises(HookError) as info:
        hooks.register(plugin, "shaped")
    assert reason in str(info.value)
    assert "plugin 'shaped'" in str(info.value)
    assert not hooks.pm.is_registered(plugin)


def test_every_refusal_of_a_plugin_is_reported_at_once() -> None:
    class TwoWrongs:
        @agentrig.hookimpl
        def obsreve(self, payload: object) -> None: ...

        @agentrig.hookimpl
        def turn_stopping(self, payload: object, next: Any) -> None: ...

    with pytest.raises(HookError) as info:
        HookDispatcher().register(TwoWrongs(), "two")
    message = str(info.value)
    assert "did you mean 'observe'?" in message
    assert "turn_stopping is not a waterfall hook" in message


def test_async_notify_listener_without_a_runtime_is_recorded_not_run() -> None:
    ran: list[str] = []

    class AsyncObserver:
        @agentrig.hookimpl
        async def observe(self, payload: Observation) -> None:
            ran.append("ran")

    hooks = HookDispatcher()  # no spawner
    hooks.register(AsyncObserver(), "a")
    hooks.notify("observe", obs())
    assert ran == []
    (failure,) = hooks.failures()
    assert failure.info.code == "hook.invalid"
    assert "out of band" in failure.info.message


@pytest.mark.anyio
async def test_async_notify_listener_runs_out_of_band_inside_a_runtime() -> None:
    started = anyio.Event()
    release = anyio.Event()
    finished: list[str] = []

    class AsyncObserver:
        @agentrig.hookimpl
        async def observe(self, payload: Observation) -> None:
            started.set()
            await release.wait()
            finished.append(payload.kind)

        @agentrig.hookimpl
        async def agent_disposed(self, payload: Any) -> None:
            raise RuntimeError("async listener failure")

    async with open_runtime(
        {}, sources=[builtin_source()], environ={}, plugins=[("obs", AsyncObserver())]
    ) as rt:
        rt.hooks.notify("observe", obs("first"))  # returns at once, without awaiting
        assert finished == []
        with anyio.fail_after(5):
            await started.wait()
        assert finished == []  # still running, out of band
        release.set()
        await wait_until(lambda: bool(finished))
        assert finished == ["first"]
        rt.hooks.notify("agent_disposed", object())
        await wait_until(lambda: bool(rt.hook_failures()))
        (failure,) = rt.hook_failures()
        assert failure.hook == "agent_disposed"
        assert failure.info.message == "async listener failure"


def test_agent_created_sync_failure_vetoes() -> None:
    log: list[str] = []

    class Veto:
        @agentrig.hookimpl
        def agent_created(self, payload: Any) -> None:
            raise PermissionError("not this agent")

    class Other:
        @agentrig.hookimpl
        def agent_created(self, payload: Any) -> None:
            log.append("other")

    hooks = HookDispatcher()
    hooks.register(Other(), "other")
    hooks.register(Veto(), "veto")
    veto = hooks.notify_vetoable("agent_created", object())
    assert isinstance(veto, PermissionError)
    assert log == ["other"]  # every listener still ran
    assert hooks.failures()[0].plugin == "veto"


def test_agent_created_without_failure_has_no_veto() -> None:
    hooks = HookDispatcher()

    class Fine:
        @agentrig.hookimpl
        def agent_created(self, payload: Any) -> None:
            return None

    hooks.register(Fine(), "fine")
    assert hooks.notify_vetoable("agent_created", object()) is None


@pytest.mark.anyio
async def test_agent_created_async_failure_is_reported_not_a_veto() -> None:
    class AsyncVeto:
        @agentrig.hookimpl
        async def agent_created(self, payload: Any) -> None:
            raise PermissionError("too late to veto")

    async with open_runtime(
        {}, sources=[builtin_source()], environ={}, plugins=[("v", AsyncVeto())]
    ) as rt:
        assert rt.hooks.notify_vetoable("agent_created", object()) is None
        await wait_until(lambda: bool(rt.hook_failures()))
        assert rt.hook_failures()[0].info.code == "python.PermissionError"


# ---- awaited ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_awaited_runs_every_listener_in_order_before_returning() -> None:
    log: list[str] = []

    class SyncOne:
        @agentrig.hookimpl(tryfirst=True)
        def turn_stopping(self, payload: Any) -> None:
            log.append("sync")

    class AsyncOne:
        @agentrig.hookimpl
        async def turn_stopping(self, payload: Any) -> None:
            await anyio.sleep(0.01)
            log.append("async")

    class Broken:
        @agentrig.hookimpl(trylast=True)
        async def turn_stopping(self, payload: Any) -> None:
            raise ValueError("x")

    class Last:
        @agentrig.hookimpl(trylast=True)
        def turn_stopping(self, payload: Any) -> None:
            log.append("last")

    hooks = HookDispatcher()
    hooks.register(Broken(), "broken")
    hooks.register(Last(), "last")
    hooks.register(AsyncOne(), "async")
    hooks.register(SyncOne(), "sync")
    await hooks.awaited("turn_stopping", object())  # no value: "-> None", checked by typeguard
    assert log == ["sync", "async", "last"]  # the async one was awaited, not spawned
    assert [f.plugin for f in hooks.failures()] == ["broken"]


# ---- first result ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_first_result_first_non_none_wins() -> None:
    asked: list[str] = []

    def approver(name: str, answer: Any, **opts: Any) -> object:
        class Approver:
            @agentrig.hookimpl(**opts)
            async def permission_approver(self, payload: Any) -> Any:
                asked.append(name)
                return answer

        return Approver()

    class SyncNone:
        @agentrig.hookimpl(tryfirst=True)
        def permission_approver(self, payload: Any) -> Any:
            asked.append("sync-none")
            return None

    hooks = HookDispatcher()
    hooks.register(approver("never", "allow", trylast=True), "never")
    hooks.register(approver("deny", "deny"), "deny")
    hooks.register(SyncNone(), "sync-none")
    assert await hooks.first_result("permission_approver", object()) == "deny"
    assert asked == ["sync-none", "deny"]  # the trylast one was never asked


@pytest.mark.anyio
async def test_first_result_none_when_nobody_answers() -> None:
    hooks = HookDispatcher()
    assert await hooks.first_result("permission_approver", object()) is None


# ---- waterfall -------------------------------------------------------------------------------


async def default_double(payload: int) -> int:
    return payload * 2


@pytest.mark.anyio
async def test_waterfall_without_listeners_runs_the_default() -> None:
    hooks = HookDispatcher()
    assert await hooks.waterfall("request_config", 21, default_double) == 42


@pytest.mark.anyio
async def test_waterfall_delegate() -> None:
    log: list[str] = []

    class Delegate:
        @agentrig.hookimpl
        async def request_config(self, payload: int, next: Callable[[int], Awaitable[int]]) -> int:
            log.append("before")
            result = await next(payload)
            log.append(f"after:{result}")
            return result

    hooks = HookDispatcher()
    hooks.register(Delegate(), "d")
    assert await hooks.waterfall("request_config", 5, default_double) == 10
    assert log == ["before", "after:10"]


@pytest.mark.anyio
async def test_waterfall_replace_skips_inner_listeners_and_default() -> None:
    calls: list[str] = []

    async def default(payload: int) -> int:
        calls.append("default")
        return payload

    class Replace:
        @agentrig.hookimpl(tryfirst=True)
        def request_config(self, payload: int, next: Any) -> int:
            return 99  # sync, without calling next

    class Inner:
        @agentrig.hookimpl
        async def request_config(self, payload: int, next: Any) -> int:
            calls.append("inner")
            return await next(payload)

    hooks = HookDispatcher()
    hooks.register(Inner(), "inner")
    hooks.register(Replace(), "replace")
    assert await hooks.waterfall("request_config", 1, default) == 99
    assert calls == []


@pytest.mark.anyio
async def test_waterfall_payload_rewrite_reaches_inner_listeners_and_default() -> None:
    seen: list[int] = []

    async def default(payload: int) -> int:
        seen.append(payload)
        return payload

    class Outer:
        @agentrig.hookimpl(tryfirst=True)
        async def tool_execution(self, payload: int, next: Any) -> int:
            return await next(payload + 100)

    class Inner:
        @agentrig.hookimpl
        def tool_execution(self, payload: int, next: Any) -> Awaitable[int]:
            seen.append(payload)
            return next(payload + 1)  # sync listener returning next's awaitable

    hooks = HookDispatcher()
    hooks.register(Inner(), "inner")
    hooks.register(Outer(), "outer")
    assert await hooks.waterfall("tool_execution", 1, default) == 102
    assert seen == [101, 102]


@pytest.mark.anyio
async def test_waterfall_listener_without_next_delegates_on_none_or_replaces() -> None:
    seen: list[str] = []

    class Observe:
        @agentrig.hookimpl(tryfirst=True)
        def pre_step(self, payload: int) -> None:
            seen.append("observe")  # returns None: delegates unchanged

    class Answer:
        @agentrig.hookimpl
        async def pre_step(self, payload: int) -> str:
            seen.append("answer")
            return "replaced"

    async def default(payload: int) -> str:
        seen.append("default")
        return "default"

    hooks = HookDispatcher()
    hooks.register(Observe(), "observe")
    assert await hooks.waterfall("pre_step", 0, default) == "default"
    hooks.register(Answer(), "answer")
    seen.clear()
    assert await hooks.waterfall("pre_step", 0, default) == "replaced"
    assert seen == ["observe", "answer"]


@pytest.mark.anyio
async def test_waterfall_next_without_argument_keeps_the_payload() -> None:
    class Bare:
        @agentrig.hookimpl
        async def request_error(self, payload: int, next: Any) -> Any:
            return await next()

    hooks = HookDispatcher()
    hooks.register(Bare(), "bare")
    assert await hooks.waterfall("request_error", 4, default_double) == 8


@pytest.mark.anyio
async def test_waterfall_listener_exception_propagates() -> None:
    class Broken:
        @agentrig.hookimpl
        async def request_config(self, payload: int, next: Any) -> int:
            raise KeyError("from listener")

    hooks = HookDispatcher()
    hooks.register(Broken(), "broken")
    with pytest.raises(KeyError, match="from listener"):
        await hooks.waterfall("request_config", 1, default_double)


@pytest.mark.anyio
async def test_waterfall_order_is_pluggys_call_order() -> None:
    order: list[str] = []

    def link(name: str, **opts: Any) -> object:
        class Link:
            @agentrig.hookimpl(**opts)
            async def request_config(self, payload: int, next: Any) -> int:
                order.append(name)
                return await next(payload)

        return Link()

    hooks = HookDispatcher()
    hooks.register(link("trylast", trylast=True), "z")
    hooks.register(link("first-registered"), "a")
    hooks.register(link("tryfirst", tryfirst=True), "t")
    hooks.register(link("last-registered"), "b")
    await hooks.waterfall("request_config", 1, default_double)
    assert order == ["tryfirst", "last-registered", "first-registered", "trylast"]
