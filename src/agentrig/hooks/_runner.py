"""Running the configured hooks of an event and combining what they decided."""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, final

import anyio
import attrs

from agentrig.cancel import CancelSignal, is_abort
from agentrig.errors import ConfigError, Issue
from agentrig.hooks._combine import CombinedOutcome, combine
from agentrig.hooks._config import HookConfig, hooks_config
from agentrig.hooks._events import HookEvent, event_name_problem
from agentrig.hooks._matcher import Matcher, compile_matcher, matcher_subject
from agentrig.hooks._outcome import Allow, Deny, HookErrorOutcome, HookOutcome
from agentrig.hooks._strategy import HOOK_STRATEGIES, HookStrategy, HookStrategyFactory
from agentrig.ids import PluginName
from agentrig.kernel import protocol_problems
from agentrig.lifecycle import Observation
from agentrig.tracing import TRACE_CONTEXT, TraceContext

if TYPE_CHECKING:
    from agentrig.kernel import Runtime

__all__ = ["ConfiguredHook", "HookRunner"]

FactoryLookup = Mapping[str, HookStrategyFactory] | Callable[[str], HookStrategyFactory]


@attrs.frozen(slots=True)
class ConfiguredHook:
    """One ``[[hooks.<Event>]]`` entry, built: its matcher and its strategy instance."""

    event: str
    index: int
    strategy_name: str
    matcher: Matcher
    strategy: HookStrategy
    #: what makes two entries the same hook (strategy + options): identical hooks run once
    key: str = ""
    #: ``on_error = "proceed"``: an error outcome of this hook never blocks
    proceed: bool = False

    @property
    def label(self) -> str:
        return f"hook {self.event}[{self.index}] ({self.strategy_name})"


def _lookup(factories: FactoryLookup, name: str) -> HookStrategyFactory:
    if isinstance(factories, Mapping):
        if name not in factories:
            known = ", ".join(sorted(factories)) or "none"
            raise LookupError(f"no hook strategy named {name!r} (known: {known})")
        return factories[name]
    return factories(name)


def _notify_hook(rt: Runtime, data: dict[str, Any]) -> None:
    if rt.hooks.has_listeners("observe"):
        rt.hooks.notify("observe", Observation(kind="hook", agent_id=None, data=data))


def _with_trace(event: HookEvent, trace: TraceContext | None) -> HookEvent:
    headers = trace.headers() if trace is not None else {}
    if not headers.get("traceparent"):
        return event
    return attrs.evolve(
        event, traceparent=headers["traceparent"], tracestate=headers.get("tracestate")
    )


def _hook_observation(
    event: HookEvent,
    hook: ConfiguredHook,
    outcome: Allow | Deny | HookErrorOutcome,
    started_at: float,
    started: float,
) -> dict[str, Any]:
    """What the ``hook`` observation says about one hook execution (content-free)."""
    payload = event.payload
    return {
        "event": event.name,
        "hook": hook.label,
        "strategy": hook.strategy_name,
        "outcome": outcome.kind,
        "reason": getattr(outcome, "reason", None),
        "session_id": payload.get("session_id"),
        "tool": payload.get("tool_name"),
        "call_id": payload.get("tool_use_id"),
        "started_at": started_at,
        "duration_ms": (time.perf_counter() - started) * 1000,
    }


