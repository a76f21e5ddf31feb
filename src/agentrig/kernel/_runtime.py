"""The Runtime: a composition of plugins with sealed catalogs, and its disposal contract.

Composing validates the config, indexes the installed plugins without importing them,
registers the listener plugins (among them the core's composition steps) and the test
overrides, awaits the ``compose`` hook by phase (importing only the plugins the config
names), then seals every catalog and the services.  What composition built is reached
through typed attributes (``rt.agents``, ``rt.models``) and typed service keys.  Closing is
best-effort: every disposal step runs even when an earlier one fails, and the failures are
returned, never raised from teardown.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Hashable,
    Iterable,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, final

import anyio
import anyio.abc
from pydantic import BaseModel

from agentrig.catalog import CatalogKey, ReadonlyCatalog, Registry
from agentrig.diagnostics import get_logger
from agentrig.errors import ConfigError, ErrorInfo, HookError, Issue, RuntimeClosedError, error_info
from agentrig.kernel._composition import PHASES, Composition, phase_of
from agentrig.kernel._config import (
    LoadedConfig,
    RuntimeConfig,
    SecretResolver,
    load_config,
)
from agentrig.kernel._discovery import (
    CORE_DISTRIBUTION,
    EntryPointSource,
    MemorySource,
    PluginIndex,
    PluginSource,
    builtin_source,
    env_plugin_settings,
)
from agentrig.kernel._dispatch import HookDispatcher, HookFailure, Spawner
from agentrig.kernel._entry_points import one_installation_state
from agentrig.kernel._hookspecs import RuntimeStarted
from agentrig.kernel._services import ServiceKey, Services

if TYPE_CHECKING:
    import httpx

    from agentrig.agent import Agent, AgentRegistry, ModelSelectionService
    from agentrig.llm import ModelRegistry

__all__ = [
    "AGENTS",
    "CATALOG_KINDS",
    "HTTP",
    "MODELS",
    "MODEL_SELECTION",
    "HttpFactory",
    "Runtime",
    "open_runtime",
]

_log = get_logger("runtime")
_T = TypeVar("_T")
_OVERRIDE = "override"  # the source of entries the caller passed in (and closes itself)
_M = TypeVar("_M", bound=BaseModel)
_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")
_BY_KEY = "a catalog is named by its typed key (e.g. agentrig.tools.TOOLS)"

#: The catalogs every runtime has (keyed by the config's ids); each layer declares the typed
#: :class:`~agentrig.catalog.CatalogKey` of its own (``agentrig.tools.TOOLS``, ...).
CATALOG_KINDS = (
    "providers",
    "tools",
    "hook_strategies",
    "session_stores",
    "sealers",
    "credential_stores",
    "toolsets",
)


class HttpFactory(Protocol):
    """Builds an httpx client that obeys the runtime's egress policy (owned by the runtime).

    ``allow_private`` names private hosts the caller may reach; ``trace_to`` the URLs whose
    origins receive the W3C trace headers (none by default: a URL a tool fetches never
    does); other keyword arguments go to :class:`httpx.AsyncClient`.
    """

    def __call__(
        self, *, allow_private: Iterable[str] = (), trace_to: Iterable[str] = (), **kwargs: Any
    ) -> httpx.AsyncClient: ...


# The services behind the typed attributes; the compose steps that build them provide them.
AGENTS: ServiceKey[AgentRegistry] = ServiceKey("agents")
MODELS: ServiceKey[ModelRegistry] = ServiceKey("models")
MODEL_SELECTION: ServiceKey[ModelSelectionService] = ServiceKey("model_selection")
HTTP: ServiceKey[HttpFactory] = ServiceKey("http")


@final
class Runtime:
    """A composed set of plugins: hooks, sealed catalogs, agents and owned resources."""

    def __init__(
        self,
        loaded: LoadedConfig,
        index: PluginIndex,
        hooks: HookDispatcher,
        *,
        resolver: SecretResolver | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
        spawn: Spawner | None = None,
    ) -> None:
        self.loaded = loaded
        self.index = index
        self.hooks = hooks
        self.resolver = resolver
        self._http_transport = http_transport
        self._catalogs: dict[str, Registry[Any, Any]] = {k: Registry(k[:-1]) for k in CATALOG_KINDS}
        self._plugins: list[tuple[str, object]] = []
        self._owned: list[tuple[str, object]] = []
        self._closers: list[tuple[str, Callable[[], Awaitable[None]]]] = []
        self._closed = False
        self._cancel_running = False
        self._close_report: tuple[ErrorInfo, ...] | None = None
        self._spawn = spawn
        self.services = Services()
        """Services plugins provide, by typed key (see :mod:`agentrig.kernel._services`)."""

    # ---- configuration ----------------------------------------------------------------------
    @property
    def config(self) -> RuntimeConfig:
        return self.loaded.config

    def config_section(self, name: str, model: type[_M]) -> _M | None:
        """The plugin-owned table ``[name]`` (an ``agentrig.config_sections`` entry) validated by
        ``model``; None when absent."""
        if name not in self.loaded.sections:
            return None
        return self.loaded.section(name, model)

    # ---- catalogs -------------------------------------------------------------------------------
    def catalog(self, key: CatalogKey[_K, _V]) -> ReadonlyCatalog[_K, _V]:
        """The read-only catalog ``key`` names: ``rt.catalog(TOOLS)``, ``rt.catalog(PROVIDERS)``."""
        return self.registry(key)

    def registry(self, key: CatalogKey[_K, _V]) -> Registry[_K, _V]:
        """The writable registry ``key`` names -- for composers, until the runtime is sealed."""
        if not isinstance(key, CatalogKey):  # a plain name ("tools"), as older code passed
            raise ConfigError([Issue("runtime.unknown_catalog", f"{_BY_KEY}, not by {key!r}")])
        return self._named(key.name)

    def _named(self, kind: str) -> Registry[Any, Any]:
        if kind not in self._catalogs:
            message = f"no catalog {kind!r}; known: {', '.join(CATALOG_KINDS)}"
            raise ConfigError([Issue("runtime.unknown_catalog", message)])
        return self._catalogs[kind]

    @property
    def agents(self) -> AgentRegistry:
        """The live agents (``create``, ``resume``, ``get``)."""
        return self._built(AGENTS, "compose-agents")

    @property
    def models(self) -> ModelRegistry:
        """Model metadata and prices (context windows, ...); there even without providers."""
        return self._built(MODELS, "compose-providers")

    @property
    def model_selection(self) -> ModelSelectionService:
        """The default model selection (``current``, ``save``) and its ``presets``."""
        return self._built(MODEL_SELECTION, "compose-agents")

    @property
    def http(self) -> HttpFactory:
        """``rt.http(**httpx_options)``: a client through the egress policy, closed with us."""
        return self._built(HTTP, "compose-egress")

    @property
    def spawn(self) -> Spawner:
        """Start a coroutine function on the runtime's task group (it is awaited on close)."""
        if self._spawn is None:
            raise RuntimeClosedError("this runtime has no task group (it was not opened)")
        return self._spawn

    def _built(self, key: ServiceKey[_T], step: str) -> _T:
        value = self.services.get(key)
        if value is None:
            message = (
                f"this runtime has no {key.name}: the {step!r} composition step did not run "
                "(is it in plugins.disabled?)"
            )
            raise ConfigError([Issue("runtime.not_composed", message)], source=self.loaded.source)
        return value

    def agent(self, agent_id: str) -> Agent:
        """The agent named ``agent_id`` (declared in ``[agents.*]`` or created since); a plain
        string is validated as an agent name (``InvalidIdError`` names a malformed one)."""
        self.ensure_open()
        return self.agents.require(agent_id)

    def seal(self) -> None:
        for registry in self._catalogs.values():
            registry.seal()
        self.services.seal()

    # ---- plugins and resources --------------------------------------------------------------
    def add_plugin(self, name: str, plugin: object) -> None:
        """Register a listener plugin (disposed in reverse order on close)."""
        self.ensure_open()
        self.hooks.register(plugin, name)
        self._plugins.append((name, plugin))

    def own(self, name: str, resource: object) -> None:
        """Take ownership of a resource with ``aclose()``/``close()``; closed on disposal."""
        self._owned.append((name, resource))

    def on_close(self, name: str, closer: Callable[[], Awaitable[None]]) -> None:
        """Run ``closer`` first on disposal (agents settle before plugins go away)."""
        self._closers.append((name, closer))

    def hook_failures(self) -> tuple[HookFailure, ...]:
        return self.hooks.failures()

    @property
    def http_transport(self) -> httpx.AsyncBaseTransport | None:
        """The transport tests passed to :func:`open_runtime` (None in production)."""
        return self._http_transport

    # ---- lifecycle ----------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._closed

    def ensure_open(self) -> None:
        if self._closed:
            raise RuntimeClosedError(
                "this runtime was closed; it refuses new work (open a new one with open_runtime)"
            )

    @property
    def close_report(self) -> tuple[ErrorInfo, ...] | None:
        """The failures collected by disposal (None until closed)."""
        return self._close_report

    @property
    def cancel_running(self) -> bool:
        """Whether closing cancels running turns instead of awaiting them."""
        return self._cancel_running

    async def aclose(self, *, cancel_running: bool = False) -> tuple[ErrorInfo, ...]:
        """Dispose everything; returns the failures (empty when all went well). Idempotent.

        Running turns are awaited first, or cancelled with ``cancel_running=True``.
        """
        if self._close_report is not None:
            return self._close_report
        self._closed = True
        self._cancel_running = cancel_running
        failures: list[ErrorInfo] = []

        async def step(stage: str, action: Callable[[], Any]) -> None:
            try:
                result = action()
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:
                _log.warning("disposal step %s failed: %r", stage, exc)
                failures.append(error_info(exc, stage_id=stage))

        with anyio.CancelScope(shield=True):
            for name, closer in reversed(self._closers):
                await step(f"close:{name}", closer)
            for name, plugin in reversed(self._plugins):
                disposer = getattr(plugin, "aclose", None) or getattr(plugin, "close", None)
                if callable(disposer):
                    await step(f"plugin:{name}", disposer)
            for kind in reversed(CATALOG_KINDS):
                catalog = self._catalogs[kind]
                for entry_id, value in reversed(list(catalog.entries())):
                    if inspect.ismodule(value) or isinstance(value, type):
                        continue
                    if catalog.source_of(entry_id) == _OVERRIDE:
                        continue  # the caller passed it in and still owns it
                    disposer = getattr(value, "aclose", None)
                    if callable(disposer):
                        await step(f"{kind}:{entry_id}", disposer)
            for name, resource in reversed(self._owned):
                disposer = getattr(resource, "aclose", None) or getattr(resource, "close", None)
                if callable(disposer):
                    await step(f"owned:{name}", disposer)
        self._close_report = tuple(failures)
        return self._close_report

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<Runtime {state} source={self.loaded.source!r}>"


