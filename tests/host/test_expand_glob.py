"""``expand_glob``: the permission evaluator's default glob port, as bash expands a word."""

from __future__ import annotations

from pathlib import Path

from agentrig.host import expand_glob


def test_matches_as_written_and_hidden_names_are_not_matched(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x").write_text("")
    (tmp_path / "d" / ".hidden").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "d")
    assert sorted(expand_glob(f"{tmp_path}/*/x") or []) == [
        f"{tmp_path}/d/x",
        f"{tmp_path}/link/x",  # as written: the link is resolved by the evaluator
    ]
    assert expand_glob(f"{tmp_path}/d/*") == [f"{tmp_path}/d/x"]
    assert expand_glob(f"{tmp_path}/none*") == []


def test_what_cannot_be_told_is_none(tmp_path: Path) -> None:
    assert expand_glob("relative/*") is None
    assert expand_glob(f"{tmp_path}/\x00*") is None
    for i in range(12):
        (tmp_path / f"f{i}").write_text("")
    assert expand_glob(f"{tmp_path}/f*", limit=10) is None  # too many to judge one by one
    assert len(expand_glob(f"{tmp_path}/f*") or []) == 12
