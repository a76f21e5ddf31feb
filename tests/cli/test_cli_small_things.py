"""Small things a first hour runs into (issue 37, point 8): an empty prompt is refused, every
usage error carries its ``[code]``, the top-level help says what the command does, and tool
activity shows as ``[tool]`` lines on stderr when stdout is a pipe."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentrig.cli import main

AGENTRIG = str(Path(sys.executable).with_name("agentrig"))

SCRIPTED = """\
[providers.local]
kind = "scripted"
options.script = [
  { tool_calls = [{ name = "missing_tool", arguments = { q = 1 } }] },
  { text = "The answer is 42." },
]

[agents.assistant]
provider = "local"
model = "scripted-demo"
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "agentrig.toml"
    path.write_text(SCRIPTED, encoding="utf-8")
    return path


@pytest.mark.parametrize(("prompt", "stdin"), [("", ""), ("  \n\t", ""), ("-", " \n")])
def test_an_empty_prompt_is_a_usage_error(
    prompt: str,
    stdin: str,
    config: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    assert main(["run", "-c", str(config), prompt]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("agentrig run: error [cli.empty_prompt]: the prompt from ")
    assert "is empty" in line


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["run", "-c", "{config}"], "cli.no_prompt"),
        (["sessions"], "cli.no_action"),
        (["config"], "cli.no_action"),
        (["sessions", "nope"], "cli.usage"),
        (["run", "--no-such-option", "hi"], "cli.usage"),
        (["frobnicate"], "cli.usage"),
    ],
)
def test_every_usage_error_has_a_code(
    argv: list[str], code: str, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([a.format(config=config) for a in argv]) == 2
    lines = capsys.readouterr().err.splitlines()
    errors = [line for line in lines if ": error" in line]
    assert len(errors) == 1, lines
    assert f": error [{code}]: " in errors[0]


def test_two_agents_without_a_choice_has_a_code(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config.write_text(SCRIPTED + '\n[agents.other]\nprovider = "local"\nmodel = "m"\n')
    assert main(["run", "-c", str(config), "hi"]) == 2
    assert "error [cli.choose_agent]: " in capsys.readouterr().err


def test_the_top_level_help_says_what_agentrig_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "run an agent of a composition file (run, chat)" in out
    assert "stored sessions" in out


@pytest.mark.subprocess
def test_tool_lines_go_to_stderr_when_stdout_is_a_pipe(config: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    env.pop("NO_COLOR", None)
    result = subprocess.run(
        [AGENTRIG, "run", "-c", str(config), "question"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The answer is 42.\n"  # the answer alone: a pipe can use it as is
    call, settled = result.stderr.splitlines()
    assert call == '[tool] missing_tool({"q": 1})'
    assert settled.startswith("[tool] missing_tool -> skipped: Tool 'missing_tool' is not")