@final
class HookRunner:
    """The hooks of a composition, built once; :meth:`run` fires one event.

    ``hooks`` is the config's ``hooks`` section (event -> entries); ``factories`` maps a
    strategy name to its factory (a mapping, or a lookup such as
    ``rt.catalog(HOOK_STRATEGIES).require``).  ``services`` are added to every factory's
    spec (``http``: a callable returning an ``httpx.AsyncClient``).  Every problem -- an
    unknown strategy, an invalid matcher, options a factory refuses -- is reported at once as
    a :class:`~agentrig.errors.ConfigError` naming the entry.
    """

    def __init__(
        self,
        hooks: Mapping[str, Sequence[HookConfig | Mapping[str, Any]]],
        factories: FactoryLookup,
        *,
        services: Mapping[str, Any] | None = None,
        base_dir: str | Path | None = None,
        source: str | None = None,
        observe: Callable[[dict[str, Any]], None] | None = None,
        trace: Callable[[], TraceContext | None] | None = None,
    ) -> None:
        #: called with a content-free record of every hook execution (``hook`` observations)
        self.observe = observe
        #: the runtime's trace context, if any: an event without a ``traceparent`` gets the
        #: current one (command hooks see it as ``TRACEPARENT``)
        self.trace = trace
        built: dict[str, list[ConfiguredHook]] = {}
        issues: list[Issue] = []
        base = Path(base_dir) if base_dir is not None else None
        for event, entries in hooks.items():
            problem = event_name_problem(event)
            if problem is not None:
                issues.append(Issue("hooks.event", problem, ("hooks", event)))
                continue
            for index, raw in enumerate(entries):
                found = _configured(event, index, raw, factories, services or {}, base)
                if isinstance(found, Issue):
                    issues.append(found)
                else:
                    built.setdefault(event, []).append(found)
        if issues:
            raise ConfigError(issues, source=source)
        self._hooks: dict[str, tuple[ConfiguredHook, ...]] = {
            event: tuple(items) for event, items in built.items()
        }

    @classmethod
    def from_runtime(cls, rt: Runtime, *, base_dir: str | Path | None = None) -> HookRunner:
        """Build the runner of a composed runtime: its config's hooks, its catalog's strategies,
        its HTTP client factory."""
        catalog = rt.catalog(HOOK_STRATEGIES)

        def lookup(name: str) -> HookStrategyFactory:
            # a factory registered in the catalog (an override) wins over the installed entry
            if catalog.has(PluginName(name)):  # a config name: validated when the config loads
                found: HookStrategyFactory = catalog.require(PluginName(name))
                return found
            try:
                loaded_entry: Any = rt.index.load("hook_strategies", name)
            except Exception as exc:
                raise LookupError(str(exc)) from exc
            return loaded_entry  # type: ignore[no-any-return]

        loaded = getattr(rt, "loaded", None)
        if base_dir is None and loaded is not None:
            base_dir = loaded.base_dir
        return cls(
            hooks_config(rt.loaded),
            lookup,
            # rt.http is looked up when a strategy builds a client: a runtime without the
            # egress step fails there, naming it, instead of handing out an unchecked client
            services={"http": lambda **options: rt.http(**options)},
            base_dir=base_dir,
            source=getattr(loaded, "source", None),
            observe=lambda data: _notify_hook(rt, data),
            trace=lambda: rt.services.get(TRACE_CONTEXT),
        )

    @property
    def events(self) -> tuple[str, ...]:
        """The events that have at least one hook."""
        return tuple(self._hooks)

    def hooks_for(self, event: HookEvent) -> tuple[ConfiguredHook, ...]:
        """The hooks of ``event.name`` whose matcher matches, in configuration order.

        Identical hooks (same strategy and options, under different matchers) run once, as
        Claude Code deduplicates identical commands.
        """
        subject = matcher_subject(event)
        seen: set[str] = set()
        chosen: list[ConfiguredHook] = []
        for hook in self._hooks.get(event.name, ()):
            if hook.matcher.matches(subject) and hook.key not in seen:
                seen.add(hook.key)
                chosen.append(hook)
        return tuple(chosen)

    async def run(self, event: HookEvent, *, signal: CancelSignal | None = None) -> CombinedOutcome:
        """Run the matching hooks of ``event`` concurrently and combine their outcomes.

        A strategy that raises or returns something other than an outcome is an error
        outcome naming that; a cancelled ``signal`` raises its abort error once every hook's
        process is cleaned up.
        """
        signal = signal if signal is not None else CancelSignal()
        signal.raise_if_cancelled()
        hooks = self.hooks_for(event)
        if hooks and event.traceparent is None and self.trace is not None:
            event = _with_trace(event, self.trace())
        results: list[HookOutcome | None] = [None] * len(hooks)
        aborts: list[BaseException] = []

        async def one(position: int, hook: ConfiguredHook) -> None:
            started_at, started = time.time(), time.perf_counter()
            try:
                outcome: object = await hook.strategy.run(event, signal=signal)
            except Exception as exc:
                if is_abort(exc, signal):
                    aborts.append(exc)
                    return
                outcome = HookErrorOutcome(f"the strategy raised {type(exc).__name__}: {exc}")
            if not isinstance(outcome, Allow | Deny | HookErrorOutcome):
                outcome = HookErrorOutcome(
                    f"the strategy returned {type(outcome).__name__}, not a hook outcome"
                )
            if isinstance(outcome, HookErrorOutcome) and hook.proceed:
                outcome = attrs.evolve(outcome, proceed=True)
            results[position] = attrs.evolve(outcome, source=hook.label)
            if self.observe is not None:
                self.observe(_hook_observation(event, hook, outcome, started_at, started))

        if len(hooks) == 1:
            await one(0, hooks[0])
        elif hooks:
            async with anyio.create_task_group() as tg:
                for position, hook in enumerate(hooks):
                    tg.start_soon(one, position, hook)
        if aborts:
            raise aborts[0]
        signal.raise_if_cancelled()
        return combine([r for r in results if r is not None], event=event.name)

    async def aclose(self) -> None:
        """Close the strategies that hold resources (an HTTP client ...)."""
        for hooks in self._hooks.values():
            for hook in hooks:
                closer = getattr(hook.strategy, "aclose", None)
                if closer is not None:
                    result = closer()
                    if inspect.isawaitable(result):
                        await result


