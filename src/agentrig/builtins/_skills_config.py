"""``[skills]``: where skills come from, which version is active, and how they are guarded.

The table is owned by the core through its ``agentrig.config_sections`` entry point
``skills``; every key has an effect or is refused by name::

    [skills]
    enabled = true                       # false: no skill is loaded, no skill tool offered
    active = { "code-review" = "2" }     # pin a version (rollback); default: the newest
    extra_roots = ["/opt/team-skills"]   # read after the defaults, before .agentrig/skills
    trust_dir = ".agentrig/state"        # owner-only; trusted_skills.json lives here
    scan_tools = true                    # run the registration scanner over every tool

    [skills.roots]                       # each default root: a path, or false to skip it
    home_codex = false

    [skills.guard]                       # the model that reviews skills read from folders
    provider = "local"
    model = "guard-model"
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_ROOTS", "GuardConfig", "LimitsConfig", "RootName", "SkillsConfig"]

RootName = Literal[
    "home_claude",
    "home_codex",
    "home_agents",
    "project_claude",
    "project_codex",
    "project_agents",
    "project_agentrig",
]

#: the default roots in precedence order (a later root wins a duplicate name and version);
#: ``~`` is the home folder, a relative path is the project's (the config file's folder)
DEFAULT_ROOTS: dict[RootName, str] = {
    "home_claude": "~/.claude/skills",
    "home_codex": "~/.codex/skills",
    "home_agents": "~/.agents/skills",
    "project_claude": ".claude/skills",
    "project_codex": ".codex/skills",
    "project_agents": ".agents/skills",
    "project_agentrig": ".agentrig/skills",
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class GuardConfig(_Strict):
    """``[skills.guard]``: the model that reviews a skill read from a folder."""

    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    #: a skill whose reviewed text is longer is refused unreviewed (the guard fails closed)
    max_chars: int = Field(default=60_000, gt=0)
    #: seconds the review may take; a review still running after it refuses the skill
    timeout: float = Field(default=60.0, gt=0, strict=False)
    #: a category the model scores at or above this refuses the skill
    threshold: float = Field(default=0.5, gt=0, le=1, strict=False)


class LimitsConfig(_Strict):
    """``[skills.limits]``: what one skill may hold."""

    max_files: int = Field(default=200, gt=0)
    max_bytes: int = Field(default=4 * 1024 * 1024, gt=0)


class SkillsConfig(_Strict):
    """The ``[skills]`` table."""

    enabled: bool = True
    roots: dict[RootName, Annotated[str, Field(min_length=1)] | Literal[False]] = Field(
        default_factory=dict
    )
    extra_roots: Annotated[tuple[str, ...], Field(strict=False)] = ()
    active: dict[str, str] = Field(default_factory=dict)
    trust_dir: str = ".agentrig/state"
    scan_tools: bool = True
    guard: GuardConfig | None = None
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
