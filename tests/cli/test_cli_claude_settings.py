"""``--claude-settings`` and what hooks tell the user on the CLI (issue 13, points 3 and 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrig.cli import main

TOML = """\
[providers.local]
kind = "scripted"
options.script = [{ text = "Hello there." }]

[agents.assistant]
provider = "local"
model = "scripted-demo"
"""


def _project(tmp_path: Path, hooks: dict[str, object]) -> Path:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    config = tmp_path / "agentrig.toml"
    config.write_text(TOML)
    return config


def _command(text: str) -> dict[str, object]:
    return {"hooks": [{"type": "command", "command": text}]}


@pytest.mark.subprocess
def test_system_message_and_stop_reason_go_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = json.dumps({"systemMessage": "Reminder: the freeze starts Friday."})
    config = _project(tmp_path, {"UserPromptSubmit": [_command(f"echo '{answer}'")]})
    assert main(["run", "-c", str(config), "--claude-settings", "hi"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "Hello there.\n"
    assert "[hook] hook UserPromptSubmit[0] (command): Reminder: the freeze starts Friday." in (
        captured.err
    )


@pytest.mark.subprocess
def test_a_blocked_prompt_shows_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    block = "cat >/dev/null; echo 'prompts with secrets are refused' >&2; exit 2"
    config = _project(tmp_path, {"UserPromptSubmit": [_command(block)]})
    assert main(["run", "-c", str(config), "--claude-settings", "my password is x"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""  # no answer: the model was never asked
    stopped = [line for line in captured.err.splitlines() if line.startswith("[stopped] ")]
    assert stopped == [
        "[stopped] a UserPromptSubmit hook blocked the prompt: "
        "hook UserPromptSubmit[0] (command): prompts with secrets are refused"
    ]


@pytest.mark.subprocess
def test_without_the_flag_the_project_settings_are_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _project(tmp_path, {"UserPromptSubmit": [_command("exit 2")]})
    assert main(["run", "-c", str(config), "hi"]) == 0
    assert capsys.readouterr() == ("Hello there.\n", "")


def test_the_flag_without_settings_files_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text(TOML)
    assert main(["run", "-c", str(config), "--claude-settings", "hi"]) == 2
    err = capsys.readouterr().err
    assert "--claude-settings: no settings.json or settings.local.json" in err
    assert "Traceback" not in err
