"""The core's composition steps, as the listener plugins its entry points register.

Each is an ``agentrig.plugins`` entry point of the core distribution (``compose-check``,
``compose-providers``, ...; see ``pyproject.toml``), so ``agentrig plugins`` lists them and
``plugins.disabled = ["compose-agents"]`` turns one off like any plugin.  Their phases
(:data:`agentrig.kernel.PHASES`) give their order; a third-party step joins a phase.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import final

from agentrig.builtins._compose import (
    check_ids,
    compose_agents,
    compose_egress,
    compose_providers,
    compose_stores,
    compose_tools,
)
from agentrig.builtins._compose_security import compose_credentials, compose_sealers
from agentrig.builtins._compose_skills import compose_skills, scan_tools
from agentrig.builtins._instructions import compose_instructions
from agentrig.kernel import Composition, Phase, Runtime, compose_step

__all__ = [
    "AGENTS",
    "CHECK",
    "CREDENTIALS",
    "EGRESS",
    "INSTRUCTIONS",
    "PROVIDERS",
    "SEALERS",
    "SKILLS",
    "STORES",
    "TOOLS",
    "TOOL_SCAN",
    "ComposeStep",
]


@final
class ComposeStep:
    """A listener plugin with one ``compose`` implementation: ``run(rt)`` in ``phase``."""

    def __init__(
        self, phase: Phase, run: Callable[[Runtime], Awaitable[None]], *, tryfirst: bool = False
    ) -> None:
        async def compose(payload: Composition) -> None:
            await run(payload.runtime)

        compose.__doc__ = run.__doc__
        self.compose = compose_step(phase, tryfirst=tryfirst)(compose)
        self.phase = phase
        self.name = run.__name__

    def __repr__(self) -> str:
        return f"<ComposeStep {self.name} phase={self.phase}>"


CHECK = ComposeStep("check", check_ids)
EGRESS = ComposeStep("security", compose_egress)
CREDENTIALS = ComposeStep("security", compose_credentials)
SEALERS = ComposeStep("security", compose_sealers)
PROVIDERS = ComposeStep("providers", compose_providers)
STORES = ComposeStep("stores", compose_stores)
TOOLS = ComposeStep("tools", compose_tools)
SKILLS = ComposeStep("tools", compose_skills)
INSTRUCTIONS = ComposeStep("tools", compose_instructions)
#: first in the agents phase: every tool step ran, no agent was built yet
TOOL_SCAN = ComposeStep("agents", scan_tools, tryfirst=True)
AGENTS = ComposeStep("agents", compose_agents)
