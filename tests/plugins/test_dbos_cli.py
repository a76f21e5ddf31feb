"""``agentrig submit`` / ``agentrig worker`` / ``agentrig result`` as a user runs them: real
processes on one composition file, DBOS's SQLite default in its state directory."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.subprocess, pytest.mark.slow]

AGENTRIG = shutil.which("agentrig", path=str(Path(sys.executable).parent)) or "agentrig"

CONFIG = """
[providers.local]
kind = "scripted"
options.script = [{ text = "hello from a worker" }]
options.on_exhausted = "repeat"

[session_stores.store]
kind = "jsonl"
options.directory = "sessions"

[agents.assistant]
provider = "local"
model = "m1"
session_store = "store"

[dbos]
"""


def cli(tmp: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AGENTRIG, *args, "-c", str(tmp / "agentrig.toml")],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tmp,
    )


def background(tmp: Path, *args: str) -> subprocess.Popen[str]:
    """An ``agentrig`` command left running (a worker, a follower)."""
    return subprocess.Popen(
        [AGENTRIG, *args, "-c", str(tmp / "agentrig.toml")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp,
    )


def test_submit_to_a_worker_and_await_the_result_by_id(tmp_path: Path) -> None:
    (tmp_path / "agentrig.toml").write_text(textwrap.dedent(CONFIG), encoding="utf-8")
    queued = cli(tmp_path, "submit", "assistant", "hi", "--id", "run-1")
    assert queued.returncode == 0, queued.stderr
    assert queued.stdout.strip() == "run-1"
    assert (tmp_path / ".agentrig" / "durable").stat().st_mode & 0o777 == 0o700
    worker = background(tmp_path, "worker", "--executor-id", "w1")
    try:
        done = cli(tmp_path, "result", "run-1")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "hello from a worker"
        both = cli(tmp_path, "submit", "assistant", "again", "--wait")
        assert both.returncode == 0, both.stderr
        run_id, answer = both.stdout.split()[0], " ".join(both.stdout.split()[1:])
        assert run_id.startswith("dr-")
        assert answer == "hello from a worker"
    finally:
        worker.send_signal(signal.SIGTERM)
        _out, err = worker.communicate(timeout=60)
    assert worker.returncode == 0, err
    assert "executing durable runs (w1)" in err


def test_errors_are_one_line_with_a_code(tmp_path: Path) -> None:
    (tmp_path / "agentrig.toml").write_text(textwrap.dedent(CONFIG), encoding="utf-8")
    unknown = cli(tmp_path, "submit", "asistant", "hi")
    assert unknown.returncode == 1
    assert unknown.stderr.count("\n") == 1, unknown.stderr
    assert "error [catalog.unknown_id]" in unknown.stderr
    assert "did you mean 'assistant'" in unknown.stderr
    missing = cli(tmp_path, "result", "nope")
    assert missing.returncode == 1
    assert "error [dbos.unknown_run]" in missing.stderr
    (tmp_path / "plain.toml").write_text(
        textwrap.dedent(CONFIG).replace("[dbos]", ""), encoding="utf-8"
    )
    plain = subprocess.run(
        [AGENTRIG, "submit", "assistant", "hi", "-c", str(tmp_path / "plain.toml")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ},
    )
    assert plain.returncode == 1
    assert "error [dbos.setup]" in plain.stderr
    assert "no [dbos] table" in plain.stderr


def test_an_unreachable_system_database_is_one_line_naming_it(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://agentrig@127.0.0.1:{port}/runs"
    (tmp_path / "agentrig.toml").write_text(
        textwrap.dedent(CONFIG).replace("[dbos]", f'[dbos]\nsystem_database_url = "{url}"'),
        encoding="utf-8",
    )
    for command in (["submit", "assistant", "hi"], ["worker"], ["result", "r1"]):
        failed = cli(tmp_path, *command)
        assert failed.returncode == 1, failed.stderr
        assert failed.stdout == ""
        assert failed.stderr.count("\n") == 1, failed.stderr
        assert f"agentrig {command[0]}: error [dbos.database]" in failed.stderr
        assert f"database runs on 127.0.0.1:{port}" in failed.stderr


APPROVAL = """
[providers.local]
kind = "scripted"
options.script = [
  { tool_calls = [{ name = "tool_search", arguments = { query = "weather" }, id = "call_s" }] },
  { text = "searched after approval" },
]

[session_stores.store]
kind = "jsonl"
options.directory = "sessions"

[agents.assistant]
provider = "local"
model = "m1"
session_store = "store"
tools = ["tool_search"]

[permissions]
mode = "default"
ask = ["tool_search"]

