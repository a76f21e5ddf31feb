"""The process-wide entry-point caches follow the installation: a plugin installed or removed
after a first read is seen by the next runtime (the key is each path entry's mtime)."""

from __future__ import annotations

import contextvars
import shutil
import time
from pathlib import Path

import pytest

from agentrig.kernel import EntryPointSource
from agentrig.kernel._entry_points import agentrig_entry_points, one_installation_state


def _install(site: Path) -> Path:
    info = site / "late_dist-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: late-dist\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text("[agentrig.tools]\nlate = late_mod:TOOL\n")
    return info


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty site directory first on ``sys.path``: what ``pip install`` would write to."""
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return path


def _late() -> list[str]:
    found = agentrig_entry_points().get("agentrig.tools", ())
    return [f.entry.name for f in found if f.distribution == "late-dist"]


def test_a_plugin_installed_or_removed_after_a_read_is_seen(site: Path) -> None:
    assert _late() == []
    assert not [e for e in EntryPointSource(["tools"]).entries() if e.name == "late"]
    time.sleep(0.05)  # past the file system's timestamp granularity, as a real install is
    info = _install(site)
    assert _late() == ["late"]
    assert [e.name for e in EntryPointSource(["tools"]).entries() if e.name == "late"] == ["late"]
    time.sleep(0.05)
    shutil.rmtree(info)
    assert _late() == []
    assert not [e for e in EntryPointSource(["tools"]).entries() if e.name == "late"]


def test_one_composition_looks_at_the_installation_once(site: Path) -> None:
    with one_installation_state():
        assert _late() == []
        time.sleep(0.05)
        _install(site)
        assert _late() == []  # the block's look: an install during it waits for the next
    assert _late() == ["late"]  # ... which sees it


def test_a_task_started_in_the_block_looks_again_once_the_block_ended(site: Path) -> None:
    # a compose step may start a task that outlives the open: it copies the context
    with one_installation_state():
        copied = contextvars.copy_context()
        assert copied.run(_late) == []
    time.sleep(0.05)
    _install(site)
    assert copied.run(_late) == ["late"]


def test_a_state_taken_by_one_block_is_reused_by_the_next(site: Path) -> None:
    # open_runtime indexes in one block and composes in another, looking once for both
    with one_installation_state() as taken:
        assert _late() == []
    time.sleep(0.05)
    _install(site)
    with one_installation_state(taken) as reused:
        assert reused == taken
        assert _late() == []  # the open's one look
    with one_installation_state():
        assert _late() == ["late"]  # a new open looks again
