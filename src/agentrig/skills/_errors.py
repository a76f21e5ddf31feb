"""The skills package's errors: one base, one code per way a skill is refused.

::

    SkillError (skill.error)
    ├── SkillFormatError   (skill.format)     SKILL.md missing, bad frontmatter, bad name
    ├── SkillSymlinkError  (skill.symlink)    a symlinked file or folder inside a skill
    ├── SkillTooLargeError (skill.too_large)  more files or bytes than the limits allow
    ├── SkillBlockedError  (skill.blocked)    a registration guard refused it
    └── SkillVersionError  (skill.version)    activating or asking for an unknown version
"""

from __future__ import annotations

from agentrig.errors import AgentrigError

__all__ = [
    "SkillBlockedError",
    "SkillError",
    "SkillFormatError",
    "SkillSymlinkError",
    "SkillTooLargeError",
    "SkillVersionError",
]


class SkillError(AgentrigError, code="skill.error", category="user"):
    """A skill could not be loaded, registered or found."""


class SkillFormatError(SkillError, ValueError, code="skill.format"):
    """The folder is not a well-formed SKILL.md skill."""


class SkillSymlinkError(SkillError, code="skill.symlink"):
    """A skill's file or folder is a symlink: loading never follows one."""


class SkillTooLargeError(SkillError, code="skill.too_large"):
    """A skill holds more files or bytes than the loading limits allow."""


class SkillBlockedError(SkillError, code="skill.blocked"):
    """A registration guard refused the skill (or gave no verdict, which refuses too)."""


class SkillVersionError(SkillError, LookupError, code="skill.version"):
    """An unknown skill or version was asked for."""
