"""The workspace toolset: Claude Code's Read, Write, Edit, Glob, Grep, Bash and WebFetch.

Offered as ``tools = ["workspace"]`` (every tool) or one by one (``tools = ["Read",
"Grep"]``); configured by ``[workspace]`` and rooted at ``[permissions] workspace``.  The
tool and argument names are Claude Code's, so its permission rules and hook scripts act on
these calls unchanged.  See ``docs/workspace.md``.
"""

from __future__ import annotations

from agentrig.builtins.workspace._bash import BashTool
from agentrig.builtins.workspace._config import (
    FetchConfig,
    FilesConfig,
    Limits,
    SandboxConfig,
    WorkspaceConfig,
)
from agentrig.builtins.workspace._errors import (
    EditMatchError,
    FetchError,
    GitProtectedError,
    SandboxError,
    SandboxUnavailableError,
    WorkspaceError,
    WorkspacePathError,
)
from agentrig.builtins.workspace._fetch import WebFetchTool
from agentrig.builtins.workspace._files import EditTool, ReadTool, WriteTool
from agentrig.builtins.workspace._sandbox import (
    Backend,
    BubblewrapBackend,
    NativeBackend,
    backend_for,
)
from agentrig.builtins.workspace._search import GlobTool, GrepTool
from agentrig.builtins.workspace._space import WORKSPACE, FetchClient, Workspace
from agentrig.tools import Toolset

__all__ = [
    "BASH",
    "EDIT",
    "GLOB",
    "GREP",
    "READ",
    "TOOLSET",
    "WEB_FETCH",
    "WORKSPACE",
    "WRITE",
    "Backend",
    "BubblewrapBackend",
    "EditMatchError",
    "FetchClient",
    "FetchConfig",
    "FetchError",
    "FilesConfig",
    "GitProtectedError",
    "Limits",
    "NativeBackend",
    "SandboxConfig",
    "SandboxError",
    "SandboxUnavailableError",
    "Workspace",
    "WorkspaceConfig",
    "WorkspaceError",
    "WorkspacePathError",
    "backend_for",
]

READ = ReadTool()
WRITE = WriteTool()
EDIT = EditTool()
GLOB = GlobTool()
GREP = GrepTool()
BASH = BashTool()
WEB_FETCH = WebFetchTool()

TOOLSET = Toolset((READ, WRITE, EDIT, GLOB, GREP, BASH, WEB_FETCH))
"""Every workspace tool, offered together as ``tools = ["workspace"]``."""
