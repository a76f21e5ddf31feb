"""The lean entry-point reader agrees with ``importlib.metadata`` on the agentrig groups."""

from __future__ import annotations

import importlib.metadata as metadata
import sys
from pathlib import Path

import pytest

from agentrig.kernel import EntryPointSource
from agentrig.kernel._entry_points import (
    agentrig_entry_points,
    parse_agentrig_sections,
)

TEXT = """\
# a comment before any section
[console_scripts]
tool = tool.cli:main
broken line without an equals sign

  [agentrig.tools]
# a comment inside
  ; not a comment for importlib either = x
shout=shout_mod:tool
  spaced   =   spaced_mod : tool   [extra1, extra2]

[agentrig.providers]
fake = fake_mod:factory [x]
with = equals = in_value:attr

[other.group]
ignored = ignored_mod:thing
"""


def _importlib_pairs(text: str, where: Path) -> list[tuple[str, str, str]]:
    """What importlib.metadata itself parses (only on text it can parse whole)."""
    (where / "entry_points.txt").write_text(text, encoding="utf-8")
    points = metadata.PathDistribution(where).entry_points
    return [(ep.group, ep.name, ep.value) for ep in points if ep.group.startswith("agentrig.")]


def test_sections_comments_whitespace_and_extras() -> None:
    assert parse_agentrig_sections(TEXT) == [
        ("agentrig.tools", "; not a comment for importlib either", "x"),
        ("agentrig.tools", "shout", "shout_mod:tool"),
        ("agentrig.tools", "spaced", "spaced_mod : tool   [extra1, extra2]"),
        ("agentrig.providers", "fake", "fake_mod:factory [x]"),
        ("agentrig.providers", "with", "equals = in_value:attr"),
    ]


def test_agrees_with_importlib_metadata(tmp_path: Path) -> None:
    parseable = TEXT.replace("broken line without an equals sign\n", "")
    assert parse_agentrig_sections(parseable) == _importlib_pairs(parseable, tmp_path)


def test_non_agentrig_groups_are_not_parsed() -> None:
    # importlib.metadata would fail on the broken line; other groups are none of ours
    assert parse_agentrig_sections("[console_scripts]\nno equals here\n") == []
    assert parse_agentrig_sections("no section = at all\n[agentrig.tools]\n") == []


def test_a_malformed_line_in_an_agentrig_group_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"'oops' in \[agentrig.tools\] has no '='"):
        parse_agentrig_sections("[agentrig.tools]\noops\n")


def test_installed_distribution_read_with_extras_and_loadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "reader_dist-3.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: reader-dist\nVersion: 3.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[console_scripts]\nreader = reader_mod:main\n\n"
        "[agentrig.tools]\n  # comment\n reader_tool =  reader_mod:TOOL [extra]  \n",
        encoding="utf-8",
    )
    (tmp_path / "reader_mod.py").write_text("TOOL = object()\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        found = [
            f for f in agentrig_entry_points()["agentrig.tools"] if f.distribution == "reader-dist"
        ]
        assert [(f.entry.name, f.entry.value, f.version) for f in found] == [
            ("reader_tool", "reader_mod:TOOL [extra]", "3.1")
        ]
        assert "console_scripts" not in agentrig_entry_points()
        (spec,) = EntryPointSource(["tools"], distributions=["reader-dist"]).entries()
        assert spec.load() is sys.modules["reader_mod"].TOOL
    finally:
        sys.modules.pop("reader_mod", None)


def test_the_first_distribution_of_a_name_on_the_path_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for site, value in (("later", "later_mod:x"), ("first", "first_mod:x")):
        info = tmp_path / site / "twice_dist-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: twice-dist\nVersion: 1.0\n", encoding="utf-8"
        )
        (info / "entry_points.txt").write_text(f"[agentrig.tools]\nt = {value}\n")
        monkeypatch.syspath_prepend(str(tmp_path / site))
    found = [f for f in agentrig_entry_points()["agentrig.tools"] if f.distribution == "twice-dist"]
    assert [f.entry.value for f in found] == ["first_mod:x"]
    legacy = [ep.value for ep in metadata.entry_points(group="agentrig.tools", name="t")]
    assert legacy == ["first_mod:x"]


def test_an_earlier_distribution_without_agentrig_sections_shadows_a_later_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for site, body in (("later", "[agentrig.tools]\nt = later_mod:x\n"), ("first", "")):
        info = tmp_path / site / "Shadow.Dist-2.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: Shadow.Dist\nVersion: 2.0\n", encoding="utf-8"
        )
        (info / "entry_points.txt").write_text(body)
        monkeypatch.syspath_prepend(str(tmp_path / site))
    found = agentrig_entry_points().get("agentrig.tools", ())
    assert [f for f in found if f.distribution == "Shadow.Dist"] == []
    assert list(metadata.entry_points(group="agentrig.tools", name="t")) == []
