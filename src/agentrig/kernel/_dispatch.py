"""Driving pluggy's ordered hook implementations in the four dispatch modes.

pluggy owns registration, ordering (``tryfirst``/``trylast``, last-registered-first) and
blocking.  Its call loop is synchronous, so the kernel reads the ordered implementations
(``HookCaller.get_hookimpls()``, public pluggy API) once, caches a compact call plan per
hook, and drives it itself -- awaiting async implementations, chaining waterfalls and
isolating notify failures.  The plan is rebuilt whenever a plugin is (un)registered.

One manager per process holds every hook's spec (:func:`spec_modules`) and judges each
listener against the whole set (:func:`listener_refusals`) before a runtime's manager, which
holds no spec (a copy per runtime would only repeat that judgement), registers it.
"""

from __future__ import annotations

import collections
import functools
import inspect
import types
from collections.abc import Awaitable, Callable, Collection, Coroutine, Mapping
from typing import Any, TypeVar, cast, final

import attrs
import pluggy

from agentrig._markers import PROJECT
from agentrig._seams import core_seam, seam_names
from agentrig.diagnostics import get_logger
from agentrig.errors import ErrorInfo, HookError, error_info
from agentrig.kernel import _hookspecs as kernel_hookspecs
from agentrig.kernel._hookspecs import Mode, modes_in
from agentrig.kernel._listeners import listener_problems

__all__ = [
    "HookDispatcher",
    "HookFailure",
    "Spawner",
    "listener_refusals",
    "mode_of",
    "new_plugin_manager",
    "spec_modules",
]

_log = get_logger("hooks")
_R = TypeVar("_R")
_P = TypeVar("_P")

Spawner = Callable[[Callable[[], Coroutine[Any, Any, None]]], object]
"""Starts a coroutine function out of band (the runtime passes its task group's start_soon)."""


@functools.cache
def spec_modules() -> tuple[types.ModuleType, ...]:
    """The modules of every hookspec the spec manager holds: the kernel's, then the layers'.

    A layer above the kernel declares the hooks it fires in its own module and hands it down
    through one of agentrig's own ``agentrig.seams`` entry points named ``*_hookspecs``
    (the lifecycle's, the skills', the CLI's): the kernel names none of them.
    """
    above = [core_seam(name) for name in seam_names() if name.endswith("_hookspecs")]
    return (kernel_hookspecs, *cast(list[types.ModuleType], above))


@functools.cache
def _modes() -> dict[str, Mode]:
    return {hook: mode for module in spec_modules() for hook, mode in modes_in(module).items()}


def mode_of(hook: str) -> Mode | None:
    """The dispatch mode of agentrig hook ``hook`` (None: no such hook)."""
    return _modes().get(hook)


@final
@attrs.frozen(slots=True)
class HookFailure:
    """A listener's failure that did not change the outcome (notify / awaited hooks)."""

    hook: str
    plugin: str
    info: ErrorInfo


class _Impl:
    """One registered listener: ``fn(payload)`` or, on a waterfall hook, ``fn(payload, next)``
    (the only two shapes registration accepts)."""

    __slots__ = ("fast", "fn", "plugin", "takes_next")

    def __init__(self, impl: pluggy.HookImpl) -> None:
        self.fn: Callable[..., Any] = impl.function
        self.plugin = impl.plugin_name
        self.takes_next = tuple(impl.argnames) == ("payload", "next")
        # an ``async def hook(payload, next)`` waterfall listener: the chain's fast path
        self.fast = self.takes_next and inspect.iscoroutinefunction(impl.function)

    def call(self, payload: Any, nxt: Any) -> Any:
        return self.fn(payload, nxt) if self.takes_next else self.fn(payload)


def _takes_next(hook: str) -> bool | None:
    """Whether ``hook``'s listeners may take ``next`` (None: no such agentrig hook)."""
    mode = mode_of(hook)
    return None if mode is None else mode is Mode.WATERFALL


_MARK = f"{PROJECT}_impl"
_WRAPPED = (types.MethodType, staticmethod, classmethod)
_BUILTIN = (object, type, types.ModuleType)
_Marked = dict[str, tuple[object, ...]]


