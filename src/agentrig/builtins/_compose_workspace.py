"""The ``workspace`` compose step, kept apart so a runtime without the toolset loads nothing.

It provides the runtime's :class:`~agentrig.builtins.workspace.Workspace` only when the
config has a ``[workspace]`` table or offers one of the workspace tools; the toolset itself
(pydantic models, the sandbox backends) is imported then and only then.
"""

from __future__ import annotations

from agentrig.kernel import Composition, compose_step

__all__ = ["PLUGIN", "WorkspaceStep"]

_PACKAGE = "agentrig.builtins.workspace"


class WorkspaceStep:
    """Listener plugin ``compose-workspace`` (an ``agentrig.plugins`` entry of the core)."""

    @compose_step("agents")
    async def compose(self, payload: Composition) -> None:
        from agentrig.tools import TOOLS

        rt = payload.runtime
        offered = any(
            type(tool).__module__.startswith(_PACKAGE) for _, tool in rt.catalog(TOOLS).entries()
        )
        if offered or "workspace" in rt.loaded.sections:
            from agentrig.builtins.workspace._plugin import compose_workspace

            compose_workspace(rt)

    def __repr__(self) -> str:
        return "<compose step compose-workspace phase=agents>"


PLUGIN = WorkspaceStep()
