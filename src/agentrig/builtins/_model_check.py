"""Is every configured model listed by its endpoint?  (``config check --online``, ``serve``)

A model name misspelt in config otherwise shows up only at the first run, as a 404 from the
provider.  Every provider of an open runtime that can list its endpoint's models
(:class:`~agentrig.llm.EndpointModelListing`) is asked once; each (provider, model) pair it
does not list is one problem, at the key that names the model.  A fallback provider's
deployments are checked each with its own model; the default model selection
(``[model_selection]``) is checked as an agent's model is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from agentrig.agent import agent_configs, model_selection_config
from agentrig.errors import Issue

if TYPE_CHECKING:
    from agentrig.kernel import Runtime

__all__ = ["ModelListingReport", "check_listed_models"]

PathPart = str | int


@attrs.frozen(slots=True)
class ModelListingReport:
    """``problems``: models not listed and listings that failed (one issue each);
    ``notes``: providers that cannot list their models (their models stay unchecked)."""

    problems: tuple[Issue, ...]
    notes: tuple[Issue, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


async def check_listed_models(rt: Runtime) -> ModelListingReport:
    """Ask each provider's endpoint for its models; report each configured model it lacks."""
    problems, notes = await _listed(rt)
    return ModelListingReport(tuple(problems), tuple(notes))


async def _listed(rt: Runtime) -> tuple[list[Issue], list[Issue]]:
    from agentrig.llm import EndpointModelListing, ProviderError

    problems: list[Issue] = []
    notes: list[Issue] = []
    listings: dict[str, frozenset[str] | None] = {}  # None: could not (or cannot) list
    seen: set[tuple[str, str]] = set()
    for provider_id, model, path in _deployments(rt):
        if (provider_id, model) in seen:
            continue
        seen.add((provider_id, model))
        if provider_id not in listings:
            provider = _provider(rt, provider_id)
            listings[provider_id] = None
            where: tuple[PathPart, ...] = ("providers", provider_id)
            if not isinstance(provider, EndpointModelListing):
                message = f"provider {provider_id!r} cannot list its models: {model!r} unchecked"
                notes.append(Issue("model.unchecked", message, where))
                continue
            try:
                listings[provider_id] = await provider.endpoint_models()
            except ProviderError as exc:
                message = f"listing the models of provider {provider_id!r} failed: {exc}"
                problems.append(Issue(exc.code, message, where))
                continue
        listed = listings[provider_id]
        if listed is not None and model not in listed:
            message = f"model {model!r} is not listed by provider {provider_id!r}'s endpoint"
            problems.append(Issue("model.not_listed", message, path))
    return problems, notes


def _provider(rt: Runtime, provider_id: str) -> object:
    from agentrig.ids import ProviderId
    from agentrig.llm import PROVIDERS

    return rt.catalog(PROVIDERS).get(ProviderId(provider_id))


def _configured(rt: Runtime) -> list[tuple[str, str, tuple[PathPart, ...]]]:
    """Every (provider id, model, key path) the config names: the agents', the default
    selection's."""
    named: list[tuple[str, str, tuple[PathPart, ...]]] = [
        (str(agent.provider), str(agent.model), ("agents", agent_id, "model"))
        for agent_id, agent in agent_configs(rt.loaded).items()
    ]
    chosen = model_selection_config(rt.loaded)
    if chosen.provider is not None and chosen.model is not None:
        named.append((str(chosen.provider), str(chosen.model), ("model_selection", "model")))
    return named


def _deployments(rt: Runtime) -> list[tuple[str, str, tuple[PathPart, ...]]]:
    """Every (provider id, model, key path) a configured model would be sent to."""
    from agentrig.builtins._fallback import FallbackProvider

    out: list[tuple[str, str, tuple[PathPart, ...]]] = []
    for first in _configured(rt):
        pending = [first]
        visited: set[tuple[str, str]] = set()
        while pending:
            provider_id, model, where = pending.pop(0)
            if (provider_id, model) in visited:
                continue
            visited.add((provider_id, model))
            provider = _provider(rt, provider_id)
            if not isinstance(provider, FallbackProvider):
                out.append((provider_id, model, where))
                continue
            for deployment in provider.deployments:
                chosen = deployment.model if deployment.model is not None else model
                step: tuple[PathPart, ...] = ("providers", provider_id, "options", "models")
                target = (*step, deployment.provider) if deployment.model is not None else where
                pending.append((deployment.provider, chosen, target))
    return out
