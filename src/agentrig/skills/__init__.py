"""Skills: the SKILL.md format, a registry of versioned skills, and registration scanning.

A skill is a folder of instructions and resources written for coding agents (Claude Code,
Codex ...).  :func:`load_skill` reads one (bounded, never through a symlink);
:class:`SkillRegistry` holds them by name and version; :func:`scan` is the deterministic
registration guard every registration passes, and :func:`review` chains guards so that a
guard without a verdict blocks; the ``registration_guard`` hook (:class:`RegistrationReview`)
asks the installed plugins for a model's verdict.  Skills also arrive from installed
distributions through the ``agentrig.skills`` entry-point group (a package folder holding
SKILL.md).
"""

from agentrig.skills._contract import check_skill_contribution, load_package_skill
from agentrig.skills._errors import (
    SkillBlockedError,
    SkillError,
    SkillFormatError,
    SkillSymlinkError,
    SkillTooLargeError,
    SkillVersionError,
)
from agentrig.skills._fold import fold, has_hidden_characters
from agentrig.skills._format import SKILL_FILE, Skill, SkillLimits, load_skill, parse_skill_text
from agentrig.skills._hookspecs import RegistrationReview
from agentrig.skills._registry import (
    SKILLS,
    Refusal,
    Replacement,
    SkillRegistry,
    skill_folders,
    version_key,
)
from agentrig.skills._rules import CATEGORIES, Category
from agentrig.skills._scanner import (
    Finding,
    Registration,
    RegistrationGuard,
    RegistrationKind,
    Verdict,
    registration_of_skill,
    registration_of_tool,
    review,
    scan,
)

__all__ = [
    "CATEGORIES",
    "SKILLS",
    "SKILL_FILE",
    "Category",
    "Finding",
    "Refusal",
    "Registration",
    "RegistrationGuard",
    "RegistrationKind",
    "RegistrationReview",
    "Replacement",
    "Skill",
    "SkillBlockedError",
    "SkillError",
    "SkillFormatError",
    "SkillLimits",
    "SkillRegistry",
    "SkillSymlinkError",
    "SkillTooLargeError",
    "SkillVersionError",
    "Verdict",
    "check_skill_contribution",
    "fold",
    "has_hidden_characters",
    "load_package_skill",
    "load_skill",
    "parse_skill_text",
    "registration_of_skill",
    "registration_of_tool",
    "review",
    "scan",
    "skill_folders",
    "version_key",
]
