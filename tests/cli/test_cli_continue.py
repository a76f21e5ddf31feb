"""Going on with a conversation from the shell (issue 37 point 5): ``run --continue``,
``run --session ID``, the session id on stderr, ``sessions search TEXT`` -- each through the
installed ``agentrig`` command in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

AGENTRIG = str(Path(sys.executable).with_name("agentrig"))

STORED = """\
[providers.local]
kind = "scripted"
options.script = [{ text = "REPLY" }]

[agents.main]
provider = "local"
model = "m"
session_store = "disk"

[session_stores.disk]
kind = "jsonl"
options.directory = "sessions"
"""


def agentrig(folder: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AGENTRIG, *args], cwd=folder, capture_output=True, text=True, input=stdin, timeout=120
    )


def project(tmp_path: Path, reply: str = "It is sunny in Lisbon.", *, store: bool = True) -> Path:
    config = STORED.replace("REPLY", reply)
    if not store:
        config = config.replace('session_store = "disk"\n', "")
    (tmp_path / "agentrig.toml").write_text(config, encoding="utf-8")
    return tmp_path


def session_of(done: subprocess.CompletedProcess[str]) -> str:
    """The id of the ``session ID`` line on stderr."""
    lines = [line for line in done.stderr.splitlines() if line.startswith("session ses_")]
    assert len(lines) == 1, done.stderr
    return lines[0].split()[1]


def test_a_stored_run_names_its_session_and_continue_goes_on_with_it(tmp_path: Path) -> None:
    folder = project(tmp_path)
    first = agentrig(folder, "run", "-c", "agentrig.toml", "weather in Lisbon?")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "It is sunny in Lisbon.\n"
    session = session_of(first)
    second = agentrig(folder, "run", "-c", "agentrig.toml", "--continue", "--json", "and now?")
    assert second.returncode == 0, second.stderr
    assert f"resumed session {session} (1 earlier turn(s))" in second.stderr
    assert session_of(second) == session
    record = json.loads(second.stdout)["invocation"]
    assert (record["session_id"], record["turn"]) == (session, 2)


def test_continue_takes_the_latest_session_and_session_id_an_older_one(tmp_path: Path) -> None:
    folder = project(tmp_path)
    older = session_of(agentrig(folder, "run", "-c", "agentrig.toml", "one"))
    newer = session_of(agentrig(folder, "run", "-c", "agentrig.toml", "two"))
    assert older != newer
    assert session_of(agentrig(folder, "run", "-c", "agentrig.toml", "--continue", "x")) == newer
    again = agentrig(folder, "run", "-c", "agentrig.toml", "--session", older, "--json", "y")
    assert f"resumed session {older}" in again.stderr
    assert json.loads(again.stdout)["invocation"]["turn"] == 2


def test_a_new_session_id_starts_a_session_under_that_id(tmp_path: Path) -> None:
    folder = project(tmp_path)
    wanted = "ses_" + "ab" * 16
    done = agentrig(folder, "run", "-c", "agentrig.toml", "--session", wanted, "hi")
    assert done.returncode == 0, done.stderr
    assert session_of(done) == wanted
    assert "resumed" not in done.stderr


def test_continue_with_nothing_stored_yet_starts_a_new_session(tmp_path: Path) -> None:
    folder = project(tmp_path)
    done = agentrig(folder, "run", "-c", "agentrig.toml", "--continue", "hi")
    assert done.returncode == 0, done.stderr
    assert "no earlier session of agent main: a new one" in done.stderr
    session_of(done)


def test_without_a_store_there_is_no_session_line_and_continue_is_refused(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path, store=False)
    done = agentrig(folder, "run", "-c", "agentrig.toml", "hi")
    assert (done.returncode, done.stderr) == (0, "")
    refused = agentrig(folder, "run", "-c", "agentrig.toml", "--continue", "hi")
    assert refused.returncode == 2
    assert "error [cli.no_session_store]: --continue: agent main" in refused.stderr


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--continue", "--session", "ses_" + "ab" * 16], "cli.usage"),
        (["--session", "../x"], "cli.session_id"),
    ],
)
def test_session_usage_errors(tmp_path: Path, args: list[str], code: str) -> None:
    done = agentrig(project(tmp_path), "run", "-c", "agentrig.toml", *args, "hi")
    assert done.returncode == 2
    assert f"error [{code}]" in done.stderr
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())


def test_chat_continues_the_latest_session(tmp_path: Path) -> None:
    folder = project(tmp_path)
    session = session_of(agentrig(folder, "run", "-c", "agentrig.toml", "first question"))
    done = agentrig(folder, "chat", "-c", "agentrig.toml", "--continue", stdin="more\n/exit\n")
    assert done.returncode == 0, done.stderr
    assert f"resumed session {session} (1 earlier turn(s))" in done.stderr


def test_sessions_search_finds_past_conversations_by_text(tmp_path: Path) -> None:
    folder = project(tmp_path)
    lisbon = session_of(agentrig(folder, "run", "-c", "agentrig.toml", "Weather in LISBON?"))
    porto = session_of(agentrig(folder, "run", "-c", "agentrig.toml", "And in Porto?"))
    found = agentrig(folder, "sessions", "search", "-c", "agentrig.toml", "lisbon")
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    # both answers say Lisbon; only the first question does; newest first
    assert [line.split()[0] for line in lines if line.startswith("ses_")] == [porto, lisbon]
    assert "  user: Weather in LISBON?" in lines
    assert "  user: And in Porto?" not in lines
    as_json = agentrig(folder, "sessions", "search", "-c", "agentrig.toml", "porto", "--json")
    rows = json.loads(as_json.stdout)
    assert [(r["session"], r["matches"]) for r in rows] == [(porto, ["user: And in Porto?"])]
    limited = agentrig(folder, "sessions", "search", "-c", "agentrig.toml", "sunny", "-n", "1")
    assert [line.split()[0] for line in limited.stdout.splitlines() if "ses_" in line] == [porto]
    none = agentrig(folder, "sessions", "search", "-c", "agentrig.toml", "Madrid")
    assert (none.returncode, none.stdout) == (0, "no stored session mentions 'Madrid'\n")