[dbos]
"""


def test_a_waiting_question_is_answered_from_another_process(tmp_path: Path) -> None:
    (tmp_path / "agentrig.toml").write_text(textwrap.dedent(APPROVAL), encoding="utf-8")
    worker = background(tmp_path, "worker")
    try:
        queued = cli(tmp_path, "submit", "assistant", "find the weather tool", "--id", "run-a")
        assert queued.returncode == 0, queued.stderr
        for _ in range(60):
            shown = cli(tmp_path, "approve", "run-a")
            assert shown.returncode == 0, shown.stderr
            if shown.stdout.strip() != "nothing to approve":
                break
        question = json.loads(shown.stdout)
        assert question["call_id"] == "call_s"
        assert question["tool"] == "tool_search"
        assert question["arguments"] == {"query": "weather"}
        usage = cli(tmp_path, "approve", "run-a", "call_s")
        assert usage.returncode == 2
        assert "--allow or --deny" in usage.stderr
        answered = cli(tmp_path, "approve", "run-a", "call_s", "--allow")
        assert answered.returncode == 0, answered.stderr
        done = cli(tmp_path, "result", "run-a")
        assert done.stdout.strip() == "searched after approval", done.stderr
        assert cli(tmp_path, "approve", "run-a").stdout.strip() == "nothing to approve"
        again = cli(tmp_path, "approve", "run-a", "call_s", "--deny")  # answered already
        assert again.returncode == 1
        assert again.stderr.count("\n") == 1, again.stderr
        assert "error [dbos.not_waiting]" in again.stderr
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.communicate(timeout=60)
    sessions = list((tmp_path / "sessions").rglob("*.jsonl"))
    log = sessions[0].read_text(encoding="utf-8")
    assert '"status":"ok"' in log.replace(" ", "")  # the approved call ran


def test_result_follow_streams_the_events_of_a_run_another_process_executes(
    tmp_path: Path,
) -> None:
    (tmp_path / "agentrig.toml").write_text(textwrap.dedent(APPROVAL), encoding="utf-8")
    queued = cli(tmp_path, "submit", "assistant", "find the weather tool", "--id", "run-f")
    assert queued.returncode == 0, queued.stderr
    follower = background(tmp_path, "result", "run-f", "--follow")
    worker = background(tmp_path, "worker")
    try:
        assert follower.stdout is not None
        before: list[str] = []
        while not before or json.loads(before[-1])["data"]["type"] != "tool/call":
            line = follower.stdout.readline()  # up to the call that waits for approval
            assert line, follower.stderr.read() if follower.stderr else ""
            before.append(line)
        # the run waits for the approval it cannot get by itself: it is still going
        assert follower.poll() is None
        answered = cli(tmp_path, "approve", "run-f", "call_s", "--allow")
        assert answered.returncode == 0, answered.stderr
        rest = follower.stdout.read()  # (communicate() would skip what readline buffered)
        err = follower.stderr.read() if follower.stderr else ""
        follower.wait(120)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.communicate(timeout=60)
        if follower.poll() is None:
            follower.kill()
            follower.communicate()
    assert follower.returncode == 0, err
    lines = [*before, *rest.splitlines(keepends=True)]
    assert lines[-1].strip() == "searched after approval"
    followed = [json.loads(line) for line in lines[:-1]]
    (log,) = list((tmp_path / "sessions").rglob("*.jsonl"))
    stored = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert followed == stored  # every event of the log, once, in order, through the end


def test_the_example_runs_offline(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "durable"
    copy = tmp_path / "durable"
    shutil.copytree(example, copy, ignore=shutil.ignore_patterns(".agentrig"))
    done = subprocess.run(
        [sys.executable, str(copy / "run.py")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("submitted dr-")
    assert lines[1] == "asked: tool_search {'query': 'weather'} (call_search)"
    assert lines[2] == "answer: Searched the tools; nothing more to do."
    assert (copy / ".agentrig" / "durable").stat().st_mode & 0o777 == 0o700


def test_the_examples_multi_terminal_flow_survives_a_killed_worker(tmp_path: Path) -> None:
    """README's flow from several terminals: a worker, submit, the worker killed (-9) and
    started again with the same id, the approval answered, the answer awaited.  The example's
    model answers by round, so the restarted worker continues the run instead of starting
    its script over."""
    example = Path(__file__).resolve().parents[2] / "examples" / "durable"
    copy = tmp_path / "durable"
    shutil.copytree(example, copy, ignore=shutil.ignore_patterns(".agentrig"))
    worker = background(copy, "worker", "--executor-id", "w1")
    try:
        queued = cli(copy, "submit", "assistant", "Which tool tells the weather?")
        assert queued.returncode == 0, queued.stderr
        run_id = queued.stdout.strip()
        assert run_id.startswith("dr-")
        for _ in range(120):
            shown = cli(copy, "approve", run_id)
            assert shown.returncode == 0, shown.stderr
            if shown.stdout.strip() != "nothing to approve":
                break
        question = json.loads(shown.stdout)
        assert question["call_id"] == "call_search"
        worker.kill()  # kill -9: no shutdown of any kind
        worker.communicate(timeout=60)
        worker = background(copy, "worker", "--executor-id", "w1")
        # the run still waits at the same call
        assert json.loads(cli(copy, "approve", run_id).stdout) == question
        answered = cli(copy, "approve", run_id, "call_search", "--allow")
        assert answered.returncode == 0, answered.stderr
        done = cli(copy, "result", run_id)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Searched the tools; nothing more to do."
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.communicate(timeout=60)
    (log,) = list((copy / ".agentrig" / "sessions").rglob("*.jsonl"))
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    calls = [e for e in events if e["data"]["type"] == "tool/call"]
    assert [c["data"]["call"]["id"] for c in calls] == ["call_search"]  # asked once, ran once
