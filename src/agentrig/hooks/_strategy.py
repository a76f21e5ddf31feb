"""The hook-strategy port: what a ``hook_strategies`` plugin contributes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeAlias, runtime_checkable

from agentrig.cancel import CancelSignal
from agentrig.catalog import CatalogKey
from agentrig.hooks._events import HookEvent
from agentrig.hooks._outcome import HookOutcome
from agentrig.ids import PluginName

__all__ = [
    "HOOK_STRATEGIES",
    "HookStrategy",
    "HookStrategyFactory",
]


@runtime_checkable
class HookStrategy(Protocol):
    """A hook executor: runs one configured hook for one event and decodes its answer.

    ``run`` never raises for a hook's own failure -- a crash, a timeout, an undecodable
    answer are :class:`~agentrig.hooks.HookErrorOutcome` with a named reason.  It raises only
    when ``signal`` fires (the run was cancelled), after cleaning up what it started.
    """

    async def run(self, event: HookEvent, *, signal: CancelSignal) -> HookOutcome: ...


HookStrategyFactory: TypeAlias = Callable[[Mapping[str, Any]], HookStrategy]
"""Entry point of ``agentrig.hook_strategies``: ``factory(spec) -> HookStrategy``.

``spec`` is one ``[[hooks.<Event>]]`` entry plus what the runtime provides:
``{"event", "strategy", "matcher", "options": {...}, "base_dir": Path | None,
"http": () -> httpx.AsyncClient}``.  A factory validates ``spec["options"]`` (exposing the
pydantic model as ``factory.options_model`` is customary) and raises on bad options.
"""


HOOK_STRATEGIES: CatalogKey[PluginName, HookStrategyFactory] = CatalogKey("hook_strategies")
"""Hook strategy factories registered in the runtime (test overrides of installed ones)."""
