"""The skill registry: skills by name and version, with explicit activation.

A registry is filled from folders -- one skill folder (or its ``SKILL.md``), or a collection
root whose direct sub-folders each hold one -- and from installed distributions.  Every
registration runs the deterministic scanner first (:func:`~agentrig.skills.scan`); a
refused skill is kept in :meth:`SkillRegistry.refused` with its reason, never registered.
The same name and version registered again replaces the earlier one and the replacement is
recorded (roots are read in precedence order, so the project's ``.agentrig/skills`` wins).

Without an explicit choice the newest version is used, ordered naturally (``10`` after
``2``); :meth:`SkillRegistry.activate` pins one, so rolling back is one call.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import final

import attrs

from agentrig.errors import AgentrigError, did_you_mean
from agentrig.kernel import ServiceKey
from agentrig.skills._errors import SkillBlockedError, SkillError, SkillVersionError
from agentrig.skills._format import SKILL_FILE, Skill, SkillLimits, load_skill
from agentrig.skills._scanner import Verdict, registration_of_skill, scan

__all__ = [
    "SKILLS",
    "Refusal",
    "Replacement",
    "SkillRegistry",
    "skill_folders",
    "version_key",
]


def version_key(version: str) -> tuple[tuple[int, int, str], ...]:
    """The natural order of versions: number runs compare as numbers (``10 > 2``)."""
    return tuple(
        (1, int(part), "") if part.isdigit() else (0, 0, part)
        for part in re.findall(r"\d+|[A-Za-z]+", version)
    )


def skill_folders(path: str | os.PathLike[str]) -> list[Path]:
    """The skill folders ``path`` stands for: itself (a skill folder or its SKILL.md), or
    the direct sub-folders holding a SKILL.md (a collection root); [] when it is missing."""
    # most roots are missing, and making a Path costs more than looking: the OS reads the
    # string as pathlib would name it (only a trailing "/" or "." part differs)
    plain = isinstance(path, str) and path and not path.endswith(("/", "."))
    if plain and not os.path.lexists(path):
        return []
    given = Path(path)
    if given.name == SKILL_FILE and os.path.lexists(given) and not given.is_dir():
        return [given.parent]
    if not given.is_dir():
        return []
    if os.path.lexists(given / SKILL_FILE):
        return [given]
    return sorted(
        child
        for child in given.iterdir()
        if (child.is_dir() or child.is_symlink()) and os.path.lexists(child / SKILL_FILE)
    )


@final
@attrs.frozen(slots=True)
class Refusal:
    """A skill that was not registered, and why."""

    source: str
    error: AgentrigError
    name: str | None = None
    version: str | None = None

    def describe(self) -> str:
        label = f"{self.name} {self.version}" if self.name else self.source
        return f"{label}: [{self.error.code}] {self.error.message}"


@final
@attrs.frozen(slots=True)
class Replacement:
    """A skill (name, version) registered again: ``winner`` shadows ``loser``."""

    name: str
    version: str
    loser: str
    winner: str


@final
class SkillRegistry:
    """Skills by name and version; every registration is scanned first."""

    def __init__(self, *, limits: SkillLimits | None = None) -> None:
        self.limits = limits or SkillLimits()
        self._skills: dict[str, dict[str, Skill]] = {}
        self._active: dict[str, str] = {}
        self._refused: list[Refusal] = []
        self._replaced: list[Replacement] = []

    # ---- filling --------------------------------------------------------------------------
    def register(self, skill: Skill, *, verdicts: Iterable[Verdict] = ()) -> Skill:
        """Scan ``skill`` and register it; raises :class:`SkillBlockedError` when refused.

        ``verdicts`` are earlier guards' answers (a model guard's); any refusal among them
        refuses the skill too.
        """
        verdict = scan(registration_of_skill(skill))
        refusal = next((v for v in (verdict, *verdicts) if not v.allowed), None)
        if refusal is not None:
            error = SkillBlockedError(
                f"skill {skill.name!r} ({skill.source}) was refused: {refusal.describe()}"
            )
            self._refused.append(Refusal(skill.source, error, skill.name, skill.version))
            raise error
        versions = self._skills.setdefault(skill.name, {})
        previous = versions.get(skill.version)
        if previous is not None and previous.digest != skill.digest:
            self._replaced.append(
                Replacement(skill.name, skill.version, previous.source, skill.source)
            )
        versions[skill.version] = skill
        return skill

    def refuse(self, source: str, error: AgentrigError, skill: Skill | None = None) -> None:
        """Record a skill that could not be loaded or was refused before registration."""
        name, version = (skill.name, skill.version) if skill is not None else (None, None)
        self._refused.append(Refusal(source, error, name, version))

    def load(
        self, path: str | os.PathLike[str], *, version: str | int | None = None
    ) -> tuple[Skill, ...]:
        """Load and register the skills at ``path`` (a skill folder, its SKILL.md, or a
        collection root).  A skill that fails is recorded in :meth:`refused`; the others
        still load.  ``version`` overrides each skill's own."""
        loaded = []
        for folder in skill_folders(path):
            try:
                skill = load_skill(folder, version=version, limits=self.limits)
                loaded.append(self.register(skill))
            except SkillBlockedError:
                continue  # recorded by register()
            except SkillError as exc:
                self.refuse(str(folder), exc)
        return tuple(loaded)

    # ---- reading --------------------------------------------------------------------------
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._skills))

    def versions(self, name: str) -> tuple[str, ...]:
        """The versions of ``name``, oldest first (natural order)."""
        return tuple(sorted(self._require(name), key=version_key))

    def active_version(self, name: str) -> str:
        """The activated version, else the newest."""
        return self._active.get(name) or self.versions(name)[-1]

    def get(self, name: str, version: str | None = None) -> Skill:
        """The skill ``name`` at ``version`` (default: the active one)."""
        versions = self._require(name)
        chosen = version if version is not None else self.active_version(name)
        skill = versions.get(chosen)
        if skill is None:
            raise SkillVersionError(
                f"skill {name!r} has no version {chosen!r} (versions: "
                f"{', '.join(self.versions(name))})"
            )
        return skill

    def activate(self, name: str, version: str) -> None:
        """Pin the version of ``name`` used from now on (roll back by activating an older)."""
        self.get(name, str(version))
        self._active[name] = str(version)

    def catalog(self) -> tuple[Skill, ...]:
        """The selected version of every skill, by name."""
        return tuple(self.get(name) for name in self.names())

    def refused(self) -> tuple[Refusal, ...]:
        return tuple(self._refused)

    def replaced(self) -> tuple[Replacement, ...]:
        return tuple(self._replaced)

    def _require(self, name: str) -> dict[str, Skill]:
        versions = self._skills.get(name)
        if versions is None:
            refused = [r for r in self._refused if r.name == name]
            if refused:
                raise SkillVersionError(f"skill {name!r} was refused: {refused[-1].describe()}")
            hint = did_you_mean(name, self._skills)
            raise SkillVersionError(
                f"no skill named {name!r}{hint} (skills: {', '.join(self.names()) or 'none'})"
            )
        return versions

    def __len__(self) -> int:
        return len(self._skills)


SKILLS: ServiceKey[SkillRegistry] = ServiceKey("skills")
"""The runtime's skill registry (provided by the built-in ``compose-skills`` step)."""
