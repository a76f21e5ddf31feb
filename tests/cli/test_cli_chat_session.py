"""``agentrig chat``: lines from stdin are turns; /exit or EOF ends; --session continues."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentrig.cli import main


def _config(tmp_path: Path, replies: list[str], *, store: bool = True) -> Path:
    script = ",\n".join(f"  {{ text = {json.dumps(r)}, chunk_size = 3 }}" for r in replies)
    text = f"""\
[providers.local]
kind = "scripted"
options.script = [
{script}
]

[agents.assistant]
provider = "local"
model = "scripted-chat"
system_prompt = "Be brief."
"""
    if store:
        text += f"""session_store = "main"

[session_stores.main]
kind = "jsonl"
options.directory = {json.dumps(str(tmp_path / "sessions"))}
"""
    path = tmp_path / "agentrig.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _chat(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    stdin: str,
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(["chat", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_each_line_is_a_turn_until_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, ["Hello!", "Fine, thanks."], store=False)

    code, out, err = _chat(
        monkeypatch,
        capsys,
        ["-c", str(config)],
        "hi\n\nhow are you?\n/exit\nthis line is never read as a turn\n",
    )

    assert (code, err) == (0, "")
    assert out == "Hello!\nFine, thanks.\n"


def test_end_of_input_ends_the_chat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, ["only answer"], store=False)
    code, out, _ = _chat(monkeypatch, capsys, ["-c", str(config)], "one question")
    assert (code, out) == (0, "only answer\n")


def test_a_failed_turn_is_reported_and_the_chat_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, ["first"], store=False)  # the second turn exhausts the script
    code, out, err = _chat(monkeypatch, capsys, ["-c", str(config)], "a\nb\n/exit\n")
    assert code == 1
    assert out == "first\n"
    assert "agentrig chat: error [scripted.exhausted]" in err


def test_session_is_created_then_resumed_with_its_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, ["Nice to meet you, Ada."])
    code, out, err = _chat(
        monkeypatch, capsys, ["-c", str(config), "--session", "ses_chat1"], "I am Ada.\n"
    )
    assert (code, out, err) == (0, "Nice to meet you, Ada.\n", "")
    log = tmp_path / "sessions" / "ses_chat1.jsonl"
    first_events = [json.loads(line) for line in log.read_text().splitlines()]

    config = _config(tmp_path, ["You are Ada."])
    code, out, err = _chat(
        monkeypatch, capsys, ["-c", str(config), "--session", "ses_chat1"], "Who am I?\n/exit\n"
    )
    assert code == 0
    assert out == "You are Ada.\n"
    assert "resumed session ses_chat1 (1 earlier turn(s))" in err

    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert events[: len(first_events)] == first_events
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    users = [e["data"]["message"] for e in events if e["data"]["type"] == "user/message"]
    assert len(users) == 2
    # exactly one session file: the configured agent's throwaway session left nothing behind
    assert sorted(p.name for p in log.parent.glob("*.jsonl")) == ["ses_chat1.jsonl"]


def test_session_without_a_store_starts_a_session_with_that_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, ["hi"], store=False)
    code, out, _ = _chat(monkeypatch, capsys, ["-c", str(config), "--session", "ses_x"], "yo\n")
    assert (code, out) == (0, "hi\n")


def test_chat_usage_errors_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, [], store=False)
    code, _, err = _chat(monkeypatch, capsys, ["-c", str(config), "--session", "../x"], "")
    assert code == 2
    assert "invalid SessionId" in err
    code, _, err = _chat(monkeypatch, capsys, ["-c", str(config), "-a", "ghost"], "")
    assert code == 2
    assert "no agent 'ghost'" in err


@pytest.mark.subprocess
def test_chat_through_the_console_script_reads_piped_stdin(tmp_path: Path) -> None:
    script = shutil.which("agentrig", path=str(Path(sys.executable).parent))
    assert script is not None
    config = _config(tmp_path, ["one", "two"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    done = subprocess.run(
        [script, "chat", "-c", str(config), "--session", "ses_piped"],
        input="first\nsecond\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "one\ntwo\n"
    assert (tmp_path / "sessions" / "ses_piped.jsonl").exists()


def test_resuming_a_damaged_session_warns_with_a_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, ["Noted."])
    assert _chat(monkeypatch, capsys, ["-c", str(config), "--session", "ses_torn"], "hi\n")[0] == 0
    log = tmp_path / "sessions" / "ses_torn.jsonl"
    with log.open("a", encoding="utf-8") as f:
        f.write('{"seq": 99, "type": "user/mes')  # a record torn by a crash
    config = _config(tmp_path, ["Still here."])
    code, out, err = _chat(monkeypatch, capsys, ["-c", str(config), "--session", "ses_torn"], "x\n")
    assert (code, out) == (0, "Still here.\n")
    (line,) = [line for line in err.splitlines() if "damaged" in line]
    assert line.startswith("agentrig chat: warning [session.damaged]: the stored session was ")


def test_context_command_shows_how_full_the_window_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, ["Hello!"], store=False)
    code, out, err = _chat(monkeypatch, capsys, ["-c", str(config)], "hi\n/context\n/exit\n")
    assert (code, out) == (0, "Hello!\n")
    (line,) = err.splitlines()
    # "Be brief." + "hi" + "Hello!": 17 characters, about 4 tokens (no usage reported)
    assert line == "context: 4 / 200,000 tokens (0%, estimate)"


def test_compact_command_summarises_the_conversation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, ["Hello!", "Fine.", "They said hello."], store=False)
    config.write_text(
        config.read_text(encoding="utf-8") + "compaction = { keep_last = 2 }\n", encoding="utf-8"
    )
    stdin = "hi\nhow are you?\n/compact keep names\n/compact\n/exit\n"
    code, out, err = _chat(monkeypatch, capsys, ["-c", str(config)], stdin)
    assert (code, out) == (0, "Hello!\nFine.\n")
    first, second = err.splitlines()
    assert first.startswith("context compacted (manual, summary): 2 message(s) replaced by 1")
    assert second == "nothing to compact"
