"""The workspace toolset's errors: each carries a code, and most go back to the model.

A refused path, an ambiguous edit or a command that timed out is something the model can
act on, so those are ``recoverable``: the loop turns them into an error result and the turn
goes on.  A sandbox that cannot be set up is the operator's problem (``category="system"``).
"""

from __future__ import annotations

from agentrig.errors import AgentrigError

__all__ = [
    "EditMatchError",
    "FetchError",
    "GitProtectedError",
    "SandboxError",
    "SandboxUnavailableError",
    "WorkspaceError",
    "WorkspacePathError",
]


class WorkspaceError(AgentrigError, code="workspace.error", category="user", recoverable=True):
    """A workspace tool could not do what the call asked; the model gets the reason."""


class WorkspacePathError(WorkspaceError, code="workspace.path"):
    """The path is outside the workspace, not there, not a file, or not text."""


class GitProtectedError(WorkspaceError, code="workspace.git_protected"):
    """A write into ``.git/`` or to ``.gitattributes`` / ``.gitmodules``, or a git command
    while the repository config defines filter drivers: Git stays inspection-only."""


class EditMatchError(WorkspaceError, code="workspace.edit_match"):
    """``old_string`` is missing, or matches more than once without ``replace_all``."""


class FetchError(WorkspaceError, code="workspace.fetch"):
    """WebFetch could not get a page within its bounds (refused, too big, too slow...)."""


class SandboxError(WorkspaceError, code="workspace.sandbox"):
    """A command could not run in the sandbox (it did not start, or it was stopped)."""


class SandboxUnavailableError(
    AgentrigError, code="workspace.sandbox_unavailable", category="system"
):
    """The configured backend cannot enforce its policy on this machine (no ``bwrap``, not
    allowed to change to the restricted user, ...): nothing runs unsandboxed instead."""
