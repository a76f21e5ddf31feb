"""Skills from installed distributions: the ``agentrig.skills`` entry-point contract.

An entry point names a package (``my_skills.review = "my_skills.review"``); the package's
folder is the skill folder (its ``__init__.py`` and ``__pycache__`` are not resources).  The
entry point's name is the skill's ID, so it must equal the frontmatter's ``name``.  The
check loads and scans the skill, so ``agentrig plugins`` shows a refused one as failed.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from agentrig.kernel import ContractViolation
from agentrig.skills._errors import SkillError, SkillFormatError
from agentrig.skills._format import Skill, SkillLimits, load_skill
from agentrig.skills._scanner import registration_of_skill, scan

__all__ = ["check_skill_contribution", "load_package_skill"]

GROUP = "agentrig.skills"


def load_package_skill(
    package: ModuleType, *, name: str | None = None, limits: SkillLimits | None = None
) -> Skill:
    """The skill in ``package``'s folder (raises :class:`SkillError`)."""
    paths = list(getattr(package, "__path__", ()))
    if len(paths) != 1:
        raise SkillFormatError(
            f"{package.__name__} is not a package in one folder (an agentrig.skills entry "
            "point names the package holding SKILL.md)"
        )
    source = f"entry point {GROUP}:{name}" if name else f"package {package.__name__}"
    skill = load_skill(
        Path(paths[0]), limits=limits, source=source, skip=frozenset({"__init__.py"})
    )
    if name is not None and skill.name != name:
        raise SkillFormatError(
            f"{source}: the entry point's name is the skill's ID, but SKILL.md says "
            f"name: {skill.name!r}; make them equal"
        )
    return skill


def check_skill_contribution(obj: object, name: str | None = None) -> Skill:
    """The kind check of ``agentrig.skills``: a package holding a scanned, valid skill."""
    if not isinstance(obj, ModuleType):
        raise ContractViolation(
            f"an agentrig.skills entry point names a package holding SKILL.md, not a "
            f"{type(obj).__name__}"
        )
    try:
        skill = load_package_skill(obj, name=name)
    except SkillError as exc:
        raise ContractViolation(f"[{exc.code}] {exc.message}") from None
    verdict = scan(registration_of_skill(skill))
    if not verdict.allowed:
        raise ContractViolation(f"[skill.blocked] {verdict.describe()}")
    return skill
