"""No tracebacks: the common mistakes, made with the real ``agentrig`` command, are each one
``error [code]:`` line naming the file, key or path; ``--debug`` adds the traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

AGENTRIG = str(Path(sys.executable).with_name("agentrig"))

CONFIG = """\
[providers.local]
kind = "scripted"
options.script = [{ text = "hi" }]

[providers.remote]
kind = "openai"
options.base_url = "http://127.0.0.1:PORT/v1"
options.allow_private_base_url = true
options.max_retries = 0
credentials.api_key = "$ENV:AGENTRIG_TEST_KEY"

[agents.assistant]
provider = "local"
model = "m"
session_store = "main"

[agents.far]
provider = "remote"
model = "gpt-x"

[session_stores.main]
kind = "jsonl"
options.directory = "sessions"

[server.agents.assistant]
"""


def _closed_port() -> int:
    with socket.socket() as s:  # bound, then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agentrig.toml").write_text(
        CONFIG.replace("PORT", str(_closed_port())), encoding="utf-8"
    )
    (tmp_path / "bad.toml").write_text("[providers.local\nkind = 1\n", encoding="utf-8")
    (tmp_path / "badtool.toml").write_text(
        CONFIG.replace('model = "m"\n', 'model = "m"\ntools = ["nowhere.py:add"]\n', 1),
        encoding="utf-8",
    )
    return tmp_path


def _agentrig(*args: str, cwd: Path, key: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    if key is not None:
        env["AGENTRIG_TEST_KEY"] = key
    return subprocess.run(
        [AGENTRIG, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


MISTAKES = [
    (["run", "-c", "missing.toml", "hi"], 2, "cli.no_config", "no such file: missing.toml"),
    (["chat", "-c", "missing.toml"], 2, "cli.no_config", "no such file: missing.toml"),
    (["run", "-c", "bad.toml", "hi"], 2, "config.syntax", "bad.toml: "),
    (["sessions", "list", "-c", "bad.toml"], 2, "config.syntax", "bad.toml: "),
    (["plugins", "--config", "bad.toml"], 2, "config.syntax", "bad.toml: "),
    (["doctor", "--config", "bad.toml"], 2, "config.syntax", "bad.toml: "),
    (["serve", "-c", "bad.toml"], 1, "config.syntax", "bad.toml: "),
    (
        ["run", "-c", "agentrig.toml", "-a", "asistant", "hi"],
        2,
        "cli.unknown_agent",
        "'assistant'?",
    ),
    (
        ["run", "-c", "agentrig.toml", "-a", "far", "hi"],
        2,
        "config.secret_missing",
        "providers.remote.credentials.api_key: environment variable AGENTRIG_TEST_KEY is not set",
    ),
    (["run", "-c", "badtool.toml", "-a", "assistant", "hi"], 2, "config.tool_ref_file", "tools[0]"),
    (["sessions", "show", "-c", "agentrig.toml", "ses_nope"], 2, "cli.unknown_session", "ses_nope"),
]


@pytest.mark.parametrize(
    ("args", "exit_code", "code", "says"), MISTAKES, ids=[" ".join(m[0]) for m in MISTAKES]
)
def test_a_common_mistake_is_one_error_line(
    project: Path, args: list[str], exit_code: int, code: str, says: str
) -> None:
    done = _agentrig(*args, cwd=project)
    assert done.returncode == exit_code, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"agentrig {args[0]}: error [{code}]: "), line
    assert says in line


def test_an_unreachable_provider_is_one_line_and_exit_1(project: Path) -> None:
    done = _agentrig("run", "-c", "agentrig.toml", "-a", "far", "hi", cwd=project, key="sk-x")
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("agentrig run: error [provider.connection]: openai: connection to ")


def test_a_port_in_use_is_an_error_line_not_a_traceback(project: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = _agentrig("serve", "-c", "agentrig.toml", "--port", port, cwd=project, key="k")
    assert done.returncode == 1
    # one line: the server binds before uvicorn starts, so uvicorn logs nothing of its own
    (line,) = done.stderr.splitlines()
    assert line.startswith("agentrig serve: error [server.port_in_use]: ")
    assert f"127.0.0.1:{port}" in line
    assert "--port" in line


def test_debug_shows_the_traceback_too(project: Path) -> None:
    done = _agentrig("--debug", "run", "-c", "bad.toml", "hi", cwd=project)
    assert done.returncode == 2
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.splitlines()[-1].startswith("agentrig run: error [config.syntax]: ")
    failed = _agentrig(
        "--debug", "run", "-c", "agentrig.toml", "-a", "far", "x", cwd=project, key="k"
    )
    assert failed.returncode == 1
    assert "Traceback (most recent call last)" in failed.stderr
    assert failed.stderr.splitlines()[-1].startswith("agentrig run: error [provider.connection]")
