"""Project instructions (issue 31, point 6): AGENTS.md / CLAUDE.md into the system prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentrig.agent import PROJECT_INSTRUCTIONS
from agentrig.ids import AgentId, provider_id
from agentrig.kernel import open_runtime
from agentrig.llm import PROVIDERS

pytestmark = pytest.mark.anyio


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text("Home: answer in English.")
    monkeypatch.setenv("HOME", str(home))
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("Root: run the tests with pytest.")
    (repo / "pkg" / "core").mkdir(parents=True)
    (repo / "pkg" / "CLAUDE.md").write_text("Pkg: keep modules small.")
    (tmp_path / "AGENTS.md").write_text("Above the git root: never read.")
    return repo


def config(repo: Path, **instructions: Any) -> Path:
    path = repo / "agentrig.json"
    body = {
        "providers": {"p": {"kind": "scripted", "options": {"script": [{"text": "ok"}]}}},
        "agents": {"a": {"provider": "p", "model": "m", "system_prompt": "You help."}},
        "instructions": {"workdir": "pkg/core", **instructions},
    }
    path.write_text(json.dumps(body))
    return path


async def system_prompt(path: Path) -> str:
    async with open_runtime(path, environ={}) as rt:
        await rt.agent(AgentId("a")).run("hi")
        provider: Any = rt.catalog(PROVIDERS).require(provider_id("p"))
        first = provider.requests[0].messages[0]
    assert first.role == "system"
    text: str = first.text
    return text


async def test_home_then_git_root_down_to_the_working_directory(layout: Path) -> None:
    text = await system_prompt(config(layout))
    assert text.startswith("You help.\n\n# Project instructions")
    order = [text.index(s) for s in ("Home: answer", "Root: run the tests", "Pkg: keep")]
    assert order == sorted(order)
    assert "Above the git root" not in text
    assert str(layout / "pkg" / "CLAUDE.md") in text  # each part names its file


@pytest.mark.parametrize(
    ("switch", "missing"),
    [
        ({"home": False}, "Home: answer"),
        ({"project": False}, "Root: run the tests"),
        ({"claude_md": False}, "Pkg: keep"),
        ({"agents_md": False}, "Root: run the tests"),
    ],
)
async def test_each_part_can_be_turned_off(
    layout: Path, switch: dict[str, bool], missing: str
) -> None:
    text = await system_prompt(config(layout, **switch))
    assert missing not in text
    assert "# Project instructions" in text


async def test_long_files_are_cut_with_a_note(layout: Path) -> None:
    (layout / "AGENTS.md").write_text("x" * 100)
    text = await system_prompt(config(layout, max_bytes=10, home=False, claude_md=False))
    assert "x" * 10 + "\n[cut: the file has 100 bytes" in text


async def test_without_files_nothing_is_provided(layout: Path) -> None:
    async with open_runtime(config(layout, home=False, project=False), environ={}) as rt:
        assert rt.services.get(PROJECT_INSTRUCTIONS) is None


def test_the_lookup_names_what_pathlib_would_and_each_file_once(layout: Path) -> None:
    from agentrig.builtins._instructions import InstructionsConfig, find_instruction_files

    home = layout.parent / "home"
    (layout / "CLAUDE.md").symlink_to(layout / "AGENTS.md")  # one file under two names
    (layout / "pkg" / "core" / "AGENTS.md").mkdir()  # a folder of that name is no file
    found = find_instruction_files(InstructionsConfig(), home, layout / "pkg" / "core")
    expected = [home / ".claude" / "CLAUDE.md", layout / "AGENTS.md", layout / "pkg" / "CLAUDE.md"]
    assert found == expected
    assert all(isinstance(p, Path) for p in found)
    # without a Git root the working directory alone is the project
    (layout / ".git").rmdir()
    alone = find_instruction_files(InstructionsConfig(home=False), home, layout / "pkg")
    assert alone == [layout / "pkg" / "CLAUDE.md"]