def _load_listeners(rt: Runtime) -> None:
    index = rt.index
    required = {n.removeprefix("plugins:") for n in rt.config.plugins.enabled}
    # the core's own listeners are its composition steps: without one, the runtime would
    # silently lack what the config asks for
    required |= {e.name for e in index.entries("plugins") if e.distribution == CORE_DISTRIBUTION}
    # ... also when another distribution registers the same name: that conflict is fatal
    required |= {
        name
        for (kind, name), candidates in index.merged().conflicts.items()
        if kind == "plugins" and any(c.distribution == CORE_DISTRIBUTION for c in candidates)
    }
    installed = set(index.names("plugins"))
    issues = index.setting_issues(rt.config.plugins.disabled)
    issues += [
        Issue(
            "config.unknown_id",
            f"no listener plugin named {n!r} is installed "
            f"(installed: {', '.join(sorted(installed)) or 'none'})",
            ("plugins", "enabled"),
        )
        for n in sorted(required - installed)
    ]
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)
    for name in index.autoload_names("plugins"):
        try:
            plugin = index.load("plugins", name)
            try:
                rt.add_plugin(name, plugin)
            except HookError as exc:
                raise index.fail("plugins", name, str(exc)) from exc
        except Exception as exc:
            # ``plugins.strict`` (``agentrig run --strict-plugins``) makes every failure fatal
            if name in required or rt.config.plugins.strict:
                raise
            # A broken listener is reported (plugin report, log) and breaks nothing else.
            _log.warning("listener plugin %s was not loaded: %s", name, exc)


