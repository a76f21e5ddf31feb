"""``agentrig sessions list | show | export``: a session written by a real run (a tool call,
steering, usage) read back through the real command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

import agentrig
from agentrig.ids import AgentId
from agentrig.lifecycle import ExecutionSuspended

pytestmark = pytest.mark.subprocess

AGENTRIG = str(Path(sys.executable).with_name("agentrig"))

CONFIG = """\
[providers.local]
kind = "scripted"

[[providers.local.options.script]]
tool_calls = [{ name = "add", arguments = { a = 2, b = 3 } }]
usage = { prompt = 40, completion = 6 }

[[providers.local.options.script]]
text = "It is 5."
usage = { prompt = 50, completion = 4 }

[[providers.local.options.script]]
text = "Five, in words."
usage = { prompt = 60, completion = 5 }

[agents.assistant]
provider = "local"
model = "m"
tools = ["helpers.py:add"]
session_store = "main"

[session_stores.main]
kind = "jsonl"
options.directory = "sessions"

[permissions]
allow = ["add"]
"""

HELPERS = '''\
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''


class SteerOnce:
    def __init__(self) -> None:
        self.done = False

    @agentrig.hookimpl
    def turn_stopping(self, payload: agentrig.plugin.TurnStopping) -> None:
        if not self.done:
            self.done = True
            payload.agent.steer("Say it in words.")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("sessions")
    (folder / "agentrig.toml").write_text(CONFIG, encoding="utf-8")
    (folder / "helpers.py").write_text(HELPERS, encoding="utf-8")

    async def write_session() -> str:
        plugins = [("steer", SteerOnce())]
        async with agentrig.open_runtime(folder / "agentrig.toml", plugins=plugins) as rt:
            agent = rt.agent(AgentId("assistant"))
            await agent.run("What is 2 + 3?")
            return agent.session_id

    return folder, anyio.run(write_session)


def _agentrig(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    return subprocess.run(
        [AGENTRIG, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_list_shows_the_session_with_its_turns_and_events(project: tuple[Path, str]) -> None:
    folder, session = project
    done = _agentrig("sessions", "list", "-c", "agentrig.toml", cwd=folder)
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()
    assert header.split() == ["SESSION", "STORE", "TURNS", "EVENTS", "UPDATED"]
    assert row.split()[:3] == [session, "main", "1"]
    listed = json.loads(
        _agentrig("sessions", "list", "-c", "agentrig.toml", "--json", cwd=folder).stdout
    )
    assert [(r["session"], r["store"], r["turns"]) for r in listed] == [(session, "main", 1)]


def test_show_prints_tool_calls_results_steering_and_usage(project: tuple[Path, str]) -> None:
    folder, session = project
    done = _agentrig("sessions", "show", "-c", "agentrig.toml", session, cwd=folder)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    expected = [
        "user: What is 2 + 3?",
        'tool call add: {"a": 2, "b": 3}',
        "tool result add [ok]: 5",
        "assistant: It is 5.",
        "steering (steer): Say it in words.",
        "assistant: Five, in words.",
        "  (turn 1 ended completed)",
        "  (usage: 150 prompt + 15 completion = 165 tokens)",
        # the last reply's reported total (no provider is composed: the window is unknown)
        "  (context: 65 tokens (provider; context window unknown))",
    ]
    positions = [lines.index(line) for line in expected]
    assert positions == sorted(positions), done.stdout


def test_export_markdown_and_json(project: tuple[Path, str], tmp_path: Path) -> None:
    folder, session = project
    out = tmp_path / "t.md"
    done = _agentrig(
        "sessions", "export", "-c", "agentrig.toml", session, "--format", "markdown", "-o",
        str(out), cwd=folder,
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    markdown = out.read_text(encoding="utf-8")
    assert markdown.startswith(f"# Session {session}\n")
    assert '**tool call add**\n\n```json\n{"a": 2, "b": 3}\n```' in markdown
    assert "**steering (steer):** Say it in words." in markdown
    exported = _agentrig(
        "sessions", "export", "-c", "agentrig.toml", session, "--format", "json", cwd=folder
    )
    document = json.loads(exported.stdout)
    assert document["session_id"] == session
    assert document["usage"]["total"] == 165
    assert document["context"] == {"used": 65, "window": None, "share": None, "source": "provider"}
    types = [e["data"]["type"] for e in document["events"]]
    assert {"tool/call", "tool/result", "steering/message", "assistant/message"} <= set(types)
    stored = (folder / "sessions" / f"{session}.jsonl").read_text(encoding="utf-8")
    assert [json.loads(line) for line in stored.splitlines()] == document["events"]


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["show", "-c", "agentrig.toml", "ses_nope"], "cli.unknown_session", "no session ses_nope"),
        (["show", "-c", "agentrig.toml", "not an id"], "cli.session_id", "not an id"),
        (["list", "-c", "agentrig.toml", "--store", "mian"], "cli.unknown_store", "(stores: main)"),
        (["list", "-c", "missing.toml"], None, "no such file: missing.toml"),
    ],
)
def test_mistakes_are_one_error_line(
    project: tuple[Path, str], args: list[str], code: str | None, says: str
) -> None:
    folder, _ = project
    done = _agentrig("sessions", *args, cwd=folder)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith("agentrig sessions: error" + (f" [{code}]" if code else ""))
    assert says in line


def test_a_config_without_a_store_says_how_to_keep_sessions(tmp_path: Path) -> None:
    (tmp_path / "agentrig.toml").write_text(
        '[providers.p]\nkind = "scripted"\n[agents.a]\nprovider = "p"\nmodel = "m"\n'
    )
    done = _agentrig("sessions", "list", "-c", "agentrig.toml", cwd=tmp_path)
    assert done.returncode == 2
    assert "error [cli.no_session_store]" in done.stderr
    assert "add [session_stores.<id>]" in done.stderr


class WaitsForAnswer:
    """An approver whose answer comes later: the run suspends (see docs/journal.md)."""

    @agentrig.hookimpl
    async def permission_approver(self, payload: agentrig.plugin.PermissionQuestion) -> str:
        raise ExecutionSuspended(f"waiting for an answer on call {payload.call_id!r}")


def test_show_says_a_turn_suspended_and_what_it_waits_for(tmp_path: Path) -> None:
    config = CONFIG.replace('allow = ["add"]', 'ask = ["add"]')
    (tmp_path / "agentrig.toml").write_text(config, encoding="utf-8")
    (tmp_path / "helpers.py").write_text(HELPERS, encoding="utf-8")

    async def suspend() -> str:
        plugins = [("waits", WaitsForAnswer())]
        async with agentrig.open_runtime(tmp_path / "agentrig.toml", plugins=plugins) as rt:
            agent = rt.agent(AgentId("assistant"))
            with pytest.raises(ExecutionSuspended):
                await agent.run("What is 2 + 3?")
            return agent.session_id

    session = anyio.run(suspend)
    done = _agentrig("sessions", "show", "-c", "agentrig.toml", session, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # no journal: nothing can continue the waiting call, so it is settled as not executed
    assert "tool result add [not_executed]: not executed: the run suspended without an " in (
        "\n".join(lines)
    )
    [ended] = [line for line in lines if line.startswith("  (turn ")]
    assert ended.startswith("  (turn 1 ended suspended: waiting for an answer on call ")


FAILING = """\
[providers.local]
kind = "scripted"