def marked_attributes(obj: object) -> _Marked:
    """The attributes of ``obj`` that may carry a hookimpl marker, with the values under each
    name, read from the dictionaries and slots pluggy's static lookup reads (no descriptor
    runs).  A superset (a wrapped function always counts): pluggy still judges each name."""
    instance = not isinstance(obj, type) and not isinstance(obj, types.ModuleType)
    classes = type(obj).__mro__ + (obj.__mro__ if isinstance(obj, type) else ())
    spaces: list[Mapping[str, object]] = [vars(c) for c in classes if c not in _BUILTIN]
    if not isinstance(obj, type):  # a class's own dictionary is first in its __mro__
        try:  # (not contextlib.suppress: a context manager costs more than the lookup)
            spaces.append(object.__getattribute__(obj, "__dict__"))
        except AttributeError:  # an instance with slots only has none
            spaces.append({})
    found: _Marked = {}
    for space in spaces:
        for name, value in space.items():
            if instance and type(value) is types.MemberDescriptorType:
                try:  # a slot's value (reading one runs no user code)
                    value = value.__get__(obj, type(obj))
                except AttributeError:
                    continue
            if (type(value) is types.FunctionType and _MARK in value.__dict__) or isinstance(
                value, _WRAPPED
            ):
                found[name] = (*found.get(name, ()), value)
    return found


def has_hookimpl(marked: _Marked) -> bool:
    """Whether any of ``marked`` (:func:`marked_attributes`) carries the hookimpl marker."""
    functions = (getattr(v, "__func__", v) for values in marked.values() for v in values)
    return any(_MARK in getattr(f, "__dict__", ()) for f in functions)


# verdicts by what they depend on (binding, marked functions: a reloaded plugin brings new ones)
_REFUSALS: dict[tuple[object, ...], tuple[str, ...]] = {}


def listener_refusals(plugin: object, marked: _Marked | None = None) -> list[str]:
    """Why registration would refuse ``plugin``'s listeners (empty: it would accept them);
    ``marked`` is :func:`marked_attributes` of it, when the caller has that already."""
    binding = (isinstance(plugin, types.ModuleType), isinstance(plugin, type))
    key = (binding, *(marked_attributes(plugin) if marked is None else marked).items())
    known = _REFUSALS.get(key)
    if known is None:
        known = tuple(listener_problems(_spec_manager(), plugin, _takes_next))
        if len(_REFUSALS) >= 512:
            _REFUSALS.clear()
        _REFUSALS[key] = known
    return list(known)


@functools.cache
def _spec_manager() -> pluggy.PluginManager:
    """The process's manager of every hookspec and no plugin, which judges listeners: it
    reads every attribute, so a dunder-named implementation is refused."""
    return new_plugin_manager()


class _Manager(pluggy.PluginManager):
    """A runtime's manager: pluggy's, which reads every attribute of a plugin it registers
    (``inspect.getattr_static``), skipping the ones :func:`marked_attributes` ruled out for this
    registration (nothing is remembered between registrations)."""

    _only: Collection[str] | None = None

    def register_marked(
        self, plugin: object, name: str | None, only: Collection[str]
    ) -> str | None:
        self._only = only
        try:
            return self.register(plugin, name)
        finally:
            self._only = None

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        if self._only is not None and name not in self._only:
            return None
        return super().parse_hookimpl_opts(plugin, name)


def new_plugin_manager() -> pluggy.PluginManager:
    """A pluggy manager for project ``agentrig`` holding every agentrig hook's spec."""
    pm = pluggy.PluginManager(PROJECT)
    for module in spec_modules():
        pm.add_hookspecs(module)
    return pm


