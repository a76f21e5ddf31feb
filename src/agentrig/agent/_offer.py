"""An agent's tools and which of them the next request offers.

Deferral (``plan_offer``) withholds some tools until ``tool_search`` loads them; tools the
permission rules deny outright are never shown.  The plan is cached until the tools, the
loaded set or the model change; request definitions (specs) are built once per tool.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterable
from typing import TYPE_CHECKING, final

from agentrig.agent._config import AgentConfig
from agentrig.agent._dispatch import Gate
from agentrig.llm import ToolSpec
from agentrig.tools import Tool
from agentrig.tools.deferral import DeferralPolicy, OfferPlan, plan_offer

if TYPE_CHECKING:
    from agentrig.kernel import Runtime

__all__ = ["ToolOffer"]

_NONE: frozenset[str] = frozenset()


@final
class ToolOffer:
    """The tool-offer state of one agent (its ``Agent`` handle delegates to it)."""

    __slots__ = (
        "_config",
        "_denied",
        "_gate",
        "_plan",
        "_runtime",
        "_specs",
        "loaded",
        "policy",
        "tools",
    )

    def __init__(
        self,
        runtime: Runtime,
        config: AgentConfig,
        tools: Iterable[Tool],
        gate: Gate | None,
        *,
        specs: dict[str, tuple[Tool, ToolSpec, int]] | None = None,
    ) -> None:
        self._runtime = runtime
        self._config = config
        self._gate = gate
        # keyed by plain names: a model's tool call names its tool with an unchecked string
        self.tools: dict[str, Tool] = {t.id: t for t in tools}
        # frozensets, empty ones shared: most agents never load or deny a tool
        self.loaded: frozenset[str] = _NONE
        self.policy = DeferralPolicy(
            mode=config.deferral, max_resident=config.deferral_max_resident
        )
        self._plan: tuple[tuple[int, str], OfferPlan] | None = None
        # tool id -> (tool, its request definition, its size); an agent registry shares one
        # between its agents (a definition depends only on the tool)
        self._specs = {} if specs is None else specs
        self._denied: frozenset[str] | None = None

    def plan(self) -> OfferPlan:
        """What is offered and what is withheld now."""
        # The plan depends only on the tools, what was loaded, the model and the config: keep
        # it until one of those changes (the offered set is still re-read every round).
        key = (len(self.loaded), self._config.model)
        if self._plan is not None and self._plan[0] == key:
            return self._plan[1]
        plan = self._compute_plan()
        self._plan = (key, plan)
        return plan

    def _compute_plan(self) -> OfferPlan:
        if self._denied is None:
            denied = self._gate.denied_tools(list(self.tools.values())) if self._gate else ()
            self._denied = frozenset(denied) if denied else _NONE
        visible = [t for t in self.tools.values() if t.id not in self._denied]
        overrides: dict[str, bool] = {
            name: cfg.deferred
            for name, cfg in self._runtime.config.tools.items()
            if cfg.deferred is not None
        }
        window = self._runtime.models.context_window(self._config.model)
        key = (tuple(map(id, visible)), self.loaded, self.policy, window, (*overrides.items(),))
        shared = _SHARED_PLANS.get(key)
        if shared is not None and all(map(operator.is_, shared[0], visible)):
            return shared[1]
        plan = plan_offer(
            visible,
            loaded=self.loaded,
            policy=self.policy,
            context_window=window,
            overrides=overrides,
        )
        if len(_SHARED_PLANS) >= _SHARED_PLANS_MAX:
            _SHARED_PLANS.clear()
        _SHARED_PLANS[key] = (tuple(visible), plan)
        return plan

    def load(self, tool_ids: Iterable[str]) -> None:
        """Make deferred tools resident from the next request on."""
        new = {tool_id for tool_id in tool_ids if tool_id in self.tools} - self.loaded
        if new:
            self.loaded = self.loaded | new

    def replace(self, tools: Iterable[Tool]) -> None:
        """Swap in checked tools; loaded ones still present stay loaded."""
        self.tools = {t.id: t for t in tools}
        self.loaded = frozenset(self.loaded & self.tools.keys()) or _NONE
        self._plan = None
        self._denied = None

    def spec(self, tool: Tool) -> ToolSpec:
        """The (unprojected) definition of ``tool`` for a request; built once per tool."""
        cached = self._specs.get(tool.id)
        if cached is None or cached[0] is not tool:
            cached = self._build_spec(tool)
        return cached[1]

    def request_specs(self, tools: Iterable[Tool]) -> tuple[tuple[ToolSpec, ...], int]:
        """The definitions of ``tools`` for a request, and their estimated size in characters."""
        specs = []
        chars = 0
        cache = self._specs
        for tool in tools:
            cached = cache.get(tool.id)
            if cached is None or cached[0] is not tool:
                cached = self._build_spec(tool)
            specs.append(cached[1])
            chars += cached[2]
        return tuple(specs), chars

    def spec_chars(self, tool: Tool) -> int:
        """The estimated size of ``tool``'s definition in characters."""
        cached = self._specs.get(tool.id)
        if cached is None or cached[0] is not tool:
            cached = self._build_spec(tool)
        return cached[2]

    def _build_spec(self, tool: Tool) -> tuple[Tool, ToolSpec, int]:
        cached = _SHARED_SPECS.get(id(tool))
        if cached is None or cached[0] is not tool:
            spec = ToolSpec(
                name=tool.id,
                description=tool.description,
                parameters=dict(tool.input_schema.json_schema),
            )
            chars = len(spec.description) + len(json.dumps(spec.parameters))
            cached = (tool, spec, chars)
            if len(_SHARED_SPECS) >= _SHARED_SPECS_MAX:
                _SHARED_SPECS.clear()
            _SHARED_SPECS[id(tool)] = cached
        self._specs[tool.id] = cached
        return cached


# plan_offer's inputs (the tools by identity) -> (those tools, its plan): a pure function of
# them, so every new agent with the same tool objects, loaded set, policy, window and
# per-tool overrides gets the one plan (a server creates an agent per request).  Entries
# hold their tools, so an id is not reused while cached; bounded, cleared when full.
_SHARED_PLANS: dict[
    tuple[tuple[int, ...], frozenset[str], DeferralPolicy, int, tuple[tuple[str, bool], ...]],
    tuple[tuple[Tool, ...], OfferPlan],
] = {}
_SHARED_PLANS_MAX = 1024

# id(tool) -> (tool, its definition, the definition's size): one per tool object for every
# agent offering it (a server creates an agent per request), not one per agent.  Entries
# hold their tool, so an id is not reused while cached; bounded, cleared when full.
_SHARED_SPECS: dict[int, tuple[Tool, ToolSpec, int]] = {}
_SHARED_SPECS_MAX = 4096