@asynccontextmanager
async def open_runtime(
    config: str | os.PathLike[str] | Mapping[str, Any] | RuntimeConfig | LoadedConfig | None = None,
    *,
    resolver: SecretResolver | None = None,
    sources: Sequence[PluginSource] | None = None,
    memory: MemorySource | None = None,
    overrides: Iterable[tuple[str, str, object]] = (),
    environ: Mapping[str, str] | None = None,
    http_transport: httpx.AsyncBaseTransport | None = None,
    plugins: Iterable[tuple[str, object]] = (),
) -> AsyncIterator[Runtime]:
    """Compose a runtime from ``config`` and dispose it on exit.

    ``resolver`` resolves ``$ENV:`` secret references (the library reads no environment for
    them itself).  ``sources`` replaces the installed entry points as the plugin source;
    ``memory`` adds in-memory entries on top of them.  ``overrides`` replaces catalog entries
    by ``(kind, id, object)``; the caller keeps owning those objects (closing the runtime
    does not close them).  ``plugins`` registers extra listener objects by name.
    ``environ`` is where the documented plugin switches are read (default ``os.environ``).
    """
    with one_installation_state() as installed:  # one look at what is installed per open
        loaded, index = _index(config, sources, memory, environ)
    # An exception raised inside a task group comes out wrapped in an ExceptionGroup; the
    # caller's own errors (and composition errors) are carried out of the group instead and
    # re-raised unchanged.  Cancellation still propagates through the group as anyio expects.
    error: Exception | None = None
    async with anyio.create_task_group() as tg:
        hooks = HookDispatcher(spawner=tg.start_soon)
        rt = Runtime(
            loaded,
            index,
            hooks,
            resolver=resolver,
            http_transport=http_transport,
            spawn=tg.start_soon,
        )
        left_cleanly = False
        try:
            with one_installation_state(installed):
                await _start(rt, plugins, overrides)
            yield rt
            left_cleanly = True
        except Exception as exc:
            error = exc
        finally:
            # leaving normally awaits running turns; a failed start or an error cancels them
            await rt.aclose(cancel_running=not left_cleanly)
            tg.cancel_scope.cancel()
    if error is not None:
        raise error


