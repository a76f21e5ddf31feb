"""``agentrig config check --online``: is every configured model listed by its endpoint?

The runtime is opened for real (secrets from the environment) and handed to
:func:`agentrig.builtins.check_listed_models` (which ``agentrig serve`` runs at start too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentrig.errors import Issue
    from agentrig.kernel import LoadedConfig

__all__ = ["online_issues"]


def online_issues(loaded: LoadedConfig) -> tuple[list[Issue], list[Issue]]:
    """The problems (models not listed, listings that failed) and warnings (providers that
    cannot list their models) of the composition ``loaded``; it must already be valid."""
    import anyio

    return anyio.run(_check, loaded)


async def _check(loaded: LoadedConfig) -> tuple[list[Issue], list[Issue]]:
    import agentrig
    from agentrig.builtins import check_listed_models
    from agentrig.errors import AgentrigError, Issue

    try:
        async with agentrig.open_runtime(loaded, resolver=agentrig.env_resolver()) as rt:
            report = await check_listed_models(rt)
    except AgentrigError as exc:  # a missing secret ...: the check could not start
        return [Issue(exc.code, f"could not open the runtime to list models: {exc}")], []
    return list(report.problems), list(report.notes)
