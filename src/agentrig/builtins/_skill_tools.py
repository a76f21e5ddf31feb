"""The skill tools: a catalog the model reads, instructions and resources it loads on demand.

Skills reach the model progressively: the ``skill`` tool's description lists every skill's
name and description (the catalog), a call returns one skill's instructions and the list of
its resources, and ``read_skill_resource`` returns one resource.  Nothing is added to the
system prompt.  Both tools only read (risk ``inspect``); the permission gate still decides
each call.  An agent gets them by listing the ``skills`` toolset in its ``tools``.
"""

from __future__ import annotations

import functools
from typing import Any, final

from pydantic import BaseModel, ConfigDict, Field

from agentrig.ids import ToolId
from agentrig.skills import SkillError, SkillRegistry
from agentrig.tools import PermissionArg, RiskClass, ToolContext, ToolOutput
from agentrig.tools.schema import PydanticSchemaAdapter

__all__ = [
    "READ_RESOURCE_TOOL",
    "SKILL_TOOL",
    "TOOLSET",
    "ReadSkillResource",
    "ReadSkillResourceInput",
    "SkillInput",
    "SkillTool",
]

SKILL_TOOL = ToolId("skill")
READ_RESOURCE_TOOL = ToolId("read_skill_resource")
TOOLSET = "skills"
#: a resource longer than this is cut (the model can ask for a range)
_MAX_CHARS = 50_000


class SkillInput(BaseModel):
    """Arguments of ``skill``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The skill's name, as listed in this tool's description.")
    version: str | None = Field(default=None, description="A version; default: the active one.")


class ReadSkillResourceInput(BaseModel):
    """Arguments of ``read_skill_resource``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The skill's name.")
    path: str = Field(description="The resource's path, as the skill tool listed it.")
    version: str | None = Field(default=None, description="A version; default: the active one.")
    offset: int = Field(default=0, ge=0, description="The first character to return.")


@functools.cache
def _schema(model: type[BaseModel]) -> PydanticSchemaAdapter[Any]:
    """One adapter per input model, shared by every runtime (an adapter holds no state)."""
    return PydanticSchemaAdapter(model)


def _catalog(registry: SkillRegistry) -> str:
    lines = [f"- {skill.name}: {skill.description}" for skill in registry.catalog()]
    return "\n".join(lines) if lines else "(no skills are installed)"


class _SkillToolBase:
    risk: RiskClass | None = "inspect"
    permission_arg: PermissionArg | None = None
    deferred = False

    def __init__(self, registry: SkillRegistry) -> None:
        self._registry = registry

    def authorize(self, input: Any, ctx: ToolContext) -> None:
        return None

    def parse_output(self, value: Any) -> Any:
        return value


@final
class SkillTool(_SkillToolBase):
    """``skill``: a skill's instructions and the list of its resources."""

    id = SKILL_TOOL

    def __init__(self, registry: SkillRegistry) -> None:
        super().__init__(registry)
        self._schema = _schema(SkillInput)

    @property
    def description(self) -> str:
        """The catalog, read from the registry (an activated version shows its description)."""
        return (
            "Load the instructions of a skill: a packaged procedure for a kind of task. "
            "Call it when a task matches a skill's description, then follow the "
            "instructions; read its resources with read_skill_resource.\n"
            f"Skills:\n{_catalog(self._registry)}"
        )

    @property
    def input_schema(self) -> PydanticSchemaAdapter[SkillInput]:
        return self._schema

    async def execute(self, input: SkillInput, ctx: ToolContext) -> str | ToolOutput:
        try:
            skill = self._registry.get(input.name, input.version)
        except SkillError as exc:
            return ToolOutput(exc.message, is_error=True)
        resources = "\n".join(f"- {path}" for path in sorted(skill.resources)) or "(none)"
        return (
            f"# Skill {skill.name} (version {skill.version})\n\n{skill.instructions}\n\n"
            f"Resources (read with read_skill_resource):\n{resources}"
        )


@final
class ReadSkillResource(_SkillToolBase):
    """``read_skill_resource``: one resource of a skill, as text."""

    id = READ_RESOURCE_TOOL
    description = (
        "Read one resource file of a skill (a path the skill tool listed). Long files come "
        "in parts: pass offset to continue."
    )

    def __init__(self, registry: SkillRegistry) -> None:
        super().__init__(registry)
        self._schema = _schema(ReadSkillResourceInput)

    @property
    def input_schema(self) -> PydanticSchemaAdapter[ReadSkillResourceInput]:
        return self._schema

    async def execute(self, input: ReadSkillResourceInput, ctx: ToolContext) -> str | ToolOutput:
        try:
            skill = self._registry.get(input.name, input.version)
        except SkillError as exc:
            return ToolOutput(exc.message, is_error=True)
        data = skill.resources.get(input.path)
        if data is None:
            known = ", ".join(sorted(skill.resources)) or "none"
            message = f"skill {skill.name!r} has no resource {input.path!r} (resources: {known})"
            return ToolOutput(message, is_error=True)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return f"{input.path} is a binary file of {len(data)} bytes; it cannot be shown."
        part = text[input.offset : input.offset + _MAX_CHARS]
        rest = len(text) - input.offset - len(part)
        if rest > 0:
            part += f"\n[{rest} more characters: offset={input.offset + len(part)}]"
        return part
