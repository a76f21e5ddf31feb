"""The skill registry (issue 31, point 2): folders, collection roots, versions, activation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentrig.skills import SkillBlockedError, SkillRegistry, SkillVersionError, load_skill

CORPUS = Path(__file__).parent / "corpus"


def write_skill(folder: Path, name: str, version: int | None = None, body: str = "Do it.") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    extra = f"version: {version}\n" if version is not None else ""
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: the {name} skill\n{extra}---\n\n{body}\n"
    )
    return folder


def test_collection_root_loads_each_child() -> None:
    registry = SkillRegistry()
    loaded = registry.load(CORPUS / "benign")
    assert len(loaded) == len(list((CORPUS / "benign").iterdir()))
    assert "pdf-processing" in registry.names()
    assert registry.refused() == ()


def test_one_folder_or_its_skill_md(tmp_path: Path) -> None:
    write_skill(tmp_path / "alpha", "alpha")
    registry = SkillRegistry()
    assert [s.name for s in registry.load(tmp_path / "alpha")] == ["alpha"]
    assert [s.name for s in registry.load(tmp_path / "alpha" / "SKILL.md")] == ["alpha"]
    assert registry.load(tmp_path / "missing") == ()


def test_broken_child_is_refused_and_the_rest_load(tmp_path: Path) -> None:
    write_skill(tmp_path / "good", "good")
    bad = write_skill(tmp_path / "bad", "bad")
    os.symlink(tmp_path / "good" / "SKILL.md", bad / "copy.md")
    (tmp_path / "not-a-skill").mkdir()  # no SKILL.md: not part of the collection
    registry = SkillRegistry()
    assert [s.name for s in registry.load(tmp_path)] == ["good"]
    [refusal] = registry.refused()
    assert refusal.error.code == "skill.symlink"
    assert "copy.md is a symlink" in refusal.describe()


def test_versions_order_naturally_and_activation_is_explicit(tmp_path: Path) -> None:
    registry = SkillRegistry()
    for version in (2, 10, 9):
        registry.load(write_skill(tmp_path / f"v{version}", "tool-guide", version))
    assert registry.versions("tool-guide") == ("2", "9", "10")
    assert registry.get("tool-guide").version == "10"  # newest when nothing is active
    registry.activate("tool-guide", "2")  # rollback
    assert registry.get("tool-guide").version == "2"
    assert registry.get("tool-guide", "9").version == "9"
    with pytest.raises(SkillVersionError, match="no version '3'"):
        registry.activate("tool-guide", "3")
    with pytest.raises(SkillVersionError, match="did you mean 'tool-guide'"):
        registry.get("tool-guid")


def test_later_root_wins_a_duplicate_and_the_replacement_is_recorded(tmp_path: Path) -> None:
    registry = SkillRegistry()
    registry.load(write_skill(tmp_path / "home" / "fmt", "fmt", body="home copy"))
    registry.load(write_skill(tmp_path / "project" / "fmt", "fmt", body="project copy"))
    assert registry.get("fmt").instructions == "project copy"
    [replacement] = registry.replaced()
    assert replacement.loser.endswith(os.path.join("home", "fmt"))
    assert replacement.winner.endswith(os.path.join("project", "fmt"))


def test_registration_always_scans() -> None:
    registry = SkillRegistry()
    skill = load_skill(CORPUS / "hostile" / "ignore-previous")
    with pytest.raises(SkillBlockedError, match="ignore-instructions"):
        registry.register(skill)
    assert registry.names() == ()
    with pytest.raises(SkillVersionError, match="was refused"):
        registry.get("helpful-formatter")
