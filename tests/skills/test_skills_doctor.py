"""``agentrig doctor`` and ``config check`` on skills and instruction files (issue 31)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest

from agentrig.cli import main
from agentrig.kernel import open_runtime
from agentrig.skills import SKILLS

CORPUS = Path(__file__).parent / "corpus"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "AGENTS.md").write_text("Be brief.")
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "CLAUDE.md").write_text("Use pytest.")
    monkeypatch.chdir(root)
    skills = root / ".agentrig" / "skills"
    shutil.copytree(CORPUS / "benign" / "commit-messages", skills / "commit-messages")
    (root / "agentrig.toml").write_text('[instructions]\nworkdir = "."\n')
    return root


def test_doctor_lists_skills_and_instruction_files(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", "--config", "agentrig.toml"]) == 0
    out = capsys.readouterr().out
    assert "skills     1 in folders" in out
    assert "skill commit-messages 1" in out
    assert "not reviewed yet" in out
    home_file = str(Path.home() / "AGENTS.md")
    assert f"instructions 2 file(s) added to every system prompt: {home_file}, " in out
    assert str(project / "CLAUDE.md") in out


def test_a_refused_skill_is_a_doctor_problem(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(
        CORPUS / "hostile" / "pipe-to-shell", project / ".claude" / "skills" / "quick-setup"
    )
    assert main(["doctor", "--config", "agentrig.toml"]) == 1
    out = capsys.readouterr().out
    assert "REFUSED skill quick-setup" in out
    assert "malware/pipe-to-shell" in out
    assert "1 problem(s) found" in out


def test_config_check_calls_no_model(project: Path) -> None:
    scores = dict.fromkeys(("injection", "authority", "promotion", "malware", "privileged_name"), 0)
    allow = json.dumps(json.dumps({"scores": scores}))
    config = project / "agentrig.toml"
    config.write_text(
        config.read_text()
        + f'[providers.guard]\nkind = "scripted"\noptions.script = [{{ text = {allow} }}]\n'
        + '[skills.guard]\nprovider = "guard"\nmodel = "m"\n'
    )
    trust_file = project / ".agentrig" / "state" / "trusted_skills.json"
    assert main(["config", "check", "agentrig.toml"]) == 0
    assert not trust_file.exists()  # no review was made
    anyio.run(open_and_close, config)  # a runtime asks the guard, which allows: trusted
    assert "commit-messages" in trust_file.read_text()


async def open_and_close(config: Path) -> None:
    async with open_runtime(config, environ={}) as rt:
        assert rt.services.require(SKILLS).names() == ("commit-messages",)