@final
class HookDispatcher:
    """Dispatches the agentrig hooks of one plugin manager in their declared modes."""

    def __init__(self, *, spawner: Spawner | None = None, max_failures: int = 1000) -> None:
        self.pm = _Manager(PROJECT)  # judged against the specs by listener_refusals
        self.spawner = spawner
        self._plans: dict[str, tuple[_Impl, ...]] = {}
        self._failures: collections.deque[HookFailure] = collections.deque(maxlen=max_failures)
        self._failure_count = 0

    # ---- registration ----------------------------------------------------------------------
    def register(self, plugin: object, name: str | None = None) -> str:
        """Register a plugin object (module, class instance, ...) and validate its hookimpls.

        Refused, with every reason (:func:`listener_problems`): implementations of unknown
        hooks (with a "did you mean"), hook wrappers (agentrig drives its hooks itself, so a
        pluggy wrapper would silently never run), and any signature other than ``(payload)``
        or, on a waterfall hook, ``(payload, next)``: stricter than pluggy's check against the
        specs (``tests/kernel/test_dispatch.py`` holds them to those shapes)."""
        marked = marked_attributes(plugin)
        problems = listener_refusals(plugin, marked)
        if problems:
            raise HookError(f"plugin {name or plugin!r}: " + "; ".join(problems))
        registered = self.pm.register_marked(plugin, name, marked.keys())
        if registered is None:
            raise HookError(f"plugin {name or plugin!r} is blocked or already registered")
        self._plans.clear()
        return registered

    def unregister(self, plugin: object) -> None:
        self.pm.unregister(plugin)
        self._plans.clear()

    def plan(self, hook: str) -> tuple[_Impl, ...]:
        """The implementations of ``hook`` in call order (first called first)."""
        plan = self._plans.get(hook)
        if plan is None:
            if mode_of(hook) is None:
                raise HookError(f"unknown agentrig hook {hook!r}")
            caller: pluggy.HookCaller | None = getattr(self.pm.hook, hook, None)
            # pluggy stores implementations in reverse call order.
            impls = reversed(caller.get_hookimpls()) if caller is not None else ()
            plan = tuple(_Impl(i) for i in impls)
            self._plans[hook] = plan
        return plan

    def has_listeners(self, hook: str) -> bool:
        plan = self._plans.get(hook)  # the common case: a cached (often empty) plan
        return bool(plan if plan is not None else self.plan(hook))

    # ---- failures ----------------------------------------------------------------------------
    def failures(self) -> tuple[HookFailure, ...]:
        """Recorded listener failures (most recent last, bounded)."""
        return tuple(self._failures)

    @property
    def failure_count(self) -> int:
        return self._failure_count

    def _record(self, hook: str, plugin: str, error: BaseException) -> None:
        self._failure_count += 1
        self._failures.append(HookFailure(hook, plugin, error_info(error)))
        _log.warning("listener %s of hook %s failed: %r", plugin, hook, error, exc_info=error)

    def _spawn(self, hook: str, impl: _Impl, coro: Coroutine[Any, Any, Any]) -> None:
        if self.spawner is None:
            coro.close()
        self.spawn(hook, impl.plugin, lambda: coro)

    def spawn(self, hook: str, plugin: str, work: Callable[[], Awaitable[object]]) -> None:
        """Run ``work()`` out of band, as an async listener ``plugin`` of ``hook`` runs.

        For a synchronous listener that starts work the hook must not wait for: it runs on
        the runtime's task group, and a failure is recorded as that listener's (the plugin
        report), never raised into the runtime.  Without a running runtime the failure is
        recorded at once and ``work`` is not called.
        """
        spawner = self.spawner
        if spawner is None:
            self._record(
                hook,
                plugin,
                HookError(f"async listener of {hook} needs a running runtime to run out of band"),
            )
            return

        async def run() -> None:
            try:
                await work()
            except Exception as exc:
                self._record(hook, plugin, exc)

        spawner(run)

    # ---- modes -------------------------------------------------------------------------------
    def notify(self, hook: str, payload: object) -> None:
        """Run every listener; failures are recorded, async listeners run out of band."""
        self.notify_vetoable(hook, payload)

    def notify_vetoable(self, hook: str, payload: object) -> BaseException | None:
        """Like :meth:`notify`, but returns the first *synchronous* failure (a veto)."""
        plan = self._plans.get(hook)
        if plan is None:
            plan = self.plan(hook)
        veto: BaseException | None = None
        for impl in plan:
            try:
                result = impl.fn(payload)  # non-waterfall listeners take (payload)
            except Exception as exc:
                self._record(hook, impl.plugin, exc)
                veto = veto or exc
                continue
            if result is not None and inspect.iscoroutine(result):
                self._spawn(hook, impl, result)
        return veto

    async def awaited(self, hook: str, payload: object) -> None:
        """Await every listener in order; failures are recorded and do not stop the others."""
        for impl in self.plan(hook):
            try:
                result = impl.fn(payload)
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:
                self._record(hook, impl.plugin, exc)

    async def ordered(
        self,
        hook: str,
        payload: object,
        *,
        rank: Callable[[Callable[..., Any]], int] | None = None,
    ) -> None:
        """Await every listener in order; the first exception propagates (and stops the rest).

        ``rank`` (of an implementation's function) reorders the plan, stably, before the
        calls: lower ranks first, pluggy's order within a rank.
        """
        plan = self.plan(hook)
        if rank is not None:
            plan = tuple(sorted(plan, key=lambda impl: rank(impl.fn)))
        for impl in plan:
            result = impl.call(payload, None)
            if inspect.isawaitable(result):
                await result

    async def first_result(self, hook: str, payload: object) -> Any:
        """Ask listeners in order; the first non-None answer wins (None when nobody answers)."""
        for impl in self.plan(hook):
            result = impl.fn(payload)
            if inspect.isawaitable(result):
                result = await result
            if result is not None:
                return result
        return None

    def waterfall(
        self, hook: str, payload: _P, default: Callable[[_P], Awaitable[_R]]
    ) -> Awaitable[_R]:
        """Run the chain of ``hook`` around ``default`` (await the result).

        See the module docs for the rules.  Not a coroutine function itself: it returns the
        outermost step's awaitable, which saves a frame per call.
        """
        plan = self._plans.get(hook)
        if plan is None:
            plan = self.plan(hook)
        if not plan:
            return default(payload)
        # Build the chain innermost-first.  The common listener -- ``async def hook(payload,
        # next)`` -- gets a plain step that returns the listener's own coroutine, so a level
        # costs one coroutine plus a small closure: close to a hand-written chain of the same
        # awaits (benchmarks/bench_hooks.py); no ``cast``, a call building Awaitable[_R] anew.
        inner: Callable[[Any], Awaitable[Any]] = default
        if len(plan) > 1:  # (an empty loop costs a sixth of a one-listener chain)
            for index in range(len(plan) - 1, 0, -1):
                impl = plan[index]
                if impl.fast:

                    def step(
                        payload: Any,
                        _fn: Callable[..., Awaitable[Any]] = impl.fn,
                        _inner: Callable[[Any], Awaitable[Any]] = inner,
                    ) -> Awaitable[Any]:
                        def nxt(new_payload: Any = payload) -> Awaitable[Any]:
                            return _inner(new_payload)

                        return _fn(payload, nxt)

                    inner = step
                else:
                    inner = _generic_step(impl, inner)
        first = plan[0]
        if not first.fast:
            return _generic_step(first, inner)(payload)

        def nxt(new_payload: Any = payload) -> Awaitable[Any]:  # the outermost: called directly
            return inner(new_payload)

        outer: Awaitable[_R] = first.fn(payload, nxt)
        return outer


def _generic_step(
    impl: _Impl, inner: Callable[[Any], Awaitable[Any]]
) -> Callable[[Any], Awaitable[Any]]:
    """The step for sync listeners and listeners without ``next``.

    ``next()`` without an argument passes the payload this listener received; a listener
    that does not take ``next`` delegates when it returns ``None``.
    """

    async def step(payload: Any) -> Any:
        def nxt(new_payload: Any = payload) -> Awaitable[Any]:
            return inner(new_payload)

        result = impl.call(payload, nxt)
        if inspect.isawaitable(result):
            result = await result
        if result is None and not impl.takes_next:
            return await inner(payload)
        return result

    return step
