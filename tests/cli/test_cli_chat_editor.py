"""``agentrig chat`` as a line editor (issue 37 point 4), driven in a real pseudo-terminal.

What the model was sent is read back from the session log; what a person sees from the
screen pyte emulates.  The piped form (no terminal) is checked too: each line one message.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from cli_terminal_support import Terminal, agentrig_script, command_env, open_terminal
from cli_terminal_support import scripted_config as _scripted

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]

STORE = 'session_store = "files"\n\n[session_stores.files]\nkind = "jsonl"\n'
TOOL = '''\
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''
ESC_ENTER = "\x1b\r"  # Alt-Enter as a terminal sends it


def config(tmp_path: Path, replies: list[str] | None = None) -> Path:
    replies = replies or [f'{{ text = "Answer {n}." }}' for n in range(1, 6)]
    return _scripted(tmp_path, replies, agent=STORE + 'options.directory = "sessions"\n')


def sent(tmp_path: Path) -> list[str]:
    """The user messages of every stored session, in order."""
    found = []
    for log in sorted((tmp_path / "sessions").glob("**/*.jsonl")):
        for line in log.read_text(encoding="utf-8").splitlines():
            data = json.loads(line)["data"]
            if data["type"] == "user/message":
                found.append("".join(part["text"] for part in data["message"]["content"]))
    return found


def chat(tmp_path: Path, *args: str) -> Terminal:
    term = open_terminal(tmp_path, "chat", "-c", str(tmp_path / "agentrig.toml"), *args)
    term.expect_prompt()
    return term


def say(term: Terminal, keys: str, answer: str) -> None:
    """Type ``keys``; wait for ``answer`` and the next prompt."""
    term.send(keys)
    term.expect(answer)
    term.expect_prompt()


def leave(term: Terminal) -> None:
    term.send("\x04")  # Ctrl-D on an empty line
    assert term.wait() == 0, term.text
    assert "Traceback" not in term.text


def test_history_is_kept_owner_only_and_up_recalls_it(tmp_path: Path) -> None:
    config(tmp_path)
    with chat(tmp_path) as term:
        say(term, "what is in the history?\r", "Answer 1.")
        leave(term)
    history = tmp_path / "state" / "agentrig" / "chat-history"
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert stat.S_IMODE(history.parent.stat().st_mode) == 0o700
    assert "what is in the history?" in history.read_text(encoding="utf-8")
    with chat(tmp_path) as term:  # a new chat: Up brings the last chat's message back
        say(term, "\x1b[A\r", "Answer 1.")
        leave(term)
    assert sent(tmp_path) == ["what is in the history?"] * 2


def test_a_history_file_others_could_read_is_made_owner_only(tmp_path: Path) -> None:
    config(tmp_path)
    history = tmp_path / "state" / "agentrig" / "chat-history"
    history.parent.mkdir(parents=True)
    history.write_text("\n# earlier\n+an old line\n", encoding="utf-8")
    history.chmod(0o644)
    with chat(tmp_path) as term:
        say(term, "\x1b[A\r", "Answer 1.")
        leave(term)
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert sent(tmp_path) == ["an old line"]


def test_a_symlink_in_place_of_the_history_is_refused(tmp_path: Path) -> None:
    config(tmp_path)
    history = tmp_path / "state" / "agentrig" / "chat-history"
    history.parent.mkdir(parents=True)
    (tmp_path / "elsewhere").write_text("", encoding="utf-8")
    os.symlink(tmp_path / "elsewhere", history)
    with open_terminal(tmp_path, "chat", "-c", "agentrig.toml") as term:
        assert term.wait() == 2
    assert "error [cli.history]" in term.text
    assert "a symlink is refused" in term.text


def test_arrow_keys_edit_the_line(tmp_path: Path) -> None:
    config(tmp_path)
    with chat(tmp_path) as term:
        # type "helo", step back over the "o", insert the missing "l"
        say(term, "helo\x1b[Dl\r", "Answer 1.")
        leave(term)
    assert sent(tmp_path) == ["hello"]


def test_a_pasted_block_of_lines_is_one_message(tmp_path: Path) -> None:
    config(tmp_path)
    with chat(tmp_path) as term:
        say(term, "\x1b[200~first line\nsecond line\nthird line\x1b[201~\r", "Answer 1.")
        leave(term)
    assert sent(tmp_path) == ["first line\nsecond line\nthird line"]


def test_alt_enter_and_multi_line_mode_add_line_breaks(tmp_path: Path) -> None:
    config(tmp_path)
    with chat(tmp_path) as term:
        say(term, f"one{ESC_ENTER}two\r", "Answer 1.")
        say(term, "/multiline\r", "multi-line mode on")
        say(term, f"three\rfour{ESC_ENTER}", "Answer 2.")
        say(term, "/multiline\r", "multi-line mode off")  # a command: Enter sends it
        say(term, "five\r", "Answer 3.")
        leave(term)
    assert sent(tmp_path) == ["one\ntwo", "three\nfour", "five"]


def test_commands_are_answered_locally_and_never_sent(tmp_path: Path) -> None:
    config(tmp_path)
    (tmp_path / "helpers.py").write_text(TOOL, encoding="utf-8")
    with chat(tmp_path, "--tools", "helpers.py:add") as term:
        say(term, "/help\r", "/multiline")
        say(term, "/model\r", "model scripted-cli (provider local)")
        say(term, "/model bigger\r", "model bigger (provider local)")
        say(term, "/model other nowhere\r", "error [model.unknown_provider]")
        say(term, "/tools\r", "tools offered (1):")
        say(term, "/session\r", "0 turn(s), stored in files")
        say(term, "/compact\r", "nothing to compact")
        say(term, "/frobnicate now\r", "unknown command /frobnicate (not sent to the model)")
        say(term, "//frobnicate\r", "Answer 1.")
        say(term, "/usr/bin/env is where?\r", "Answer 2.")
        leave(term)
    assert "add  Add two integers." in term.text
    assert sent(tmp_path) == ["/frobnicate", "/usr/bin/env is where?"]


def test_ctrl_c_prints_the_partial_answer_once(tmp_path: Path) -> None:
    words = " ".join(f"w{n}" for n in range(3000))
    config(tmp_path, [f'{{ text = "{words}", chunk_size = 6, delay = 0.05 }}', '{ text = "Ok." }'])
    with chat(tmp_path) as term:
        term.send("talk\r")
        term.expect("w20 ")  # streaming
        term.send("\x03")
        term.expect("[interrupted]")
        term.expect_prompt()
        screen = " ".join(term.screen()).split()
        shown = [w for w in screen if w.startswith("w") and w[1:].isdigit()][:-1]  # last: cut
        assert shown[:21] == [f"w{n}" for n in range(21)]
        assert len(shown) == len(set(shown))  # no word of the answer shown twice
        say(term, "and now?\r", "Ok.")
        leave(term)


def test_a_piped_chat_reads_one_message_a_line_and_answers_commands_itself(
    tmp_path: Path,
) -> None:
    config(tmp_path)
    done = subprocess.run(
        [agentrig_script(), "chat", "-c", "agentrig.toml"],
        input="/help\n/nope\n/multiline\nhello\n/exit\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=command_env({"XDG_STATE_HOME": str(tmp_path / "state")}),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Answer 1.\n"
    assert "unknown command /nope" in done.stderr
    assert "/multiline: each line of a piped chat is one message" in done.stderr
    assert sent(tmp_path) == ["hello"]
    assert not (tmp_path / "state").exists()  # no history without a terminal