[[providers.local.options.script]]
error = { status = 503, message = "the upstream is down" }

[agents.assistant]
provider = "local"
model = "m"
session_store = "main"

[session_stores.main]
kind = "jsonl"
options.directory = "sessions"
"""


def test_show_prints_a_failed_model_call_as_its_own_line(tmp_path: Path) -> None:
    (tmp_path / "agentrig.toml").write_text(FAILING, encoding="utf-8")

    async def fail() -> tuple[str, str]:
        async with agentrig.open_runtime(tmp_path / "agentrig.toml") as rt:
            agent = rt.agent(AgentId("assistant"))
            with pytest.raises(agentrig.AgentrigError) as caught:
                await agent.run("Hello?")
            return agent.session_id, caught.value.code

    session, code = anyio.run(fail)
    done = _agentrig("sessions", "show", "-c", "agentrig.toml", session, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    [failed] = [line for line in lines if "model call failed" in line]
    assert failed.startswith(f"  (model call failed [{code}] (local m, attempt 1): ")
    assert "the upstream is down" in failed
    assert not any(line.startswith("assistant:") for line in lines), done.stdout


COMPACT_CONFIG = """\
[providers.local]
kind = "scripted"
options.script = [
  { text = "The user greeted twice.", usage = { prompt = 30, completion = 5 } },
  { text = "Hello again." },
]

[agents.assistant]
provider = "local"
model = "m"
session_store = "main"
compaction = { keep_last = 2 }

[session_stores.main]
kind = "jsonl"
options.directory = "sessions"
"""


def test_compact_summarises_a_stored_session(tmp_path: Path) -> None:
    (tmp_path / "agentrig.toml").write_text(COMPACT_CONFIG, encoding="utf-8")

    async def write_session() -> str:
        async with agentrig.open_runtime(tmp_path / "agentrig.toml") as rt:
            agent = rt.agent(AgentId("assistant"))
            await agent.run("Hi!")
            await agent.run("Hi again!")
            return agent.session_id

    session = anyio.run(write_session)
    done = _agentrig(
        "sessions", "compact", "-c", "agentrig.toml", session, "--instructions", "Be short.",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("context compacted (manual, summary): 2 message(s) replaced by 1")
    shown = _agentrig("sessions", "show", "-c", "agentrig.toml", session, cwd=tmp_path).stdout
    assert "context compacted (manual, summary)" in shown
    exported = _agentrig(
        "sessions", "export", "-c", "agentrig.toml", session, "--format", "json", cwd=tmp_path
    )
    (event,) = [
        e["data"]
        for e in json.loads(exported.stdout)["events"]
        if e["data"]["type"] == "context/compaction"
    ]
    assert event["instructions"] == "Be short."
    # the first run's answer and the summary call (the script's first reply again): 35 each
    assert json.loads(exported.stdout)["usage"]["total"] == 70
    summary = event["messages"][0]
    assert summary["source"] == "compaction-summary"
    assert summary["content"][0]["text"].endswith("The user greeted twice.")
    # the summary call replayed the script's first reply; nothing left to compact now
    again = _agentrig("sessions", "compact", "-c", "agentrig.toml", session, cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, "nothing to compact\n")
    unknown = _agentrig("sessions", "compact", "-c", "agentrig.toml", "ses_nope", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "error [cli.unknown_session]" in unknown.stderr