def _index(
    config: str | os.PathLike[str] | Mapping[str, Any] | RuntimeConfig | LoadedConfig | None,
    sources: Sequence[PluginSource] | None,
    memory: MemorySource | None,
    environ: Mapping[str, str] | None,
) -> tuple[LoadedConfig, PluginIndex]:
    """The loaded config and the plugin index it and the environment's switches select."""
    disabled_env, autoload_env = env_plugin_settings(os.environ if environ is None else environ)
    # the core's own tables ([agents], [permissions], ...) are known whatever the sources
    plugin_sources: list[PluginSource] = (
        [builtin_source(["config_sections"]), *sources]
        if sources is not None
        else [EntryPointSource()]
    )
    if memory is not None:
        plugin_sources.append(memory)
    owned = {e.name for s in plugin_sources for e in s.entries() if e.kind == "config_sections"}
    loaded = load_config(config, sections=owned)
    settings = loaded.config.plugins
    index = PluginIndex(
        plugin_sources,
        disabled=set(settings.disabled) | disabled_env,
        autoload=settings.autoload and autoload_env,
        enabled=settings.enabled,
        prefer=settings.prefer,
    )
    return loaded, index


async def _start(
    rt: Runtime, plugins: Iterable[tuple[str, object]], overrides: Iterable[tuple[str, str, object]]
) -> None:
    """Register the listeners and overrides, compose, seal and announce the runtime."""
    _load_listeners(rt)
    for name, plugin in plugins:
        rt.add_plugin(name, plugin)
    # Overrides go in first: a composer skips ids that are already present, so an
    # overridden provider is never built (its credentials are never needed).
    for kind, entry_id, obj in overrides:
        rt._named(kind).register(obj, id=entry_id, replace=True, source=_OVERRIDE)
    # the compose steps by phase, pluggy's order within a phase
    await rt.hooks.ordered("compose", Composition(rt), rank=lambda fn: PHASES.index(phase_of(fn)))
    rt.seal()
    rt.hooks.notify("runtime_started", RuntimeStarted(rt))
