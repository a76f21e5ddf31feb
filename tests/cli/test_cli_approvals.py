"""Approvals in ``run`` and ``chat``: the person on a terminal, ``--yes``, ``--mode``, nobody.

The tool ``write_note`` (risk ``modify``) is asked about in the default mode; whether it ran
is read from the file it writes.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
from cli_terminal_support import agentrig_script, command_env, open_terminal, scripted_config

from agentrig.cli import main
from agentrig.ids import AgentId, CallId

NOTES_TOOL = '''
from pathlib import Path

from agentrig.plugin import tool


@tool(risk="modify")
def write_note(path: str, text: str) -> str:
    """Write ``text`` to the file ``path``."""
    Path(path).write_text(text, encoding="utf-8")
    return f"wrote {len(text)} characters to {path}"
'''


def _call(path: str, text: str = "hello") -> str:
    arguments = f"{{ path = {json.dumps(path)}, text = {json.dumps(text)} }}"
    return f'{{ tool_calls = [{{ name = "write_note", arguments = {arguments} }}] }}'


def _config(tmp_path: Path, replies: list[str], *, extra: str = "") -> Path:
    return scripted_config(tmp_path, replies, agent=f'tools = ["write_note"]\n{extra}')


@pytest.fixture
def notes_site(install_dist: Any) -> Path:
    site: Path = install_dist(
        "notes-tool",
        {"agentrig.tools": {"write_note": "notes_tool:write_note"}},
        {"notes_tool": NOTES_TOOL},
    )
    return site


ONE_NOTE = [_call("note.txt"), '{ text = "Done." }']


# ---- on a terminal -------------------------------------------------------------------------


@pytest.mark.subprocess
@pytest.mark.slow
def test_the_question_shows_the_call_and_allow_once_runs_the_tool(
    tmp_path: Path, notes_site: Path
) -> None:
    long_text = "x" * 500
    config = _config(tmp_path, [_call("note.txt", long_text), '{ text = "Done." }'])
    with open_terminal(
        tmp_path, "run", "-c", str(config), "write it", pythonpath=[notes_site]
    ) as term:
        term.expect("The agent wants to run the tool 'write_note'")
        term.expect('"path": "note.txt"')
        term.expect("... (500 characters; the last 340 not shown)")  # shortened, and says so
        term.expect("Allow? [y] once  [a] for this session  [n] deny:")
        assert not (tmp_path / "note.txt").exists()  # nothing runs before the answer
        term.send("y\n")
        term.expect("Done.")
        assert term.wait() == 0, term.text
    assert (tmp_path / "note.txt").read_text(encoding="utf-8") == long_text


@pytest.mark.subprocess
@pytest.mark.slow
def test_deny_on_the_terminal_leaves_the_tool_unrun(tmp_path: Path, notes_site: Path) -> None:
    config = _config(tmp_path, ONE_NOTE)
    with open_terminal(
        tmp_path, "run", "-c", str(config), "write it", pythonpath=[notes_site]
    ) as term:
        term.expect("Allow?")
        term.send("n\n")
        term.expect("denied")
        term.expect("refused")  # the tool's result line says so
        term.expect("Done.")
        assert term.wait() == 0, term.text
    assert not (tmp_path / "note.txt").exists()


@pytest.mark.subprocess
@pytest.mark.slow
def test_allow_for_the_session_is_not_asked_again_in_chat(tmp_path: Path, notes_site: Path) -> None:
    config = _config(
        tmp_path,
        [_call("one.txt"), '{ text = "First." }', _call("two.txt"), '{ text = "Second." }'],
    )
    with open_terminal(tmp_path, "chat", "-c", str(config), pythonpath=[notes_site]) as term:
        term.expect_prompt()
        term.send("write one\n")
        term.expect("Allow?")
        term.send("a\n")
        term.expect("allowed 'write_note' for this session")
        term.expect("First.")
        term.expect_prompt()
        term.send("write two\n")
        term.expect("Second.")
        term.expect_prompt()
        term.send("/exit\n")
        assert term.wait() == 0, term.text
    assert term.text.count("Allow?") == 1
    assert (tmp_path / "one.txt").exists()
    assert (tmp_path / "two.txt").exists()


# ---- without a terminal --------------------------------------------------------------------


@pytest.mark.subprocess
@pytest.mark.parametrize("command", ["run", "chat"])
def test_without_a_terminal_an_ask_is_refused_and_the_exit_code_is_3(
    tmp_path: Path, notes_site: Path, command: str
) -> None:
    config = _config(tmp_path, ONE_NOTE)
    argv = [agentrig_script(), command, "-c", str(config)]
    done = subprocess.run(
        [*argv, "write it"] if command == "run" else argv,
        input="write it\n" if command == "chat" else "",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=command_env(pythonpath=[notes_site]),
        timeout=90,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    assert f"agentrig {command}: error [cli.approval_required]" in done.stderr
    assert "--yes" in done.stderr
    assert "--mode" in done.stderr
    assert "'write_note'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "note.txt").exists()


def _run(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    argv: list[str],
) -> tuple[int, str, str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # not a terminal
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _untooled(err: str) -> list[str]:
    """stderr without the ``[tool]`` lines of a piped run."""
    return [line for line in err.splitlines() if not line.startswith("[tool] ")]


def test_yes_approves_every_ask(
    tmp_path: Path,
    notes_site: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config(tmp_path, ONE_NOTE)
    code, out, err = _run(
        monkeypatch, capsys, tmp_path, ["run", "-c", str(config), "--yes", "write it"]
    )
    assert (code, out) == (0, "Done.\n")
    assert _untooled(err) == []
    assert (tmp_path / "note.txt").read_text(encoding="utf-8") == "hello"


@pytest.mark.parametrize(
    ("mode", "runs"), [("accept-edits", True), ("bypass", True), ("plan", False)]
)
def test_mode_decides_the_ask_without_a_person(
    tmp_path: Path,
    notes_site: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mode: str,
    runs: bool,
) -> None:
    config = _config(tmp_path, ONE_NOTE)
    code, out, err = _run(
        monkeypatch, capsys, tmp_path, ["run", "-c", str(config), "--mode", mode, "write it"]
    )
    assert (code, out) == (0, "Done.\n")
    assert (tmp_path / "note.txt").exists() is runs
    if runs:
        assert _untooled(err) == []
    else:  # refused by the mode: exit 0, but never unmentioned (its [tool] line says why)
        assert "[tool] write_note -> error: The call was refused: permission decided: plan" in err
        assert "plan" in err


def test_mode_default_overrides_the_config_and_asks(
    tmp_path: Path,
    notes_site: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config(tmp_path, ONE_NOTE, extra='\n[permissions]\nmode = "bypass"\n')
    code, _, err = _run(
        monkeypatch, capsys, tmp_path, ["run", "-c", str(config), "--mode", "default", "x"]
    )
    assert code == 3
    assert "cli.approval_required" in err
    assert not (tmp_path / "note.txt").exists()


def test_mode_bypass_is_refused_when_the_config_disables_it(
    tmp_path: Path,
    notes_site: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config(tmp_path, ONE_NOTE, extra="\n[permissions]\ndisable_bypass = true\n")
    code, out, err = _run(
        monkeypatch, capsys, tmp_path, ["run", "-c", str(config), "--mode", "bypass", "x"]
    )
    assert (code, out) == (2, "")
    assert "error [cli.bypass_disabled]" in err
    assert "disable_bypass" in err


def test_an_unknown_mode_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, ONE_NOTE)
    code, _, err = _run(
        monkeypatch, capsys, tmp_path, ["run", "-c", str(config), "--mode", "yolo", "x"]
    )
    assert code == 2
    assert "invalid choice: 'yolo'" in err
    assert "accept-edits" in err


@pytest.mark.subprocess
@pytest.mark.slow
def test_ctrl_c_at_the_question_stops_the_turn_unrun(tmp_path: Path, notes_site: Path) -> None:
    config = _config(tmp_path, [*ONE_NOTE, '{ text = "Back again." }'])
    with open_terminal(tmp_path, "chat", "-c", str(config), pythonpath=[notes_site]) as term:
        term.expect_prompt()
        term.send("write it\n")
        term.expect("Allow?")
        term.send("\x03")
        term.expect("(question withdrawn: the turn was interrupted)")
        term.expect("[interrupted]")
        term.expect_prompt()
        term.send("y\n")  # a line typed now is the next prompt, not a late answer
        term.expect("Done.")  # the script's next reply: the chat goes on
        term.expect_prompt()
        term.send("/exit\n")
        assert term.wait() == 0, term.text
    assert not (tmp_path / "note.txt").exists()


APPROVER_PLUGIN = """
import agentrig


