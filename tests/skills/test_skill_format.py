"""SKILL.md import (issue 31, point 1): real-format skills, versions, limits, symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentrig.skills import (
    SkillFormatError,
    SkillLimits,
    SkillSymlinkError,
    SkillTooLargeError,
    load_skill,
)

CORPUS = Path(__file__).parent / "corpus"


def write_skill(folder: Path, front: str, body: str = "Do the thing.\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\n{front}---\n\n{body}", encoding="utf-8")
    return folder


def test_claude_code_skill_with_resources() -> None:
    skill = load_skill(CORPUS / "benign" / "pdf-processing")
    assert skill.name == "pdf-processing"
    assert skill.version == "1"  # no version in the frontmatter
    assert skill.description.startswith("Extract text and tables from PDF files")
    assert skill.instructions.startswith("# PDF Processing")
    assert "---" not in skill.instructions.splitlines()[0]
    assert skill.frontmatter["allowed-tools"] == "Read, Grep, Glob"  # the rest is kept
    assert set(skill.resources) == {"FORMS.md", "scripts/fill_form.py"}
    assert skill.resources["FORMS.md"].startswith(b"# Filling PDF forms")
    assert len(skill.digest) == 64


def test_folded_description_nested_metadata_and_frontmatter_version() -> None:
    excel = load_skill(CORPUS / "benign" / "excel-analysis" / "SKILL.md")  # the file names it
    assert excel.description == (
        "Analyze Excel spreadsheets, create pivot tables, and generate charts. "
        "Use when working with .xlsx files, spreadsheets, or tabular data."
    )
    review = load_skill(CORPUS / "benign" / "code-review")
    assert review.version == "3"
    assert review.frontmatter["metadata"]["tags"] == ("review", "quality")


def test_explicit_version_wins(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "s", "name: s\ndescription: d\nversion: 2\n")
    assert load_skill(folder).version == "2"
    assert load_skill(folder, version=7).version == "7"


def test_missing_name_is_the_folder_name(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "my-skill", "description: does things\n")
    assert load_skill(folder).name == "my-skill"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no frontmatter here", "must start with YAML frontmatter"),
        ("---\nname: x\ndescription: d\n", "closing '---'"),
        ("---\nname: x\n---\nbody", "description is missing"),
        ("---\nname: 'bad name!'\ndescription: d\n---\n", "name 'bad name!'"),
        ("---\n- a\n- b\n---\n", "must be a mapping"),
        ("---\nname: x\ndescription: d\nversion: [1]\n---\n", "version must be"),
        ("---\nname: x\ndescription: [unclosed\n---\n", "not valid YAML"),
    ],
)
def test_malformed_skill_md_is_refused(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "SKILL.md").write_text(text, encoding="utf-8")
    with pytest.raises(SkillFormatError, match=message.replace("(", r"\(")) as info:
        load_skill(tmp_path)
    assert info.value.code == "skill.format"


def test_folder_without_skill_md(tmp_path: Path) -> None:
    with pytest.raises(SkillFormatError, match=r"no SKILL\.md"):
        load_skill(tmp_path)


def test_symlinked_resource_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the skill")
    folder = write_skill(tmp_path / "linked", "name: linked\ndescription: d\n")
    os.symlink(secret, folder / "notes.md")
    with pytest.raises(SkillSymlinkError, match=r"notes\.md is a symlink") as info:
        load_skill(folder)
    assert info.value.code == "skill.symlink"


def test_symlinked_folder_and_skill_md_are_refused(tmp_path: Path) -> None:
    real = write_skill(tmp_path / "real", "name: real\ndescription: d\n")
    inner = write_skill(tmp_path / "inner", "name: inner\ndescription: d\n")
    os.symlink(tmp_path / "real", inner / "more")
    with pytest.raises(SkillSymlinkError, match="more is a symlink"):
        load_skill(inner)
    os.symlink(real, tmp_path / "alias")
    with pytest.raises(SkillSymlinkError, match="alias is a symlink"):
        load_skill(tmp_path / "alias")
    only = tmp_path / "only"
    only.mkdir()
    os.symlink(real / "SKILL.md", only / "SKILL.md")
    with pytest.raises(SkillSymlinkError, match=r"SKILL\.md is a symlink"):
        load_skill(only)


def test_limits_bound_files_and_bytes(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "big", "name: big\ndescription: d\n")
    for i in range(3):
        (folder / f"r{i}.txt").write_text("x" * 100)
    assert len(load_skill(folder).resources) == 3
    with pytest.raises(SkillTooLargeError, match="more than 3 files"):
        load_skill(folder, limits=SkillLimits(max_files=3))
    with pytest.raises(SkillTooLargeError) as info:
        load_skill(folder, limits=SkillLimits(max_bytes=200))
    assert info.value.code == "skill.too_large"
    with pytest.raises(SkillFormatError, match="description has"):
        load_skill(folder, limits=SkillLimits(max_description_chars=0))


def test_digest_changes_with_any_file(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "d", "name: d\ndescription: d\n")
    (folder / "a.txt").write_text("one")
    first = load_skill(folder).digest
    assert load_skill(folder).digest == first
    (folder / "a.txt").write_text("two")
    assert load_skill(folder).digest != first


def test_folders_count_toward_the_limit(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "deep", "name: deep\ndescription: d\n")
    for i in range(4):
        (folder / f"empty-{i}").mkdir()
    with pytest.raises(SkillTooLargeError, match="more than 3 folders"):
        load_skill(folder, limits=SkillLimits(max_files=3))
