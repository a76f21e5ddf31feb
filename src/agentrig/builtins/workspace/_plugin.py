"""The workspace compose step's work: provide the runtime's :class:`Workspace`, check it early.

The root is ``[permissions] workspace`` (relative to the config file), the same root the
permission evaluator reads rules against, so "inside the workspace" means one thing.  A
runtime that offers ``Bash`` must have a sandbox that works here, checked now: a backend
that cannot enforce its policy is a configuration error when the runtime opens, not a
command that runs unconfined later.
"""

from __future__ import annotations

from pathlib import Path

from agentrig.builtins.workspace._base import WorkspaceTool
from agentrig.builtins.workspace._config import WorkspaceConfig
from agentrig.builtins.workspace._errors import SandboxUnavailableError
from agentrig.builtins.workspace._sandbox import backend_for
from agentrig.builtins.workspace._space import WORKSPACE, FetchClient, Workspace
from agentrig.errors import ConfigError, Issue
from agentrig.kernel import HTTP, Runtime
from agentrig.permissions import permissions_config
from agentrig.tools import TOOLS

__all__ = ["compose_workspace", "workspace_root"]


def workspace_root(base_dir: Path, configured: str) -> Path:
    root = Path(configured)
    return (root if root.is_absolute() else base_dir / root).resolve()


def compose_workspace(rt: Runtime) -> None:
    """Provide ``rt``'s workspace; a workspace tool that could not work is a ConfigError."""
    config = rt.config_section("workspace", WorkspaceConfig) or WorkspaceConfig()
    root = workspace_root(rt.loaded.base_dir, permissions_config(rt.loaded).workspace)
    backend, problem = None, None
    if config.sandbox is not None:
        try:
            backend = backend_for(config.sandbox, root)
        except SandboxUnavailableError as exc:
            problem = exc.message
    factory = rt.services.get(HTTP)
    http = FetchClient(factory, config.fetch.allow_private) if factory is not None else None
    space = Workspace(root=root, config=config, backend=backend, backend_problem=problem, http=http)
    issues = _offered_tool_issues(rt, space)
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)
    rt.services.provide(WORKSPACE, space, source="compose-workspace")
    if backend is not None and backend.pool is not None:
        rt.on_close("workspace-sandboxes", backend.pool.aclose)  # idle sandboxes end with it


def _offered_tool_issues(rt: Runtime, space: Workspace) -> list[Issue]:
    """Issues of the workspace tools this runtime offers that could not work here."""
    issues: list[Issue] = []
    for _tid, tool in rt.catalog(TOOLS).entries():
        if isinstance(tool, WorkspaceTool):
            issues += tool.check_offered(space)
    return issues