@agentrig.hookimpl
def permission_approver(payload):
    return "allow" if payload.tool == "write_note" else None
"""


def test_an_installed_approver_plugin_answers_before_the_command(
    tmp_path: Path,
    notes_site: Path,
    install_dist: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    install_dist(
        "notes-approver",
        {"agentrig.plugins": {"notes-approver": "notes_approver"}},
        {"notes_approver": APPROVER_PLUGIN},
    )
    config = _config(tmp_path, ONE_NOTE)
    code, out, err = _run(monkeypatch, capsys, tmp_path, ["run", "-c", str(config), "x"])
    assert (code, out) == (0, "Done.\n")
    assert _untooled(err) == []  # no terminal, no --yes: the plugin said yes
    assert (tmp_path / "note.txt").exists()


def test_the_question_shortens_long_strings_long_lists_and_deep_values() -> None:
    from agentrig.cli._approve import describe_call
    from agentrig.lifecycle import PermissionQuestion

    deep: dict[str, Any] = {"leaf": 1}
    for _ in range(8):
        deep = {"down": deep}
    question = PermissionQuestion(
        agent_id=AgentId("assistant"),
        tool="write_note",
        arguments={"text": "é" * 1000, "items": list(range(50)), "deep": deep},
        reason="default mode asks before modify calls",
        rule=None,
        call_id=CallId("call_0"),
    )

    shown = describe_call(question)

    assert shown.startswith("The agent wants to run the tool 'write_note'.\n")
    assert "why it asks: default mode asks before modify calls" in shown
    assert '"text": "' + "é" * 160 + '... (1000 characters; the last 840 not shown)"' in shown
    command = {"command": "echo " + "a" * 200 + "\nrm -rf ~\n"}
    cut = describe_call(attrs.evolve(question, arguments=command))
    assert "(215 characters; the last 55 not shown, 2 more lines)" in cut  # what it hides
    assert '"... 30 more items"' in shown
    assert "49" not in shown
    assert '"{... 1 keys}"' in shown
    assert '"leaf"' not in shown


ASK_RULE = '\n[permissions]\nask = ["write_note"]\n'


def test_yes_does_not_answer_an_ask_rule_without_a_terminal(
    tmp_path: Path,
    notes_site: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config(tmp_path, ONE_NOTE, extra=ASK_RULE)
    code, out, err = _run(
        monkeypatch, capsys, tmp_path, ["run", "-c", str(config), "--yes", "write it"]
    )
    assert (code, out) == (3, "Done.\n")
    assert "error [cli.approval_required]" in err
    assert "--yes does not answer the cases asked in every mode (asked by 'write_note')" in err
    assert not (tmp_path / "note.txt").exists()


@pytest.mark.subprocess
@pytest.mark.slow
def test_an_ask_rule_is_put_to_the_person_even_with_yes_and_never_remembered(
    tmp_path: Path, notes_site: Path
) -> None:
    config = _config(tmp_path, ONE_NOTE, extra=ASK_RULE)
    with open_terminal(
        tmp_path, "run", "-c", str(config), "--yes", "write it", pythonpath=[notes_site]
    ) as term:
        term.expect("why it asks: asked by 'write_note' (rule write_note)")
        term.expect("Allow? [y] once  [n] deny (asked every time):")
        term.send("a\n")
        term.expect("'a' is not an answer; type y or n")
        term.send("y\n")
        term.expect("Done.")
        assert term.wait() == 0, term.text
    assert (tmp_path / "note.txt").exists()
