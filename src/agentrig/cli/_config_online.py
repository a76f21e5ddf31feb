"""``agentrig config check --online``: is every configured model listed by its endpoint?

A model name misspelt in config otherwise shows up only at the first run, as a 404 from the
provider.  Here the runtime is opened for real (secrets from the environment) and every
provider that can list its endpoint's models (:class:`~agentrig.llm.EndpointModelListing`)
is asked once; each (provider, model) pair it does not list is one problem.  A fallback
provider's deployments are checked each with its own model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentrig.errors import Issue
    from agentrig.kernel import LoadedConfig, Runtime

__all__ = ["online_issues"]

PathPart = str | int


def online_issues(loaded: LoadedConfig) -> tuple[list[Issue], list[Issue]]:
    """The problems (models not listed, listings that failed) and warnings (providers that
    cannot list their models) of the composition ``loaded``; it must already be valid."""
    import anyio

    return anyio.run(_check, loaded)


async def _check(loaded: LoadedConfig) -> tuple[list[Issue], list[Issue]]:
    import agentrig
    from agentrig.errors import AgentrigError, Issue

    try:
        async with agentrig.open_runtime(loaded, resolver=agentrig.env_resolver()) as rt:
            return await _listed(loaded, rt)
    except AgentrigError as exc:  # a missing secret ...: the check could not start
        return [Issue(exc.code, f"could not open the runtime to list models: {exc}")], []


async def _listed(loaded: LoadedConfig, rt: Runtime) -> tuple[list[Issue], list[Issue]]:
    from agentrig.errors import Issue
    from agentrig.llm import EndpointModelListing, ProviderError

    problems: list[Issue] = []
    notes: list[Issue] = []
    listings: dict[str, frozenset[str] | None] = {}  # None: could not (or cannot) list
    seen: set[tuple[str, str]] = set()
    for provider_id, model, path in _deployments(loaded, rt):
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


def _deployments(loaded: LoadedConfig, rt: Runtime) -> list[tuple[str, str, tuple[PathPart, ...]]]:
    """Every (provider id, model, key path) an agent of the config would send to."""
    from agentrig.builtins import FallbackProvider

    out: list[tuple[str, str, tuple[PathPart, ...]]] = []
    for agent_id, agent in loaded.config.agents.items():
        path: tuple[PathPart, ...] = ("agents", agent_id, "model")
        pending = [(str(agent.provider), str(agent.model), path)]
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
