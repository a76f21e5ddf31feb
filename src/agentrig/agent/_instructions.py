"""Project instructions an agent's system prompt carries (``AGENTS.md``, ``CLAUDE.md`` ...).

A plugin provides :data:`PROJECT_INSTRUCTIONS` while the runtime is composed (the built-in
``compose-instructions`` step reads the files); every agent the runtime creates then has
its configured system prompt followed by these instructions.  The sources are kept beside
the text so ``agentrig doctor`` can say where each part came from.
"""

from __future__ import annotations

from typing import final

import attrs

from agentrig.kernel import ServiceKey

__all__ = ["PROJECT_INSTRUCTIONS", "ProjectInstructions", "with_instructions"]


@final
@attrs.frozen(slots=True)
class ProjectInstructions:
    """The instruction files' text, in order, with the path of each."""

    sections: tuple[tuple[str, str], ...] = ()

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(path for path, _ in self.sections)

    def render(self) -> str:
        parts = [f"## {path}\n\n{text.strip()}" for path, text in self.sections]
        return "# Project instructions\n\n" + "\n\n".join(parts) if parts else ""


PROJECT_INSTRUCTIONS: ServiceKey[ProjectInstructions] = ServiceKey("project-instructions")
"""The instructions every agent of the runtime carries after its own system prompt."""


def with_instructions(system_prompt: str | None, found: ProjectInstructions | None) -> str | None:
    """``system_prompt`` followed by the project instructions (unchanged without any)."""
    text = found.render() if found is not None else ""
    if not text:
        return system_prompt
    return f"{system_prompt.rstrip()}\n\n{text}" if system_prompt else text
