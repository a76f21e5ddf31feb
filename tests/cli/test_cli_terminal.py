"""``run`` and ``chat`` on a terminal: Markdown rendering, the status line, Ctrl-C.

Each test drives the real ``agentrig`` command in a pseudo-terminal; what a person sees is
read from the screen pyte emulates.  No assertion depends on how long anything took.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest
from cli_terminal_support import (
    Terminal,
    agentrig_script,
    command_env,
    open_terminal,
    scripted_config,
)

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]

MARKDOWN = "# Title\n\nSome **bold** words.\n\n- one\n- two\n"


def _config(tmp_path: Path, replies: list[str], *, store: bool = False) -> Path:
    stored = 'session_store = "files"\n\n[session_stores.files]\nkind = "jsonl"\n'
    return scripted_config(
        tmp_path, replies, agent=stored + 'options.directory = "sessions"\n' if store else ""
    )


def _run_on_terminal(tmp_path: Path, config: Path, env: dict[str, str] | None = None) -> Terminal:
    return open_terminal(tmp_path, "run", "-c", str(config), "question", env=env)


def _wait_for_the_model_call(tmp_path: Path) -> None:
    """Until the session log shows the request header, written right before the model call."""
    for _ in range(900):  # a bound against a hang, not a measurement
        logs = (tmp_path / "sessions").glob("**/*.jsonl")
        if any("request/header" in log.read_text(encoding="utf-8") for log in logs):
            return
        time.sleep(0.1)
    pytest.fail("the run never reached its model call")


def _turn_ends(tmp_path: Path) -> list[str]:
    """The ``reason`` of every ``turn/end`` in the session logs, in order."""
    events = [
        json.loads(line)["data"]
        for log in (tmp_path / "sessions").glob("**/*.jsonl")
        for line in log.read_text(encoding="utf-8").splitlines()
    ]
    return [e["reason"] for e in events if e["type"] == "turn/end"]


# ---- output --------------------------------------------------------------------------------


def test_markdown_is_rendered_on_a_terminal(tmp_path: Path) -> None:
    config = _config(tmp_path, [f"{{ text = {json.dumps(MARKDOWN)}, chunk_size = 5 }}"])
    with _run_on_terminal(tmp_path, config) as term:
        assert term.wait() == 0, term.text
    screen = term.screen()
    assert "Some bold words." in screen  # the ** markers became bold
    assert "\x1b[1mbold" in term.raw
    assert " • one" in screen
    assert " • two" in screen
    assert any(line.strip() == "Title" for line in screen)  # the heading, without its #
    assert not any("**" in line or line.startswith("#") for line in screen)


@pytest.mark.parametrize("plain_env", [{"NO_COLOR": "1"}, {"TERM": "dumb"}], ids=str)
def test_plain_text_when_piped_or_no_color(tmp_path: Path, plain_env: dict[str, str]) -> None:
    config = _config(tmp_path, [f"{{ text = {json.dumps(MARKDOWN)} }}"])
    piped = subprocess.run(
        [agentrig_script(), "run", "-c", str(config), "question"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=command_env(),
        timeout=90,
        check=False,
    )
    assert (piped.returncode, piped.stdout, piped.stderr) == (0, MARKDOWN, "")

    with _run_on_terminal(tmp_path, config, plain_env) as term:
        assert term.wait() == 0, term.text
    assert term.screen() == MARKDOWN.rstrip("\n").split("\n")
    assert "\x1b[" not in term.raw


def test_a_status_line_shows_while_waiting_for_the_model_and_a_tool(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        [
            '{ tool_calls = [{ name = "tool_search", arguments = { query = "notes" } }] }',
            '{ text = "Found nothing." }',
        ],
    )
    config.write_text(
        config.read_text(encoding="utf-8") + 'tools = ["tool_search"]\n', encoding="utf-8"
    )
    with _run_on_terminal(tmp_path, config) as term:
        assert term.wait() == 0, term.text
    text = term.text
    # drawn as the turn starts and while the tool runs: what it waits for, seconds so far
    assert re.search(r"waiting for the model \(\d+\.\ds\)", text)
    assert re.search(r"running tool_search \(\d+\.\ds\)", text)
    screen = term.screen()
    # the status line is transient; the tool call and its result stay, one line each
    assert not any("waiting for the model" in line for line in screen)
    assert screen[0].startswith('⚙ tool_search({"query": "notes"})')
    assert screen[1].startswith("  ↳ tool_search -> ")
    assert screen[-1] == "Found nothing."


# ---- Ctrl-C in chat ------------------------------------------------------------------------


def test_ctrl_c_stops_the_answer_and_a_second_at_the_prompt_leaves(tmp_path: Path) -> None:
    endless = "word " * 2000
    config = _config(
        tmp_path,
        [
            f'{{ text = "{endless}", chunk_size = 5, delay = 0.05 }}',
            '{ text = "The second answer." }',
        ],
        store=True,
    )
    with open_terminal(tmp_path, "chat", "-c", str(config)) as term:
        term.expect_prompt()
        term.send("talk forever\n")
        term.expect("word word")  # the answer is streaming
        term.send("\x03")
        term.expect("[interrupted]")
        term.expect_prompt()
        term.send("and now?\n")
        term.expect("The second answer.")
        term.expect_prompt()
        term.send("\x03")
        assert term.wait() == 130, term.text
    assert "Traceback" not in term.text
    assert _turn_ends(tmp_path) == ["interrupted", "completed"]


def test_ctrl_d_at_the_prompt_leaves_with_0(tmp_path: Path) -> None:
    config = _config(tmp_path, ['{ text = "Hi." }'])
    with open_terminal(tmp_path, "chat", "-c", str(config)) as term:
        term.expect_prompt()
        term.send("hello\n")
        term.expect("Hi.")
        term.expect_prompt()
        term.send("\x04")
        assert term.wait() == 0, term.text


def test_run_exits_130_on_ctrl_c_in_a_terminal(tmp_path: Path) -> None:
    config = _config(tmp_path, ['{ text = "never arrives", delay = 3600 }'], store=True)
    with _run_on_terminal(tmp_path, config) as term:
        term.expect("waiting for the model")
        _wait_for_the_model_call(tmp_path)  # the turn is logged: Ctrl-C now interrupts it
        term.send("\x03")
        assert term.wait() == 130, term.text
    assert "Traceback" not in term.text
    assert "never arrives" not in term.text
    assert _turn_ends(tmp_path) == ["interrupted"]
