"""Bad input at the CLI's edges: a prompt that is not UTF-8 (argument, stdin, file) is a
usage error (exit 2) before anything is stored; a config path that is a folder is one
``error [code]:`` line saying what to give instead."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from agentrig.cli import main

NOT_UTF8 = b"caf\xe9 au lait"
#: what Python makes of those bytes on a command line (surrogateescape)
NOT_UTF8_ARGUMENT = NOT_UTF8.decode("utf-8", "surrogateescape")


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "agentrig.toml"
    path.write_text(
        f"""\
[providers.local]
kind = "scripted"
options.script = [{{ text = "answer one" }}, {{ text = "answer two" }}]

[agents.assistant]
provider = "local"
model = "scripted-1"
session_store = "main"

[session_stores.main]
kind = "jsonl"
options.directory = {json.dumps(str(tmp_path / "sessions"))}
""",
        encoding="utf-8",
    )
    return path


def _stored(tmp_path: Path) -> list[str]:
    folder = tmp_path / "sessions"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def _one_error_line(err: str, code: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert f"error [{code}]: " in lines[0]
    assert "Traceback" not in err
    return lines[0]


def test_a_prompt_argument_that_is_not_utf8_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "-c", str(_config(tmp_path)), NOT_UTF8_ARGUMENT])
    line = _one_error_line(capsys.readouterr().err, "cli.not_utf8")
    assert code == 2
    assert "the prompt from the command line is not valid UTF-8 (byte 0xe9 at offset 3)" in line
    assert _stored(tmp_path) == []


def test_a_prompt_file_that_is_not_utf8_is_a_usage_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_bytes(NOT_UTF8)
    code = main(["run", "-c", str(_config(tmp_path)), "--prompt-file", str(prompt)])
    line = _one_error_line(capsys.readouterr().err, "cli.not_utf8")
    assert code == 2
    assert f"the file {prompt}" in line
    assert _stored(tmp_path) == []


def test_a_prompt_on_stdin_that_is_not_utf8_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stdin(monkeypatch, NOT_UTF8)
    code = main(["run", "-c", str(_config(tmp_path)), "-"])
    line = _one_error_line(capsys.readouterr().err, "cli.not_utf8")
    assert code == 2
    assert "from stdin" in line
    assert _stored(tmp_path) == []


def test_utf8_prompts_from_a_file_and_stdin_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_bytes("café".encode())
    assert main(["run", "-c", str(_config(tmp_path)), "-f", str(prompt)]) == 0
    _stdin(monkeypatch, "thé".encode())
    assert main(["run", "-c", str(_config(tmp_path)), "-"]) == 0
    assert capsys.readouterr().out == "answer one\nanswer one\n"


def test_prompt_and_prompt_file_together_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("hi")
    assert main(["run", "-c", str(_config(tmp_path)), "hi", "-f", str(prompt)]) == 2
    assert "not both" in capsys.readouterr().err


def test_a_chat_line_that_is_not_utf8_ends_the_chat_as_a_usage_error_before_its_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stdin(monkeypatch, b"first question\n" + NOT_UTF8 + b"\nnever read\n")
    code = main(["chat", "-c", str(_config(tmp_path))])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == "answer one\n"  # the first line was a turn, the second is not
    line = _one_error_line(captured.err, "cli.not_utf8")
    assert "from stdin" in line
    (stored,) = _stored(tmp_path)
    log = (tmp_path / "sessions" / stored).read_text(encoding="utf-8")
    assert "first question" in log
    assert log.count('"type":"turn/start"') == 1


@pytest.mark.parametrize("command", ["run", "chat", "config"])
def test_a_config_path_that_is_a_directory_is_one_error_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    _stdin(monkeypatch, b"")
    folder = tmp_path / "conf"
    folder.mkdir()
    argv = {
        "run": ["run", "-c", str(folder), "hi"],
        "chat": ["chat", "-c", str(folder)],
        "config": ["config", "check", str(folder)],
    }[command]
    assert main(argv) == 2
    line = _one_error_line(capsys.readouterr().err, "cli.config_is_directory")
    assert f"{folder} is a directory" in line
    assert str(folder / "agentrig.toml") in line
