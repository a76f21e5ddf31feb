"""What every workspace tool shares: the Tool contract, its schema and its workspace.

Each tool is a class with a pydantic input model whose field names (and aliases, for
Grep's ``-i``/``-n``/``-A``...) are Claude Code's, so permission rules (``Read(./.env)``)
and hook scripts written for Claude Code read these calls unchanged.
"""

from __future__ import annotations

import abc
import functools
from typing import Any, ClassVar, Generic, TypeVar

import anyio.to_thread
from pydantic import BaseModel

from agentrig.builtins.workspace._errors import WorkspaceError
from agentrig.builtins.workspace._space import WORKSPACE, Workspace
from agentrig.errors import Issue
from agentrig.ids import ToolId
from agentrig.tools import PermissionArg, RiskClass, ToolContext, ToolPermissions, read_permissions
from agentrig.tools.schema import PydanticSchemaAdapter

__all__ = ["BlockingTool", "WorkspaceTool", "workspace_of"]

_I = TypeVar("_I", bound=BaseModel)


def workspace_of(ctx: ToolContext) -> Workspace:
    """The runtime's workspace; missing means the ``workspace`` compose step did not run."""
    found = ctx.services.get(WORKSPACE)
    if found is None:
        raise WorkspaceError(
            "this runtime has no workspace: the 'workspace' compose step is disabled or the "
            "tool was called outside a runtime",
            code="workspace.missing",
            recoverable=False,
        )
    return found


class WorkspaceTool(abc.ABC, Generic[_I]):
    """Base of the workspace tools; a subclass sets the class attributes and :meth:`execute`.

    Abstract, so a tool class that forgot its body fails when it is constructed -- naming
    the method -- rather than when the model first calls it.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    model: ClassVar[type[BaseModel]]
    risk: RiskClass | None = None
    permission_arg: PermissionArg | None = None
    #: other tool names whose permission rules apply to this tool too (Claude Code's families)
    permission_rule_names: tuple[str, ...] = ()
    deferred: bool | None = None
    concurrent: bool | None = None
    timeout: float | None = None

    def __init__(self) -> None:
        self._schema: PydanticSchemaAdapter[Any] = PydanticSchemaAdapter(self.model)

    @property
    def id(self) -> ToolId:
        return ToolId(self.name)

    @property
    def description(self) -> str:
        return self.summary

    @property
    def input_schema(self) -> PydanticSchemaAdapter[Any]:
        return self._schema

    @functools.cached_property
    def permissions(self) -> ToolPermissions:
        """What the permission evaluator reads about this tool, read once (at its first call)
        from its class's declaration, which never changes."""
        return read_permissions(self)

    def authorize(self, input: Any, ctx: ToolContext) -> None:
        return None

    @abc.abstractmethod
    async def execute(self, input: _I, ctx: ToolContext) -> Any:
        """Carry out one validated call."""

    def check_offered(self, space: Workspace) -> list[Issue]:
        """Why this tool could not work in ``space`` (checked when a runtime offers it)."""
        return []

    def parse_output(self, value: Any) -> Any:
        return value

    def __repr__(self) -> str:
        return f"<workspace tool {self.name} risk={self.risk}>"


class BlockingTool(WorkspaceTool[_I]):
    """A workspace tool whose body is blocking file work: :meth:`run`, in a worker thread."""

    async def execute(self, input: _I, ctx: ToolContext) -> Any:
        space = workspace_of(ctx)
        # file I/O in a worker thread: a big read or a slow disk never stalls the loop, and a
        # timeout or cancellation abandons it
        call = functools.partial(self.run, input, space)
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)

    @abc.abstractmethod
    def run(self, input: _I, space: Workspace) -> Any:
        """The call's work against ``space`` (runs in a worker thread)."""