def _configured(
    event: str,
    index: int,
    raw: HookConfig | Mapping[str, Any],
    factories: FactoryLookup,
    services: Mapping[str, Any],
    base_dir: Path | None,
) -> ConfiguredHook | Issue:
    """The hook one ``[[hooks.<event>]]`` entry configures, or the issue that refuses it."""
    path: tuple[str | int, ...] = ("hooks", event, index)
    try:
        entry = raw if isinstance(raw, HookConfig) else HookConfig.model_validate(raw)
    except Exception as exc:
        return Issue("hooks.invalid", str(exc), path)
    try:
        matcher = compile_matcher(entry.matcher)
    except ValueError as exc:
        return Issue("hooks.matcher", str(exc), (*path, "matcher"))
    try:
        factory = _lookup(factories, entry.strategy)
    except LookupError as exc:
        return Issue("hooks.strategy", str(exc), (*path, "strategy"))
    spec: dict[str, Any] = {
        **services,
        "event": event,
        "strategy": entry.strategy,
        "matcher": entry.matcher,
        "options": dict(entry.options),
        "base_dir": base_dir,
    }
    try:
        strategy: object = factory(spec)
    except Exception as exc:
        return Issue("hooks.options", f"{exc}", (*path, "options"))
    problems = protocol_problems(strategy, HookStrategy)
    if problems or not isinstance(strategy, HookStrategy):
        found = "None" if strategy is None else f"a {type(strategy).__name__}"
        why = "" if strategy is None else f": {'; '.join(problems) or 'missing run'}"
        return Issue(
            "hooks.strategy",
            f"strategy {entry.strategy!r} built {found}, not a HookStrategy "
            f"(async run(event, *, signal)){why}",
            (*path, "strategy"),
        )
    key = json.dumps([entry.strategy, entry.options], sort_keys=True, default=str)
    proceed = entry.on_error == "proceed"
    return ConfiguredHook(event, index, entry.strategy, matcher, strategy, key, proceed=proceed)
